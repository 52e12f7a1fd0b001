# Engine probe: a name the class does not define may be a method of a subclass or mixin (the
# template-method pattern): the call may keep its argument in the instance.
import os

from flask import Flask, request

app = Flask(__name__)


class Runner:
    def __init__(self):
        self.data = "x"

    def start(self, value):
        self.on_value(value)
        os.system("echo " + self.data)  # $ command


class KeepMixin:
    def on_value(self, value):
        self.data = value


class Job(KeepMixin, Runner):
    pass


@app.route("/a")
def a():
    Job().start(request.args["x"])
    return "ok"
