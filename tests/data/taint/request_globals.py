# Engine probe: a value stored on a library object named by a global (Flask's ``g``) is what the
# same function reads back from it.
import os

from flask import Flask, g, request

app = Flask(__name__)


@app.route("/stash")
def stash():
    g.picked = request.args["p"]
    os.system("ls " + g.picked)  # $ command
    g.fixed = "-l"
    os.system("ls " + g.fixed)  # ok command
    return "done"
