import os
import shlex

from flask import Flask, request

app = Flask(__name__)


@app.route("/ls")
def ls():
    cmd = " ".join(["ls", "-la", shlex.quote(request.args["d"])])
    return os.popen(cmd).read()
