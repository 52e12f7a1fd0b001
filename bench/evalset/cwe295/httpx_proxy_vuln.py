import httpx
from flask import Flask, request

app = Flask(__name__)


@app.route("/preview")
def preview():
    url = request.args["url"]
    return httpx.get(url, verify=False, timeout=5).text
