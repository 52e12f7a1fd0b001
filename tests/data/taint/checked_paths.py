# Engine probe: a check written on an access path (a variable, then attributes, constant
# subscripts and .get(constant) reads) holds for the same path read again on the branches it covers.
import operator
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


@app.route("/m")
def m():
    items = request.args.getlist("u")
    if not is_safe(items[0]):
        abort(400)
    items.pop(0)
    return redirect(items[0])  # $ redirect (the list shifted after the check)


@app.route("/n")
def n():
    state = request.get_json()
    if not is_safe(state.get("d")["next"]):
        abort(400)
    state.get("d")["next"] = request.args["u"]
    return redirect(state.get("d")["next"])  # $ redirect (stored into through a read)


@app.route("/o")
def o():
    state = request.get_json()
    if not is_safe(state["next"]):
        abort(400)
    operator.setitem(state, "next", request.args["u"])
    return redirect(state["next"])  # $ redirect (given to a call that may change it)


@app.route("/p")
def p():
    state = request.get_json()
    if not is_safe(state["next"]):
        abort(400)
    match request.get_json(force=True):
        case state:
            pass
    return redirect(state["next"])  # $ redirect (a match capture rebinds it)


@app.route("/q")
def q():
    state = request.get_json()
    if not is_safe(state["next"]):
        abort(400)
    [state := request.get_json(force=True) for _ in range(1)]
    return redirect(state["next"])  # $ redirect (a comprehension's walrus rebinds it)


@app.route("/r")
def r():
    state = request.get_json()
    if not is_safe(state["next"]):
        abort(400)

    def refill():
        nonlocal state
        state = request.get_json(force=True)
    refill()
    return redirect(state["next"])  # $ redirect (a closure rebinds it)


@app.route("/s")
def s():
    state = request.get_json()
    if not is_safe(state["next"]):
        abort(400)
    alias = state
    alias["next"] = request.args["u"]
    return redirect(state["next"])  # $ redirect (changed through another name)


@app.route("/t")
def t():
    state = request.get_json()
    if not is_safe(state["next"]):
        abort(400)
    exec("state['next'] = request.args['u']")
    return redirect(state["next"])  # $ redirect (code run from text may change it)


@app.route("/u")
def u():
    state = request.get_json()
    for _ in range(3):
        if not is_safe(state["urls"][0]):
            abort(400)
        redirect(state["urls"][0])  # ok redirect (checked again in every round)
        state["urls"].pop(0)
    return redirect(state["next"])  # $ redirect
