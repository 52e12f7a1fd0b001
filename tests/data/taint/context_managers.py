# Engine probe: `with obj as x` binds x to what the __enter__ (or __aenter__) of obj's class
# returns, which need not be obj (a wrapper handing out a library object it opened).
import asyncio
import sqlite3
import subprocess

from flask import Flask, request

app = Flask(__name__)


class Loop:
    def __enter__(self):
        self.loop = asyncio.new_event_loop()
        return self.loop

    def __exit__(self, *exc):
        self.loop.close()


class Database:
    def __init__(self, path):
        self.path = path

    async def __aenter__(self):
        self.connection = sqlite3.connect(self.path)
        return self.connection.cursor()

    async def __aexit__(self, *exc):
        self.connection.close()


class Runner:
    def __init__(self, line):
        self.line = line

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self):
        return subprocess.run(self.line, shell=True)  # $ command


class Constant:
    def __enter__(self):
        return "ls -l"

    def __exit__(self, *exc):
        return False


@app.route("/loop")
def with_loop():
    with Loop() as loop:
        loop.run_until_complete(loop.subprocess_shell(asyncio.SubprocessProtocol, request.args["c"]))  # $ command
    return "ok"


@app.route("/db")
async def with_database():
    async with Database("app.db") as cursor:
        cursor.execute("SELECT * FROM t WHERE n = '%s'" % request.args["n"])  # $ sql
    return "ok"


@app.route("/self")
def with_self():
    with Runner(request.args["c"]) as runner:
        runner.run()
    with Constant() as line:
        subprocess.run(line, shell=True)  # ok command
    return "ok"


class Timer:
    def __enter__(self):
        self.started = 0
        return self

    def __exit__(self, *exc):
        return False


class Job:
    def __init__(self, settings):
        self.settings = settings

    def __enter__(self):
        self.line = request.args["c"]
        return self

    def __exit__(self, *exc):
        return False


class Settings:
    def __init__(self):
        self.line = "uptime"


timer = Timer()


@app.route("/timed")
def timed():
    with timer:  # a manager named by a variable, whose __enter__ stores on self
        subprocess.run("ping -c1 " + request.args["h"], shell=True)  # $ command
    settings = Settings()
    with Job(settings) as job:
        subprocess.run(settings.line, shell=True)  # ok command (Job stored on itself, not on settings)
        subprocess.run(job.line, shell=True)  # $ command
    return "ok"
