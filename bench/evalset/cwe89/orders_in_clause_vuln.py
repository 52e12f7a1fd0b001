from flask import Flask, request

from .db import cursor

app = Flask(__name__)


@app.post("/orders/lookup")
def lookup():
    ids = request.json["ids"]
    query = "SELECT id, total FROM orders WHERE id IN (" + ",".join(ids) + ")"
    cur = cursor()
    cur.execute(query)
    return {"orders": cur.fetchall()}
