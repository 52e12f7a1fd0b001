# Engine probe: functions reached through containers and class attributes (dispatch tables,
# static methods), and constants kept per key on a class.
import os
import subprocess

from flask import Flask, request

app = Flask(__name__)
ACTIONS = {"run": os.system, "show": print}


def spawn(line):
    subprocess.call(line, shell=True)  # $ command (reached through Tools.spawner and the local table)


class Tools:
    launch = staticmethod(os.popen)
    spawner = staticmethod(spawn)
    table = {"run": os.system}
    presets = {"list": "ls -l", "where": "pwd"}


@app.route("/dispatch")
def dispatch():
    given = request.args["q"]
    ACTIONS[request.args["action"]](given)  # $ command (any function of the table may be called)
    ACTIONS[given]("uptime")  # ok command
    Tools.launch(given)  # $ command
    Tools().launch(given)  # $ command
    Tools.table["run"](given)  # $ command
    Tools.spawner(given)
    local = {"a": spawn, "b": len}
    local[request.args["action"]](given)
    return "done"


@app.route("/presets")
def presets():
    os.system(Tools.presets.get(request.args["p"], "true"))  # ok command (one of the class's constants)
    os.system(Tools.presets[request.args["p"]])  # ok command
    return "done"


def _quoted(text):
    return "'" + text.replace("'", "") + "'"


def _remove(path):
    os.remove(path)  # $ path (called by the loop over the steps)


@app.route("/steps")
def steps():
    target = request.args["target"]
    for step in (_quoted, _remove):
        step(target)
    return "done"


def _purge(path):
    os.remove(path)  # $ path (TOOLS.get with the request's key)


def _echo(text):
    return text


def _shell_job(line):
    subprocess.call(line, shell=True)  # $ command (a loop over JOBS.values())


def _unlink(path):
    os.unlink(path)  # ok path (only LINKS.get("echo") is called)


TOOLS = {"purge": _purge, "echo": _echo}
JOBS = {"shell": _shell_job}
LINKS = {"unlink": _unlink, "echo": _echo}


@app.route("/tools")
def tools():
    TOOLS.get(request.args["tool"], _echo)(request.args["arg"])
    for job in JOBS.values():
        job(request.args["line"])
    LINKS.get("echo")(request.args["path"])
    return "done"
