# Engine probe: a dict built here yields its keys when iterated; outside data in its values does
# not make its keys outside data, a key computed from outside data does.
import os

from flask import Flask, request

app = Flask(__name__)


@app.route("/columns")
def columns():
    given = request.args["v"]
    record = {"email": given, "name": "x"}
    os.system(" ".join(key for key in record))  # ok command
    os.system(" ".join(record.keys()))  # ok command
    os.system(" ".join(record.values()))  # $ command
    for key in record:
        os.system("echo " + key)  # ok command
    chosen = {given: 1}
    os.system(" ".join(key for key in chosen))  # $ command
    for key in {"a": 1, request.args["k"]: 2}:
        os.system("echo " + key)  # $ command
    stored = {"id": 1}
    stored[given] = "x"
    for key in stored:
        os.system("echo " + key)  # $ command (a key stored from outside data)
    return "done"


@app.route("/values")
def stored_values():
    held = {}
    held[request.args["k"]] = request.args["x"]
    for each in held.values():
        os.system(each)  # $ command (stored under a computed key)
    return "done"
