# Engine probe: what re.sub leaves: every character outside a negated class deleted, or every character of a class.
import re
import subprocess
from pathlib import Path

from flask import Flask, request

app = Flask(__name__)
BASE = "/srv/d1"


@app.route("/r1")
def r1():
    n1 = re.sub(r"[^\w _\-]+", "", request.args["n"])
    return open(BASE + "/" + n1).read()  # ok path


@app.route("/r2")
def r2():
    n1 = re.sub(r"[^\w.\-]+", "", request.args["n"])
    return open(BASE + "/" + n1 + "/d2.txt").read()  # $ path (a dot is left: ".." climbs)


@app.route("/r3")
def r3():
    n1 = re.sub("[^A-Za-z0-9]", "_", request.args["n"])
    subprocess.call("echo " + n1, shell=True)  # ok command
    return (Path(BASE) / n1).read_text()  # ok path


@app.route("/r4")
def r4():
    n1 = re.sub(r"[^\w ]", "", request.args["n"])
    subprocess.call("echo " + n1, shell=True)  # $ command (a space is left)
    return "done"


@app.route("/r5")
def r5():
    n1 = re.sub(r"[^a-z]", "", request.args["n"], flags=re.I)
    n2 = re.sub(r"[^a-z]", r"\g<0>", request.args["n"])
    n3 = re.sub(r"[a-z/.]", "", request.args["n"])
    n4 = re.sub(r"[^a-z]", "", request.args["n"], 1)
    subprocess.call("echo " + n1, shell=True)  # $ command (flags not read)
    subprocess.call("echo " + n2, shell=True)  # $ command (a group reference puts text back)
    subprocess.call("echo " + n3, shell=True)  # $ command (a class deleted, not the rest)
    subprocess.call("echo " + n4, shell=True)  # $ command (only the first one deleted)
    return "done"


@app.route("/r6")
def r6():
    import requests

    n1 = re.sub(r"[^a-z0-9-]+", "", request.args["n"])
    requests.get("http://" + n1 + "/status")  # $ ssrf (letters still name a host)
    return "done"


P1 = re.compile(r"[^\w-]")
P2 = re.compile(r"[^a-z]", re.I)


@app.route("/r7")
def r7():
    n1 = P1.sub("", request.args["n"])
    n2 = P2.sub("", request.args["n"])
    subprocess.call("echo " + n1, shell=True)  # ok command
    subprocess.call("echo " + n2, shell=True)  # $ command (IGNORECASE keeps the other case: flags not read)
    return "done"


@app.route("/r8")
def r8():
    import logging

    from flask import make_response

    v1 = re.sub(r"[\r\n]+.*", "", request.args["v"])
    v2 = re.sub(rb"[\r\n]+.*", b"", request.args["v"].encode())
    v3 = re.sub(r"[\r\n]x", "", request.args["v"])
    v4 = re.sub(r"[\r\n]", " \n", request.args["v"])
    logging.warning("got %s", v1)  # ok log
    logging.warning("got %s", v3)  # $ log (only a break followed by x is deleted)
    logging.warning("got %s", v4)  # $ log (the replacement puts a break back)
    r1 = make_response("ok")
    r1.headers["X-V1"] = v1  # ok header
    r1.headers["X-V2"] = v2  # ok header
    r1.headers["X-V3"] = v3  # $ header
    return r1
