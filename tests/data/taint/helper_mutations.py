# Engine probe: what a helper adds to an object its caller passed (a list, a dict, an object's
# attribute) is in the caller's object after the call; a helper that copies first adds nothing.
import sqlite3
import subprocess

from flask import Flask, request

app = Flask(__name__)


def add_clause(clauses, text):
    clauses.append(text)


def set_option(options, name, value):
    options[name] = value


def extend_with(argv, value):
    argv += ["--name", value]


def through(clauses, text):
    add_clause(clauses, text)


def copied(clauses, text):
    clauses = list(clauses)
    clauses.append(text)
    return clauses


class Query:
    def __init__(self):
        self.where = []
        self.options = {}

    def filter(self, text):
        self.where.append(text)

    def option(self, name, value):
        self.options[name] = value

    def more(self, text):
        self.where += [text]

    def sql(self):
        return "SELECT * FROM t WHERE " + " AND ".join(self.where)

    def settings(self):
        return ",".join(self.options.values())


def narrowed(query: Query, text):
    query.filter(text)


@app.route("/helpers")
def helpers():
    db = sqlite3.connect("app.db")
    clauses = ["1 = 1"]
    add_clause(clauses, request.args["q"])
    db.execute(" AND ".join(clauses))  # $ sql
    options = {"a": "1"}
    set_option(options, "b", request.args["q"])
    db.execute("SELECT " + options["b"])  # $ sql
    argv = ["ls"]
    extend_with(argv, request.args["q"])
    subprocess.run(" ".join(argv), shell=True)  # $ command
    nested = ["1 = 1"]
    through(nested, request.args["q"])
    db.execute(" AND ".join(nested))  # $ sql
    kept = ["1 = 1"]
    copied(kept, request.args["q"])
    db.execute(" AND ".join(kept))  # ok sql
    vector = ["git", "clone", "--"]
    add_clause(vector, request.args["url"])
    subprocess.run(vector)  # ok command (the program is still git, the URL after "--")
    settings = {"sql": "SELECT 1"}
    set_option(settings, "user", request.args["u"])
    db.execute(settings["sql"])  # ok sql (another key)
    return "ok"


@app.route("/objects")
def objects():
    db = sqlite3.connect("app.db")
    query = Query()
    query.filter(request.args["q"])
    db.execute(query.sql())  # $ sql
    other = Query()
    other.option("x", request.args["q"])
    db.execute("SELECT " + other.settings())  # $ sql
    grown = Query()
    grown.more(request.args["q"])
    db.execute(grown.sql())  # $ sql
    passed = Query()
    narrowed(passed, request.args["q"])
    db.execute(passed.sql())  # $ sql
    clean = Query()
    clean.filter("id = 1")
    db.execute(clean.sql())  # ok sql
    return "ok"
