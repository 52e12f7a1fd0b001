# Engine probe: a URL's host checked against constants through a variable holding it.
from urllib.parse import urlparse

import requests
from flask import Flask, request

app = Flask(__name__)
PERMITTED = ("api.example.com", "cdn.example.com")


@app.route("/fetch")
def fetch():
    target = request.args["u"]
    domain = urlparse(target).hostname
    if domain not in PERMITTED:
        return "refused", 400
    requests.get(target)  # ok ssrf
    return "done"


@app.route("/fetch-one")
def fetch_one():
    target = request.args["u"]
    domain = urlparse(target).netloc
    if domain == "api.example.com":
        requests.get(target)  # ok ssrf
    requests.get(target)  # $ ssrf (not checked here)
    return "done"


@app.route("/fetch-other")
def fetch_other():
    target = request.args["u"]
    domain = urlparse(target).hostname
    target = request.args["v"]
    if domain not in PERMITTED:
        return "refused", 400
    requests.get(target)  # $ ssrf (the checked URL is not the one fetched)
    return "done"


@app.route("/fetch-scheme")
def fetch_scheme():
    target = request.args["u"]
    scheme = urlparse(target).scheme
    if scheme in ("http", "https"):
        requests.get(target)  # $ ssrf (the scheme says nothing of the host)
    if urlparse(target).path == "/api":
        requests.get(target)  # $ ssrf
    return "done"


@app.route("/fetch-case")
def fetch_case():
    target = request.args["u"]
    if urlparse(target).hostname.lower() in PERMITTED:
        requests.get(target)  # ok ssrf (a change of case keeps the host)
    domain = urlparse(target).netloc.casefold()
    if domain == "api.example.com":
        requests.get(target)  # ok ssrf
    if urlparse(target).hostname.lower().startswith("api"):
        requests.get(target)  # $ ssrf (api.attacker.example starts so too)
    return "done"


# A URL with no scheme names no server to fetch; a scheme allowed by name leaves every host open.
@app.route("/schemes")
def schemes():
    target = request.args["u"]
    if urlparse(target).scheme not in ("http", "https"):
        return "no"
    requests.get(target)  # $ ssrf
    local = request.args["v"]
    parts = urlparse(local)
    if parts.scheme:
        return "no"
    requests.get(local)  # ok ssrf
    return "done"
