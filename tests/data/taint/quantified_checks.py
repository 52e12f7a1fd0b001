# Engine probe: any() and all() of a generator as checks (every character checked, one of the
# allowed hosts matched); a URL object whose host was checked is the one fetched; a request
# built to be sent is a fetch; a method's own configuration is no outside data to compare with.
# A text absent from every part of x.split(sep) is absent from x, unless it holds sep's characters;
# a loop whose whole body is "if P(part): raise" has checked every part once it has ended.
import os
import string
from urllib.parse import urlparse

import httpx
import requests
from flask import Flask, request

app = Flask(__name__)
HOSTS = ["a.example.com", "b.example.com"]
ALLOWED1 = set(string.ascii_letters + string.digits + "-_")
ALLOWED2 = frozenset("abc./")
client = httpx.Client()


@app.route("/every")
def every():
    name = request.args["name"]
    if not all(c.isalnum() for c in name):
        raise ValueError(name)
    os.system("touch /srv/" + name)  # ok command
    other = request.args["other"]
    if any(c.isalnum() for c in other):
        os.system("touch /srv/" + other)  # $ command
    return "ok"


@app.route("/characters")
def characters():
    name = request.args["name"]
    if not all(c in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in name):
        raise ValueError(name)
    os.system("touch /srv/" + name)  # ok command
    path = request.args["path"]
    if not all(c in "abcdefghijklmnopqrstuvwxyz./" for c in path):
        raise ValueError(path)
    open("/srv/" + path)  # $ path ("../" is made of allowed characters)
    line = request.args["line"]
    if any(c in ";|&" for c in line):
        raise ValueError(line)
    os.system("echo " + line)  # $ command ($() and backticks are not among them)
    return "ok"


def check_name(n1):
    if not all(c in ALLOWED1 for c in n1):
        raise ValueError(n1)


@app.route("/sets")
def sets():
    n1 = request.args["n1"]
    check_name(n1)
    os.system("touch /srv/" + n1)  # ok command (a set of a text's characters is an allowlist)
    n2 = request.args["n2"]
    if not all(c in ALLOWED2 for c in n2):
        raise ValueError(n2)
    open("/srv/" + n2)  # $ path ("../" is made of allowed characters)
    n3 = request.args["n3"]
    if not all(c in string.digits for c in n3):
        raise ValueError(n3)
    os.system("sleep " + n3)  # ok command
    n4 = request.args["n4"]
    if not set(n4) <= ALLOWED1:
        raise ValueError(n4)
    os.system("touch /srv/" + n4)  # ok command
    n5 = request.args["n5"]
    if set(n5).issubset(ALLOWED1):
        os.system("touch /srv/" + n5)  # ok command
    os.system("touch /srv/" + n5)  # $ command (the other branch)
    n6 = request.args["n6"]
    if set(n6) - set(string.digits):
        raise ValueError(n6)
    os.system("sleep " + n6)  # ok command
    n7 = request.args["n7"]
    if set(n7) >= ALLOWED1:
        os.system("touch /srv/" + n7)  # $ command (a superset: any other character too)
    return "ok"


@app.route("/some")
def some():
    url = request.args["url"]
    if not any(urlparse(url).hostname == host for host in HOSTS):
        raise ValueError(url)
    client.get(url)  # ok ssrf
    loose = request.args["loose"]
    if any(urlparse(loose).hostname != host for host in HOSTS):
        client.get(loose)  # $ ssrf
    return "ok"


@app.route("/object")
def url_object():
    url = httpx.URL(request.args["url"])
    if url.host not in HOSTS:
        raise ValueError(str(url))
    client.get(url)  # ok ssrf
    other = httpx.URL(request.args["other"])
    client.send(client.build_request("GET", other))  # $ ssrf
    requests.Session().send(requests.Request("GET", request.args["u"]).prepare())  # $ ssrf
    return "ok"


class Proxy:
    def __init__(self, allowed):
        self.allowed = allowed

    def fetch(self, raw):
        url = httpx.URL(raw)
        if not any(url.host == httpx.URL(root).host for root in self.allowed):
            raise PermissionError(raw)
        # (a summary holds for any object: one whose allowed list came from the request too)
        return client.get(url)  # $ ssrf


@app.route("/proxy")
def proxy():
    Proxy(["https://a.example.com/"]).fetch(request.args["url"])
    return "ok"


@app.route("/parts")
def parts():
    name = request.args["name"]
    if any(".." in part for part in name.split("/")):
        return "no"
    open("/srv/files/" + name).read()  # ok path
    other = request.args["other"]
    if not all(".." not in piece for piece in other.split("/")):
        return "no"
    open("/srv/files/" + other).read()  # ok path
    return "read"


@app.route("/parts-not-proving")
def parts_not_proving():
    name, limited, computed = request.args["name"], request.args["limited"], request.args["computed"]
    if any("../" in part for part in name.split("/")):
        return "no"
    open("/srv/files/" + name).read()  # $ path (no part holds a "/": the test holds of any name)
    if any(".." in part for part in limited.split("/", 1)):
        return "no"
    open("/srv/files/" + limited).read()  # $ path (only the first "/" splits)
    if any(".." in part for part in computed.split(request.args["sep"])):
        return "no"
    open("/srv/files/" + computed).read()  # $ path
    return "read"


def no_parent_part(path):
    for part in path.split("/"):
        if ".." in part:
            raise ValueError(path)
    return path


@app.route("/loop-parts")
def loop_parts():
    open("/srv/files/" + no_parent_part(request.args["name"])).read()  # ok path
    name = request.args["other"]
    for part in name.split("/"):
        if ".." in part:
            return "no"
    open("/srv/files/" + name).read()  # ok path
    return "read"


@app.route("/loop-parts-not-proving")
def loop_parts_not_proving():
    name, other = request.args["name"], request.args["other"]
    for part in name.split("/"):
        if ".." in part:
            break
    open("/srv/files/" + name).read()  # $ path (a break leaves the rest unchecked)
    for part in other.split("/"):
        if ".." in part:
            print("suspicious")
    open("/srv/files/" + other).read()  # $ path (the check does not stop the code)
    third = request.args["third"]
    for part in third.split("/"):
        if ".." in part:
            if part.startswith("."):
                continue
            raise ValueError(third)
    open("/srv/files/" + third).read()  # $ path (a continue skips the raise for some parts)
    return "read"
