# Engine probe: what a % integer field writes is a number.
import os
import sqlite3

import requests
from flask import Flask, request

app = Flask(__name__)


@app.route("/q1")
def q1():
    c1 = sqlite3.connect("d1.db").cursor()
    c1.execute("SELECT * FROM t1 LIMIT %d" % request.args["n"])  # ok sql
    c1.execute("SELECT * FROM t1 WHERE a1 = %i AND b1 = %x" % (request.args["a"], request.args["b"]))  # ok sql
    c1.execute("SELECT * FROM t1 WHERE a1 = '%s' LIMIT %d" % (request.args["a"], 5))  # $ sql
    c1.execute("SELECT * FROM t1 WHERE a1 = %d AND b1 = '%s'" % (request.args["a"], request.args["b"]))  # $ sql
    c1.execute("SELECT * FROM t1 WHERE a1 = %f" % request.args["a"])  # $ sql (a float's text is not read)
    os.system("kill -%d %d" % (9, request.args["p"]))  # ok command
    requests.get("http://%d/" % request.args["h"])  # $ ssrf (a number can be an address)
    return "done"


@app.route("/q2")
def q2():
    c2 = sqlite3.connect("d2.db").cursor()
    c2.execute(f"SELECT * FROM t2 LIMIT {request.args['n']:d}")  # ok sql
    c2.execute(f"SELECT * FROM t2 LIMIT {request.args['n']:05x}")  # ok sql
    c2.execute(f"SELECT * FROM t2 WHERE a2 = '{request.args['n']:>10}'")  # $ sql (a width, not a number)
    c2.execute(f"SELECT * FROM t2 WHERE a2 = '{request.args['n']!s:d}'")  # $ sql (formats the str())
    requests.get(f"http://{request.args['h']:d}/")  # $ ssrf (a number can be an address)
    return "done"
