# Engine probe: a method called on a parameter whose type only the caller knows is the sink
# of the type the caller passes (``deferred_calls``): a logger, an HTTP session, given to a
# helper, kept on an instance, or passed on through another helper first. What the caller
# passes decides: an object of the program's own class, or a dict, makes no sink.
import logging

import requests
from flask import Flask, request

app = Flask(__name__)


def u1(a, b):
    a.info(b)  # $ log


def u2(c, d):
    return c.get(d, timeout=5).status_code  # $ ssrf


def u3(e, f):
    return u2(e, f)


class K1:
    def __init__(self, g, h):
        self.g = g
        self.h = h

    def m1(self, i):
        self.g.warning("%s", i)  # $ log
        return self.h.post(i)  # $ ssrf


class K2:
    def warning(self, *j):
        return j

    def post(self, k):
        return k

    def info(self, k):
        return k


def u4(a, b):
    a.info(b)  # ok log


def u5(c, d):
    return c.get(d)  # ok ssrf


def u6(a, b):
    a.error("%s", "fixed")  # ok log
    return b


@app.route("/r1")
def r1():
    u1(logging.getLogger(__name__), request.args["p"])
    return "done"


@app.route("/r2")
def r2():
    u3(requests.Session(), request.args["p"])
    return "done"


@app.route("/r3")
def r3():
    K1(logging.getLogger("x"), requests.Session()).m1(request.args["p"])
    return "done"


@app.route("/r4")
def r4():
    u4(K2(), request.args["p"])
    K1(K2(), K2()).m1("constant")
    u5({"p": 1}, request.args["p"])
    return "done"


@app.route("/r5")
def r5():
    return u6(logging.getLogger(__name__), request.args["p"])  # $ xss
