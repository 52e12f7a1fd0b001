# Engine probe: a generator function's call is an iterator of what it yields, not the yielded value.
import contextlib
import os

from flask import Flask, request

app = Flask(__name__)


def g1(xs):
    for x in xs:
        yield (x, "ls")


def g2(xs):
    yield from g1(xs)


def g3(x):
    yield "pwd"
    return x


@contextlib.contextmanager
def g4(x):
    yield x


async def g5(xs):
    for x in xs:
        yield ("ls", x)


@app.route("/s1")
def s1():
    for d1, c1 in g1(request.args.getlist("p")):
        os.system(c1)  # ok command
        os.system(d1)  # $ command
    for d2, c2 in g2(request.args.getlist("p")):
        os.system(c2)  # ok command
        os.system(d2)  # $ command
    for t1 in g1(request.args.getlist("p")):
        os.system(" ".join(t1))  # $ command (the whole tuple)
    os.system(" ".join(x for x, y in g1(request.args.getlist("p"))))  # $ command
    return "done"


@app.route("/s2")
def s2():
    for c3 in g3(request.args["a"]):
        os.system(c3)  # ok command (a generator's return value is not what it yields)
    with g4(request.args["a"]) as c4:
        os.system(c4)  # $ command
    return "done"


@app.route("/s3")
async def s3():
    async for c5, d5 in g5(request.args.getlist("p")):
        os.system(c5)  # ok command
        os.system(d5)  # $ command
    return "done"
