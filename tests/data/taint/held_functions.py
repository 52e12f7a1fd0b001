# Engine probe: a function an object holds in an attribute and a method of it calls (a strategy,
# a callback given to the constructor). What the method does depends on the function the
# instance it is called on holds, so each call is judged with that instance's functions.
import os
import subprocess

from flask import Flask, request

app = Flask(__name__)


def _run_it(command):
    subprocess.call(command, shell=True)  # $ command


def measure(text):
    return len(text)


class Task:
    def __init__(self, action):
        self.action = action

    def perform(self, value):
        return self.action(value)  # $ command (where the instance holds os.system)


@app.route("/run")
def run_view():
    Task(_run_it).perform(request.args["command"])
    return "ok"


@app.route("/system")
def system_view():
    task = Task(os.system)
    task.perform(request.args["command"])
    return "ok"


@app.route("/measure")
def measure_view():
    return str(Task(measure).perform(request.args["text"]))  # ok xss (this instance gives len(), a number)
