import subprocess

from flask import Flask, request

app = Flask(__name__)


@app.route("/ls")
def listing():
    path = request.args["dir"]
    out = subprocess.check_output(["ls", "-l", "--", path], shell=False)
    return out
