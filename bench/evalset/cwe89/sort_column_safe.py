from flask import Flask, request

from .db import get_cursor

app = Flask(__name__)
SORTABLE = {"id", "title", "created_at"}


@app.route("/posts")
def posts():
    order = request.args.get("sort", "id")
    if order not in SORTABLE:
        order = "id"
    cur = get_cursor()
    cur.execute(f"SELECT id, title FROM posts ORDER BY {order}")
    return {"posts": cur.fetchall()}
