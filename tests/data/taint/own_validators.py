# Engine probe: functions of the analysed code that check their argument are guards where their
# result has the truth every return of theirs with that truth checked it for (predicates.py).
import functools
import os
from urllib.parse import urljoin, urlparse

import requests

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
        return redirect(target)  # $ redirect (a setting may be a text, whose substring test lets an empty host by)
    if is_same_site(target):
        return redirect(target)  # $ redirect (no host is not relative for a browser: "/\\evil.example")
    if is_safe_url(target):
        return redirect(target)  # $ redirect (urljoin keeps the site's host for "/\\evil.example")
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


def same_host(url):
    return urlparse(url).netloc == request.host


@app.route("/fetch")
def fetch():
    target = request.args["url"]
    if same_host(target):
        requests.get(target)  # $ ssrf (the client that asks the server to fetch sets its Host header)
    if urlparse(target).hostname in "example.org":
        requests.get(target)  # $ ssrf (a substring test: any part of the name passes)
    return "no"


class Policy:
    def allowed(self, url):
        return urlparse(url).netloc in HOSTS

    def go(self, url):
        if self.allowed(url):
            return redirect(url)  # $ redirect (a subclass may answer otherwise)
        return "no"


class LaxPolicy(Policy):
    def allowed(self, url):
        return True


def lenient(check):
    @functools.wraps(check)
    def wrapper(url):
        return True
    return wrapper


@lenient
def wrapped_allowed(url):
    return urlparse(url).netloc in HOSTS


async def allowed_later(url):
    return urlparse(url).netloc in HOSTS


@app.route("/more")
async def more():
    target = request.args["next"]
    if wrapped_allowed(target):
        return redirect(target)  # $ redirect (the decorator's wrapper decides what the call returns)
    if allowed_later(target):
        return redirect(target)  # $ redirect (a coroutine object, always true)
    if await allowed_later(target):
        return redirect(target)  # ok redirect (awaited)
    return "no"


def path_on_this_site(url):
    parts = urlparse(url)
    if parts.scheme or parts.netloc or url.startswith(("//", "/\\")):
        return "/"
    return url


def no_host(url):
    parts = urlparse(url)
    if parts.scheme or parts.netloc:
        return "/"
    return url


@app.route("/relative")
def relative():
    target = request.args["next"]
    if request.args.get("strict"):
        return redirect(path_on_this_site(target))  # ok redirect (no scheme, no host, not // or /\)
    return redirect(no_host(target))  # $ redirect (a browser follows "/\\evil.example" elsewhere)
