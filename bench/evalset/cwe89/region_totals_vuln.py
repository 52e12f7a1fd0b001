from flask import Flask, request

from .db import get_cursor

app = Flask(__name__)


@app.route("/totals")
def totals():
    region = request.args.get("region", "eu")
    cur = get_cursor()
    cur.execute("SELECT id, total " + "FROM orders WHERE region = '" + region + "'")
    return {"totals": cur.fetchall()}
