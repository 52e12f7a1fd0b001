"""Values carried from one iteration of a loop into the next."""
import os
import subprocess

from flask import Flask, request

app = Flask(__name__)


@app.route("/previous")
def previous():
    command = "true"
    for name in request.args:
        os.system(command)  # $ command
        command = request.args[name]
    return "done"


@app.route("/chain")
def chain():
    first = second = "ls"
    for _ in range(3):
        subprocess.call(second, shell=True)  # $ command
        second = first
        first = request.form["cmd"]
    return "done"


@app.route("/last")
def last_before_break():
    found = "ls"
    while True:
        if os.path.exists("/tmp/stop"):
            break
        found = request.args["q"]
    os.system(found)  # $ command
    return "done"


@app.route("/fresh")
def fresh_each_time():
    for key in ("a", "b"):
        word = key.upper()
        os.system(word)  # ok command
        word = request.args[key]
    return "done"
