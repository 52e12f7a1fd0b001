# Engine probe: a compiled pattern's match checks a value as the module function with the same
# pattern does: the pattern is the text the receiver was compiled from, with its flags.
import os
import re

from flask import Flask, abort, request

app = Flask(__name__)
WORD = re.compile(r"[A-Za-z0-9_-]+")
ANCHORED = re.compile(r"^[a-z0-9]+$", re.IGNORECASE)
EVERY_LINE = re.compile(r"^[a-z0-9]+$", re.MULTILINE)
LOOSE = re.compile(r"[a-z0-9]+")


@app.route("/whole")
def whole():
    name = request.args["n"]
    if not WORD.fullmatch(name):
        abort(400)
    os.system("ls " + name)  # ok command
    return "done"


@app.route("/anchored")
def anchored():
    name = request.args["n"]
    if ANCHORED.match(name) is None:
        abort(400)
    os.system("ls " + name)  # ok command
    return "done"


@app.route("/multiline")
def multiline():
    name = request.args["n"]
    if not EVERY_LINE.match(name):
        abort(400)
    os.system("ls " + name)  # $ command
    return "done"


@app.route("/start-only")
def start_only():
    name = request.args["n"]
    if not LOOSE.match(name):
        abort(400)
    os.system("ls " + name)  # $ command
    return "done"


@app.route("/function-multiline")
def function_multiline():
    name = request.args["n"]
    if not re.match(r"^[a-z0-9]+$", name, re.M):
        abort(400)
    os.system("ls " + name)  # $ command
    return "done"


@app.route("/outside")
def outside_pattern():
    pattern = re.compile(request.args["p"])  # $ regex
    name = request.args["n"]
    if not pattern.fullmatch(name):
        abort(400)
    os.system("ls " + name)  # $ command
    return "done"
