# Engine probe: containers filled by methods, values carried by exceptions, format fields.
import os
import sqlite3
import subprocess

from flask import Flask, request

app = Flask(__name__)
SEEN = []


@app.route("/search")
def search():
    clauses = []
    if request.args.get("name"):
        clauses.append("name = '%s'" % request.args["name"])
    sql = "SELECT * FROM users WHERE " + " AND ".join(clauses)
    sqlite3.connect("app.db").execute(sql)  # $ sql
    return "ok"


@app.route("/ping")
def ping():
    argv = ["ping", "-c", "1"]
    argv.append(request.args["host"])
    subprocess.run(" ".join(argv), shell=True)  # $ command
    fixed = ["ping", "-c", "1"]
    fixed.append("localhost")
    subprocess.run(" ".join(fixed), shell=True)  # ok command
    return "ok"


@app.route("/error")
def error():
    try:
        raise ValueError(request.args["x"])
    except ValueError as problem:
        os.system("echo " + str(problem.args[0]))  # $ command
    return "ok"


@app.route("/fields")
def fields():
    os.system("ping {0.args[h]}".format(request))  # $ command
    os.execvp("sh", ["sh", "-c", request.args["h"]])  # $ command
    return "ok"


@app.route("/remember")
def remember():
    SEEN.append(request.args["v"])
    return "ok"


def replay():
    os.system(SEEN[0])  # $ command


@app.route("/shift")
def shift():
    parts = ["fixed", request.args["q"], "other"]
    parts.pop(0)
    sqlite3.connect("app.db").execute("SELECT '%s'" % parts[0])  # $ sql
    kept = ["fixed", request.args["q"]]
    kept.append("more")
    sqlite3.connect("app.db").execute("SELECT '%s'" % kept[0])  # ok sql
    moved = [request.args["q"], "fixed"]
    del moved[0]
    sqlite3.connect("app.db").execute("SELECT '%s'" % moved[0])  # $ sql
    return "ok"
