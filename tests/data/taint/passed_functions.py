# Engine probe: a function passed to a helper of the code that calls it: the helper does what
# the function does with the arguments it gives it.
import os
import subprocess

from flask import Flask, request

app = Flask(__name__)


def with_retries(action, value, times=3):
    for _ in range(times):
        try:
            return action(value)  # $ command (os.system, passed by retry())
        except OSError:
            continue
    return None


def quoted(value):
    return "'" + value.replace("'", "") + "'"


def run_shell(line):
    return subprocess.run(line, shell=True)  # $ command (reached through with_retries)


def keep(value):
    return value


@app.route("/retry")
def retry():
    text = request.args["t"]
    with_retries(os.system, text)
    with_retries(run_shell, text)
    with_retries(os.system, "uptime")  # ok command (a constant)
    shown = with_retries(keep, text)
    os.system(shown)  # $ command (the helper returns what keep() returns)
    safe = with_retries(len, text)
    os.system("ls " + str(safe))  # ok command (len() of it is a number)
    return "ok"
