# Engine probe: a variable declared with an annotation holds that type's objects, whatever its
# first value (``client: Client | None = None``, set for real by a start-up hook); a function
# whose return annotation names a class returns that class's objects, where its code does not
# show what it returns (a plugin registry's lookup).
import importlib
import os
import re
import sqlite3
from typing import Final, Optional

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


class Archiver:
    def pack(self, folder):
        os.system("tar czf out.tgz " + folder)  # $ command


def archiver(name) -> Archiver:
    return getattr(importlib.import_module(name), "plugin")


def plain(name):
    return getattr(importlib.import_module(name), "plugin")


@app.route("/pack")
def pack():
    archiver("tools.archive").pack(request.args["folder"])
    plain("tools.other").pack(request.args["folder"])


def _loaded(name):
    return getattr(importlib.import_module(name), "plugin")


@app.route("/pack-checked")
def pack_checked():
    plugin = _loaded(request.args["kind"])
    if not isinstance(plugin, Compressor):
        raise TypeError("not a compressor")
    plugin.squeeze(request.args["folder"])


class Compressor:
    def squeeze(self, folder):
        os.system("gzip -r " + folder)  # $ command


LEADING_TABS: Final = re.compile(r"\s*\t+\s*(\S)")  # an annotated constant keeps its pattern


@app.route("/indent", methods=["POST"])
def indent():
    found = LEADING_TABS.match(request.get_data(as_text=True))  # $ slow-regex
    return "indented" if found else "flat"
