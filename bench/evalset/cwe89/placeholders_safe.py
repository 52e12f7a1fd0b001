from flask import Flask, request

from .db import connection

app = Flask(__name__)


@app.post("/tags")
def by_tags():
    tags = request.json["tags"]
    listed = ", ".join("?" for _ in tags)
    rows = connection().execute(f"SELECT id FROM articles WHERE tag IN ({listed})", tags).fetchall()
    return {"ids": [r[0] for r in rows]}
