# Engine probe: the shape of an iterable's elements (tuples by position, builtins' iterators).
import os

from flask import Flask, request

app = Flask(__name__)


@app.route("/s1")
def s1():
    p1 = [(request.args["a"], "ls"), (request.args["b"], "pwd")]
    for d1, c1 in p1:
        os.system(c1)  # ok command
        os.system(d1)  # $ command
    for e1 in [request.args["a"], "ls"]:
        os.system(e1)  # $ command
    return "done"


@app.route("/s2")
def s2():
    for i1, t1 in enumerate(request.args.getlist("p")):
        os.system("echo %d" % i1)  # ok command
        os.system("echo " + t1)  # $ command
    for i2, t2 in enumerate(request.args.getlist("p"), start=1):
        os.system("echo %d" % i2)  # ok command
    return "done"


@app.route("/s3")
def s3():
    m1 = {"k1": request.args["x"], "k2": "v2"}
    for k1, v1 in m1.items():
        os.system(k1)  # ok command
        os.system(v1)  # $ command
    m2 = {}
    m2[request.args["k"]] = "v3"
    for k2, v2 in m2.items():
        os.system(k2)  # $ command (a key the request chose)
    for k3, v3 in request.args.items():
        os.system(k3)  # $ command
    return "done"


@app.route("/s4")
def s4():
    for n1, c2 in zip(request.args.getlist("p"), ["ls", "pwd"]):
        os.system(c2)  # ok command
        os.system(n1)  # $ command
    for w1 in zip(request.args.getlist("p"), ["ls"]):
        os.system(" ".join(w1))  # $ command (the whole tuple)
    return "done"
