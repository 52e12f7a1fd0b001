# Engine probe: a check proves nothing where the code after it also runs when it failed: inside
# contextlib.suppress (the exception that rejects the value is swallowed), or ahead of a loop
# exit other than the break that follows a passed check.
import contextlib
from urllib.parse import urlparse

from flask import Flask, abort, redirect, request

app = Flask(__name__)


def is_safe(url):
    return urlparse(url).netloc == "example.com"


@app.route("/a")
def a():
    target = request.args["next"]
    with contextlib.suppress(Exception):
        if not is_safe(target):
            abort(400)
    return redirect(target)  # $ redirect (abort's exception is swallowed)


@app.route("/b")
def b():
    target = request.args["next"]
    with contextlib.suppress(KeyError):
        extra = request.args["extra"]
    if not is_safe(target):
        abort(400)
    return redirect(target + extra)  # $ redirect (extra is outside data)


@app.route("/c")
def c():
    target = request.args["next"]
    count = 0
    while count < 3:
        count += 1
        if is_safe(target):
            break
    return redirect(target)  # $ redirect (the loop also ends when count reaches 3)


@app.route("/d")
def d():
    target = request.args["next"]
    while True:
        if is_safe(target):
            break
    return redirect(target)  # ok redirect (only the break after the check leaves the loop)


@app.route("/e")
def e():
    done = False
    while not done:
        done = request.args.get("more") != "1"
    return redirect(request.args["next"])  # $ redirect (the loop ends when done turns true)
