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


class _Runner:
    def __init__(self, db):
        self.db = db

    def execute(self, sql, params=None):
        return self._wrapped(sql, params, self._execute)

    def _wrapped(self, sql, params, executor):
        return executor(sql, params)

    def _execute(self, sql, params):
        return self.db.execute(sql, params)  # ok sql (the parameters are bound, not the SQL text)

    def _run(self, sql):
        return self.db.execute(sql)  # $ sql (a bound method called through a name, with request data)


@app.route("/bound")
def bound_methods():
    import sqlite3

    runner = _Runner(sqlite3.connect("app.db"))
    runner.execute("SELECT * FROM t WHERE a = ?", (request.args["a"],))
    step = runner._run
    step(request.args["q"])
    return "ok"


@app.route("/bound-library-method")
def bound_library_method():
    import sqlite3

    run = sqlite3.connect("app.db").cursor().execute
    run("SELECT * FROM t WHERE n = '%s'" % request.args["n"])  # $ sql (cursor.execute read, then called)
    run("SELECT * FROM t WHERE n = ?", (request.args["n"],))  # ok sql
    return "ok"


@app.route("/mapped")
def mapped():
    commands = request.args.getlist("c")
    list(map(os.system, commands))  # $ command (map calls os.system with each item)
    list(map(os.system, ["ls", "pwd"]))  # ok command
    for line in map(str.strip, commands):
        os.popen(line)  # $ command (what map yields: str.strip of an item)
    for line in filter(None, commands):
        subprocess.call(line, shell=True)  # $ command (filter yields the items)
    return "ok"
