import re

from flask import Flask, abort, request

from .db import cursor

app = Flask(__name__)


@app.route("/report")
def report():
    region = request.args["region"]
    query = f"""
        SELECT id, email
        FROM customers
        WHERE region = '{region}'
    """
    cur = cursor()
    cur.execute(query)
    return {"rows": cur.fetchall()}
