# Engine probe: functions of the analysed code that check their argument are guards where their
# result has the truth every return of theirs with that truth checked it for (predicates.py).
import os
from urllib.parse import urljoin, urlparse

from flask import Flask, current_app, redirect, request

app = Flask(__name__)
HOSTS = ("example.org", "www.example.org")


def is_allowed(url):
    if not url:
        return False
    return urlparse(url).netloc in HOSTS


def is_configured(url):
    return urlparse(url).netloc in current_app.config.get("ALLOWED_HOSTS", [])


def is_same_site(url):
    parts = urlparse(url)
    if not parts.scheme and not parts.netloc:
        return True
    return parts.netloc == request.host


def is_safe_url(target):
    ref_url = urlparse(request.host_url)
    test_url = urlparse(urljoin(request.host_url, target))
    return test_url.scheme in ("http", "https") and ref_url.netloc == test_url.netloc


def looks_local(url):
    if url.startswith("http"):
        return True  # nothing checked on this return
    return urlparse(url).netloc in HOSTS


def escapes(name):
    return ".." in name or name.startswith("/")


def first_allowed(url, other):
    return urlparse(other).netloc in HOSTS


class Checker:
    def allowed(self, url):
        return urlparse(url).netloc in HOSTS


@app.route("/next")
def after_login():
    target = request.args["next"]
    if is_allowed(target):
        return redirect(target)  # ok redirect
    if is_configured(target):
        return redirect(target)  # ok redirect (an allowlist from the settings)
    if is_same_site(target):
        return redirect(target)  # ok redirect (relative, or this site's own host)
    if is_safe_url(target):
        return redirect(target)  # ok redirect (its host, joined to this site's URL, is this site's)
    if looks_local(target):
        return redirect(target)  # $ redirect
    if first_allowed(target, "x"):
        return redirect(target)  # $ redirect (the check reads another argument)
    if Checker().allowed(target):
        return redirect(target)  # ok redirect (a method's check)
    if not is_allowed(target):
        return "refused"
    return redirect(target)  # ok redirect (found false, the view ended)


@app.route("/file")
def read_file():
    name = request.args["name"]
    if escapes(name):
        return open("/srv/" + name).read()  # $ path
    return open("/srv/" + name).read()  # ok path (no "..", and placed after a folder)


def blank_or_home(value):
    if not value:
        return True
    return value == "/home"


@app.route("/home")
def home():
    target = request.args["next"]
    if blank_or_home(target):
        return redirect(target)  # ok redirect (empty, or the one constant)
    return redirect(target)  # $ redirect (the check may be false: a comparison is no constant True)


def reassigns(url):
    url = "/"
    return url == "/"


@app.route("/reset")
def reset():
    target = request.args["next"]
    if reassigns(target):
        return redirect(target)  # $ redirect (the function checked its own value, not the argument)
    return "x"
