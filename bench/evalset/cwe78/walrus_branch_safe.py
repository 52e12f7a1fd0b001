import subprocess

from flask import Flask, request

app = Flask(__name__)


@app.post("/deploy")
def deploy():
    payload = request.get_json()
    if (branch := payload.get("branch")):
        subprocess.run(["git", "checkout", branch], check=True)
    return "ok"
