# Engine probe: a function of the analysed code that raises unless its argument passed a check
# is a validator: once a call of it, made as a statement, has returned, the check holds.
import os
import re
import sqlite3

from flask import Flask, request

app = Flask(__name__)
NAME = re.compile(r"[A-Za-z0-9_]+")


def check_identifier(name):
    if not all(c.isalnum() or c == "_" for c in name):
        raise ValueError("only letters, digits and underscores")


def check_pattern(text, label="value"):
    if not NAME.fullmatch(text):
        raise ValueError(f"bad {label}")
    return None


def is_identifier(name):
    return name.isidentifier()


def report(name):
    print("checking", name)


def check_sometimes(name, strict):
    if strict and not name.isidentifier():
        raise ValueError(name)


class Store:
    def __init__(self, path):
        self.connection = sqlite3.connect(path)

    def check(self, name):
        if not name.isidentifier():
            raise ValueError(name)

    def savepoint(self, name):
        self.check(name)
        self.connection.execute(f"SAVEPOINT {name}")  # ok sql

    def release(self, name):
        self.connection.execute(f"RELEASE {name}")  # $ sql


@app.route("/checked")
def checked():
    table = request.args["table"]
    check_identifier(table)
    connection = sqlite3.connect("app.db")
    connection.execute(f"SELECT * FROM {table}")  # ok sql
    word = request.args["word"]
    check_pattern(word, label="word")
    os.system("echo " + word)  # ok command
    return "done"


@app.route("/not-checked")
def not_checked():
    table = request.args["table"]
    is_identifier(table)  # a predicate whose result is dropped proves nothing
    report(table)
    check_sometimes(table, strict=False)
    connection = sqlite3.connect("app.db")
    connection.execute(f"SELECT * FROM {table}")  # $ sql
    return "done"


@app.route("/caught")
def caught():
    table = request.args["table"]
    try:
        check_identifier(table)
    except ValueError:
        pass
    connection = sqlite3.connect("app.db")
    connection.execute(f"SELECT * FROM {table}")  # $ sql
    return "done"


class Savepoint:
    """A check of an attribute (a validator given it, a guard, an allowlist) narrows the
    attribute, as one of a variable narrows the variable."""

    def __init__(self, name, connection):
        self.name = name
        self.connection = connection

    def rollback(self):
        check_identifier(self.name)
        self.connection.execute(f"ROLLBACK TO SAVEPOINT {self.name}")  # ok sql

    def release(self):
        if is_identifier(self.name):
            self.connection.execute(f"RELEASE SAVEPOINT {self.name}")  # ok sql

    def create(self):
        self.connection.execute(f"SAVEPOINT {self.name}")  # $ sql

    def release_checked(self):
        if not self.name.isidentifier():
            raise ValueError(self.name)
        self.connection.execute(f"RELEASE SAVEPOINT {self.name}")  # ok sql

    def create_known(self):
        if self.name not in ("first", "second"):
            return
        self.connection.execute(f"SAVEPOINT {self.name}")  # ok sql

    def create_other(self, other):
        if not other.name.isidentifier():
            raise ValueError(other.name)
        self.connection.execute(f"SAVEPOINT {self.name}")  # $ sql

    def rename(self, name):
        check_identifier(self.name)
        self.name = name
        self.connection.execute(f"SAVEPOINT {self.name}")  # $ sql
