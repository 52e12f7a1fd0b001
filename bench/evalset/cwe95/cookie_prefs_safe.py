import json

from flask import Flask, request

app = Flask(__name__)


@app.route("/prefs")
def prefs():
    raw = request.cookies.get("prefs", "{}")
    settings = json.loads(raw)
    return settings
