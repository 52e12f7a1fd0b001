import sqlite3

from flask import Flask, g, request

app = Flask(__name__)


def db():
    return sqlite3.connect("/srv/app.db")


@app.route("/users")
def find_user():
    name = request.args.get("name", "")
    cur = db().cursor()
    cur.execute("SELECT id, email FROM users WHERE name = ?", (name,))
    return {"users": cur.fetchall()}
