# Engine probe: a method read from an instance and called later through a name runs on that
# instance (``step = job.run; step()``), and one a method picks from its own class
# (``parse = self._pick(method); parse()``, a dispatch on the request's method) runs on the
# picking method's instance.
import subprocess

from flask import Flask, request

app = Flask(__name__)


class _Request:
    def __init__(self, incoming):
        self.incoming = incoming
        parse = self._pick(incoming.method)
        parse()

    def _pick(self, method):
        if method == "POST":
            return self._post
        return self._get

    def _post(self):
        subprocess.run(self.incoming.get_data(), shell=True)  # $ command

    def _get(self):
        subprocess.run(["echo", "GET"])  # ok command


class _Task:
    def __init__(self, command):
        self.command = command

    def run(self):
        subprocess.run("nice " + self.command, shell=True)  # $ command


@app.route("/parse", methods=["GET", "POST"])
def parse():
    _Request(request)
    return "ok"


@app.route("/task")
def task():
    step = _Task(request.args["cmd"]).run
    step()
    return "ok"
