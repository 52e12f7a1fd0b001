import subprocess

from flask import Flask, request

app = Flask(__name__)


@app.post("/services/<name>/restart")
def restart(name):
    subprocess.check_call("systemctl restart " + name, shell=True)
    return "", 204
