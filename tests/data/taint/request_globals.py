# Engine probe: a value stored on a library object named by a global (Flask's ``g``) is what the
# same function reads back from it, and what a view reads from it after a before_request hook
# stored it there, whichever is defined first.
import os
import sqlite3

from flask import Flask, g, request

app = Flask(__name__)


@app.route("/stash")
def stash():
    g.picked = request.args["p"]
    os.system("ls " + g.picked)  # $ command
    g.fixed = "-l"
    os.system("ls " + g.fixed)  # ok command
    return "done"


@app.route("/profile")
def profile():
    os.system("finger " + g.visitor)  # $ command (the hook stored the request's data)
    g.database.execute("SELECT * FROM t WHERE n = '" + request.args["n"] + "'")  # $ sql (a connection the hook opened)
    os.system("ls " + g.mode)  # ok command (the hook stored a constant)
    return "done"


@app.before_request
def load():
    g.visitor = request.cookies.get("visitor", "")
    g.database = sqlite3.connect("app.db")
    g.mode = "-l"


def remember(value):
    g.remembered = value  # a parameter's data: its callers are not known in a view


@app.route("/remembered")
def remembered():
    os.system("ls " + g.remembered)  # ok command
    return "done"


@app.route("/other")
def other():
    os.system("ls " + g.picked)  # ok command (another view's store: g lives for one request)
    os.system("ls " + g.settings["mode"])  # ok command (a constant under a constant key)
    os.system("ls " + g.settings["who"])  # $ command
    return "done"


@app.before_request
def configure():
    g.settings = {"mode": "-l", "who": request.args.get("who", "")}
