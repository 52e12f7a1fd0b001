import os

from flask import Flask, request

app = Flask(__name__)


@app.post("/deploy")
def deploy():
    payload = request.get_json()
    if (branch := payload.get("branch")):
        os.system(f"git fetch origin && git checkout {branch}")
    return "ok"
