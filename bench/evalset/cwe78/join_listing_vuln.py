import os

from flask import Flask, request

app = Flask(__name__)


@app.route("/ls")
def ls():
    cmd = " ".join(["ls", "-la", request.args["d"]])
    return os.popen(cmd).read()
