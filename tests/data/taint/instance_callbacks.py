# Engine probe: a value stored on an instance and called (a callback) is called without the
# instance, so what it is given is not kept in the instance; a method the class defines may keep it.
import os

from flask import Flask, request

app = Flask(__name__)


class Job:
    def __init__(self, callback):
        self.callback = callback
        self.label = "job"

    def start(self, value):
        self.callback(value)
        os.system("echo " + self.label)  # ok command (the instance holds only its constant)


class Keeper:
    def __init__(self):
        self.held = "nothing"

    def keep(self, value):
        self.held = value

    def start(self, value):
        self.keep(value)
        os.system("echo " + self.held)  # $ command (a method stores its argument)


class Box(dict):
    def start(self, value):
        self.remember(value)
        os.system("echo " + self["label"])  # $ command (a library base may define remember())


def with_keep(cls):
    def keep(self, value):
        self.held = value
    cls.keep = keep
    return cls


@with_keep
class Decorated:
    def __init__(self):
        self.held = "nothing"

    def start(self, value):
        self.keep(value)
        os.system("echo " + self.held)  # $ command (a class decorator may add the method)


@app.route("/a")
def a():
    Job(print).start(request.args["x"])
    Keeper().start(request.args["x"])
    Box(label="box").start(request.args["x"])
    Decorated().start(request.args["x"])
    return "ok"
