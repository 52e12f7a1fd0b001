import os

from flask import Flask, request

app = Flask(__name__)


@app.post("/traceroute")
def traceroute():
    target = request.form["target"]
    status = os.system("traceroute -m 10 " + target)
    return {"status": status}
