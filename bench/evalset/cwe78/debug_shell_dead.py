import os

from flask import Flask, request

app = Flask(__name__)


@app.route("/debug")
def debug():
    if False:
        os.system(request.args["cmd"])
    return "disabled"
