from flask import Flask, abort, request

from .db import get_cursor

app = Flask(__name__)
REGIONS = {"eu", "us", "apac"}


@app.route("/totals")
def totals():
    region = request.args.get("region", "eu")
    if region not in REGIONS:
        abort(400)
    cur = get_cursor()
    cur.execute("SELECT id, total " + "FROM orders WHERE region = '" + region + "'")
    return {"totals": cur.fetchall()}
