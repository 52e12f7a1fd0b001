# Engine probe: an attribute of the method's instance that a check validated is read back
# validated, and the instance's other attributes are not mixed into it.
import os

from flask import Flask, request

app = Flask(__name__)


def v1(t1):
    if not t1.isidentifier():
        raise ValueError(t1)


class C1:
    def __init__(self, n1, c1):
        self.n1 = n1
        self.c1 = c1

    def m1(self):
        v1(self.n1)
        os.system("touch " + self.n1)  # ok command (checked on the instance just before)
        os.system("touch " + self.c1)  # $ command


@app.route("/s2")
def s2():
    C1(request.args["n"], request.args["c"]).m1()
    return "done"
