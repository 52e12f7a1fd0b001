import subprocess

from flask import Flask, request

app = Flask(__name__)
SERVICES = ("nginx", "gunicorn", "celery")


@app.post("/services/<name>/restart")
def restart(name):
    if name not in SERVICES:
        return "unknown service", 404
    subprocess.check_call("systemctl restart " + name, shell=True)
    return "", 204
