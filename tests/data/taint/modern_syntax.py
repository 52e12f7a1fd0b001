# Engine probe: syntax newer than Python 3.11 (PEP 701, 695, 758, 750) and match; the running
# interpreter may not parse this file, the version-independent parser does.
import os

from flask import Flask, request

app = Flask(__name__)

type Command = str


def first[T](items: list[T]) -> T:
    return items[0]


@app.route("/x")
def handler():
    data = {"cmd": request.args["cmd"], "fixed": "ls"}
    os.system(f"echo {data["cmd"]}")  # $ command
    os.system(f"{data["fixed"]}")  # ok command
    match request.args.get("mode"):
        case "a" as mode:
            os.system("run " + mode)  # ok command
        case other:
            os.system("run " + other)  # $ command
    try:
        os.system(first([request.args["x"]]))  # $ command
    except ValueError, TypeError:
        pass
    template = t"ls {request.args['y']}"
    return "ok"
