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


@app.route("/header")
def header():
    given = request.args["v"]
    flask.make_response(("a fixed body", {"X-Given": given}))  # ok xss (a header, not the body)
    return flask.make_response((given, {"X-Fixed": "1"}))  # $ xss


@app.route("/config")
def config():
    import configparser
    import os

    settings = configparser.ConfigParser()
    settings.add_section("s")
    settings.set("s", "fixed", "uptime")
    settings.set("s", "given", request.args["v"])
    os.system(settings.get("s", "fixed"))  # ok command (another key)
    os.system(settings.get("s", "given"))  # $ command
    return "ok"


@app.route("/exists")
def exists():
    import os

    name = request.args["name"]
    found = os.path.exists("/srv/files/" + name)  # $ path (an oracle on any file's existence)
    return "yes" if found or (pathlib.Path("/srv") / name).is_file() else "no"  # $ path
