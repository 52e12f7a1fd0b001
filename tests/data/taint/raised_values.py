# Engine probe: what an exception carries reaches the handler that catches it, raised here or
# in a function of the analysed code the try block called (directly or further down).
import os

from flask import Flask, request

app = Flask(__name__)


class R1(Exception):
    def __init__(self, u1):
        super().__init__(u1)
        self.u1 = u1


def f1(a1):
    if a1:
        raise R1(a1)
    return "fine"


def f2(a2):
    return f1(a2.strip())


def f3(a3):
    raise R1("constant")


@app.route("/s1")
def s1():
    try:
        f1(request.args["a"])
    except R1 as e1:
        os.system(e1.u1)  # $ command
    try:
        f2(request.args["b"])
    except R1 as e2:
        os.system(str(e2))  # $ command
    try:
        f3(request.args["c"])
    except R1 as e3:
        os.system(e3.u1)  # ok command (the exception holds a constant)
    try:
        raise R1(request.args["d"])
    except R1 as e4:
        os.system(e4.u1)  # $ command
    return "done"

