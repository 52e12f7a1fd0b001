import os

from flask import Flask, request

app = Flask(__name__)


@app.post("/logs/search")
def search_logs():
    pattern = request.form.get("q", "")
    with os.popen("grep -n %s /var/log/app/current.log" % pattern) as pipe:
        lines = pipe.read().splitlines()
    return {"lines": lines[:100]}
