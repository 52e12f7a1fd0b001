from flask import Flask, request

from .db import cursor

app = Flask(__name__)
ORDERINGS = {"new": "created_at DESC", "old": "created_at ASC", "top": "score DESC"}


@app.route("/feed")
def feed():
    ordering = ORDERINGS.get(request.args.get("o"), "created_at DESC")
    cur = cursor()
    cur.execute(f"SELECT id FROM stories ORDER BY {ordering} LIMIT 50")
    return {"ids": [r[0] for r in cur.fetchall()]}
