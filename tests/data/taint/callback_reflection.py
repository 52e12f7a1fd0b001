# Engine probe: a module that stores attributes by reflection may have bound a method to the
# name the call reads: the call may keep what it is given in the instance.
import os

from flask import Flask, request

app = Flask(__name__)


class Job:
    def __init__(self, callback):
        self.data = "x"
        self.callback = callback
        setattr(self, "callback", self.keep)

    def keep(self, value):
        self.data = value

    def start(self, value):
        self.callback(value)
        os.system("echo " + self.data)  # $ command


@app.route("/a")
def a():
    Job(print).start(request.args["x"])
    return "ok"
