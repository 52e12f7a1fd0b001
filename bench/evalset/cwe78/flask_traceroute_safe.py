import subprocess

from flask import Flask, request

app = Flask(__name__)


@app.post("/traceroute")
def traceroute():
    target = request.form["target"]
    status = subprocess.run(["traceroute", "-m", "10", "--", target]).returncode
    return {"status": status}
