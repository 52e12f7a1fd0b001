# Engine probe: a session key chosen by the request, a pathlib path joined with "/", and the
# random module's distributions as weak random numbers.
import pathlib
import random

import flask
from flask import Flask, request

app = Flask(__name__)


@app.route("/remember")
def remember():
    key = request.args["k"]
    flask.session[key] = "1"  # $ trust-boundary (the request picks which session entry is set)
    flask.session["seen"] = "1"  # ok trust-boundary
    flask.session["token"] = str(random.normalvariate(0, 1))  # $ secret
    flask.session["other"] = str(random.weibullvariate(1, 1))  # $ secret
    return "ok"


@app.route("/file")
def file():
    folder = pathlib.Path("/srv/files")
    wanted = folder / request.args["name"]
    fixed = folder / "index.txt"
    fixed.read_text()  # ok path
    return wanted.read_text()  # $ path $ xss (a file the request names, sent as HTML)
