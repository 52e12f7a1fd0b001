# Engine probe: a variable declared with an annotation holds that type's objects, whatever its
# first value (``client: Client | None = None``, set for real by a start-up hook).
import sqlite3
from typing import Optional

from flask import Flask, request

app = Flask(__name__)


class Store:
    def __init__(self, path: str) -> None:
        self.connection = sqlite3.connect(path)

    def rows(self, sql: str):
        return self.connection.execute(sql).fetchall()  # $ sql


store: Optional[Store] = None
backup: "Store | None" = None
connection: sqlite3.Connection = None


@app.before_first_request
def start() -> None:
    global store, backup, connection
    store = Store("app.db")
    backup = Store("backup.db")
    connection = sqlite3.connect("app.db")


@app.route("/orders")
def orders():
    customer = request.args["customer"]
    store.rows("SELECT * FROM orders WHERE customer = '" + customer + "'")
    backup.rows("SELECT * FROM orders WHERE customer = '%s'" % customer)
    return str(connection.execute("SELECT * FROM users WHERE name = '" + customer + "'").fetchall())  # $ sql
