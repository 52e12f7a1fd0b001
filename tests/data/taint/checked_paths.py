# Engine probe: a check written on an access path (a variable, then attributes, constant
# subscripts and .get(constant) reads) holds for the same path read again on the branches it covers.
from urllib.parse import urlparse

from flask import Flask, abort, redirect, request

app = Flask(__name__)


def is_safe(url):
    return urlparse(url).netloc == "example.com"


@app.route("/a")
def a():
    if not is_safe(request.args["next"]):
        abort(400)
    return redirect(request.args["next"])  # ok redirect


@app.route("/b")
def b():
    if urlparse(request.args.get("next")).netloc != request.host:
        abort(400)
    return redirect(request.args.get("next"))  # ok redirect


@app.route("/c")
def c():
    state = request.get_json()
    if urlparse(state["next"][0]).netloc != request.host:
        abort(400)
    return redirect(state["next"][0])  # ok redirect


@app.route("/d")
def d():
    state = request.get_json()
    if urlparse(state["next"][0]).netloc != request.host:
        abort(400)
    return redirect(state["other"][0])  # $ redirect


@app.route("/e")
def e():
    if not is_safe(request.args["next"]):
        abort(400)
    return redirect(request.args["back"])  # $ redirect


@app.route("/f")
def f():
    if request.args.get("mode"):
        if not is_safe(request.args["next"]):
            abort(400)
    return redirect(request.args["next"])  # $ redirect (checked on one branch only)


@app.route("/g")
def g():
    state = request.get_json()
    if not is_safe(state["next"]):
        abort(400)
    state = request.get_json(force=True)
    return redirect(state["next"])  # $ redirect (the variable was rebound)


@app.route("/h")
def h():
    state = request.get_json()
    if not is_safe(state["next"]):
        abort(400)
    state["next"] = request.args["u"]
    return redirect(state["next"])  # $ redirect (stored into after the check)


@app.route("/i")
def i():
    if is_safe(request.args["next"]):
        return redirect(request.args["next"])  # ok redirect
    return redirect(request.args["next"])  # $ redirect (the check failed here)


def refill(state):
    state["next"] = request.args["u"]


@app.route("/j")
def j():
    state = request.get_json()
    if not is_safe(state["next"]):
        abort(400)
    state.update(request.args)
    return redirect(state["next"])  # $ redirect (changed in place after the check)


@app.route("/k")
def k():
    state = request.get_json()
    if not is_safe(state["next"]):
        abort(400)
    refill(state)
    return redirect(state["next"])  # $ redirect (a helper stored into it after the check)
