# Engine probe: a value the constructor stores that is built from the instance (a method bound to
# it) may keep what it is given in the instance.
import os
import types

from flask import Flask, request

app = Flask(__name__)


def keep(self, value):
    self.data = value


class Job:
    def __init__(self):
        self.data = "x"
        self.callback = types.MethodType(keep, self)

    def start(self, value):
        self.callback(value)
        os.system("echo " + self.data)  # $ command


@app.route("/a")
def a():
    Job().start(request.args["x"])
    return "ok"
