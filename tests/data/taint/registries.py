# Engine probe: functions a decorator of the module stores in a global registry are what a
# dispatch through that registry may call (plugin tables, command and rule registries).
import functools
import os
import subprocess

from flask import Flask, request

app = Flask(__name__)
HANDLERS = {}
CONVERTERS = {}
CHECKS = []


def handler(name):
    def register(function):
        HANDLERS[name] = function
        return function
    return register


def _remember(key, function):
    HANDLERS[key] = function


def command(name):
    def register(function):
        _remember(name, function)  # registered through a helper
        return function
    return register


def converter(function):
    CONVERTERS[function.__name__] = function
    return function


def check(function):
    CHECKS.append(function)
    return function


def traced(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper


@handler("shell")
def _shell(line):
    return subprocess.check_output(line, shell=True)  # $ command


@handler("upper")
@traced
def _upper(line):
    return line.upper()


@command("remove")
def _remove(path):
    os.remove(path)  # $ path


@converter
def _evaluate(text):
    return eval(text)  # $ code


@check
def _exists(target):
    return os.path.exists("/srv/" + target)  # $ path (an existence oracle)


@check
def _unpack(target):
    return subprocess.call("tar xf " + target, shell=True)  # $ command


@traced
def _listing(folder):
    return os.listdir(folder)


@app.route("/run/<kind>")
def run(kind):
    return str(HANDLERS[kind](request.args["input"]))  # $ xss (what _upper returns)


@app.route("/convert")
def convert():
    return str(CONVERTERS[request.args["kind"]](request.args["text"]))  # $ xss (what _evaluate returns)


@app.route("/check")
def run_checks():
    target = request.args["target"]
    for each in CHECKS:
        each(target)
    return "checked"
