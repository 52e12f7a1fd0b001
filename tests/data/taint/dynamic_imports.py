# Engine probe: modules and functions reached by name at run time (Python's import semantics),
# the way a hostile repository hides a sink from a scanner that reads only ``import`` statements.
import functools
import importlib
import os
import subprocess
import sys
from importlib import import_module

from flask import Flask, request

app = Flask(__name__)
shell_run = functools.partial(subprocess.run, shell=True)
captured = functools.partial(subprocess.run, capture_output=True)


@app.route("/dynamic")
def dynamic():
    given = request.args["c"]
    __import__("os").system(given)  # $ command
    shell = __import__("os")
    shell.popen(given)  # $ command
    getattr(__import__("subprocess"), "call")(given, shell=True)  # $ command
    importlib.import_module("os").system(given)  # $ command
    runner = import_module("subprocess")
    runner.check_output(given, shell=True)  # $ command
    named = "os" + ".path"
    importlib.import_module(named).join("/srv", given)  # ok command (os.path.join runs nothing)
    __import__("os.path").system(given)  # $ command (__import__ returns the top-level package)
    __import__("os.path", None, None, ["join"]).join("/srv", given)  # ok command (the fromlist: os.path itself)
    __import__("subprocess", fromlist=["run"]).run(given, shell=True)  # $ command (a fromlist display)
    __import__("os.path", fromlist=[]).system(given)  # $ command (an empty fromlist: the top-level package)
    return "done"


@app.route("/namespaces")
def namespaces():
    given = request.args["c"]
    sys.modules["os"].system(given)  # $ command
    sys.modules["os.path"].join("/srv", given)  # ok command
    os.__dict__["system"](given)  # $ command
    vars(os)["popen"](given)  # $ command
    vars(os)["getcwd"]()  # ok command
    getattr(os, "sys" + "tem")(given)  # $ command (the name folds to a constant)
    chosen = "popen"
    getattr(os, chosen, None)(given)  # $ command
    getattr(os, "getcwd", None)()  # ok command
    return "done"


def _run_second(first, second):
    os.system(second)  # $ command (through the partial of a partial at /partials)


def _run_other(first, second):
    os.system(second)  # ok command (the outside value is bound to the first parameter)


@app.route("/partials")
def partials():
    given = request.args["c"]
    functools.partial(os.system)(given)  # $ command
    shell_run(given)  # $ command (shell=True bound where the partial was made)
    functools.partial(subprocess.run, given, shell=True)()  # $ command
    captured(["ls", given])  # ok command (an argument vector, no shell)
    captured(given, shell=True)  # $ command
    shell_run("ls")  # ok command
    wrapped = functools.partial(os.system)
    wrapped = functools.partial(wrapped)
    wrapped(given)  # $ command (a partial of a partial)
    functools.partial(functools.partial(_run_second, "safe"), given)()
    functools.partial(functools.partial(_run_other, given), "safe")()  # each partial binds its own arguments
    return "done"


@app.route("/constant")
def constant_command():
    __import__("os").system("ls")  # ok command (a constant)
    return "done"
