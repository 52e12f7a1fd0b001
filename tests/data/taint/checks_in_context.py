# Engine probe: checks that protect a value only where it is placed, items that move in a list,
# a match on a constant, and a shell chosen on either branch.
import os
import subprocess
import urllib.parse

import lxml.etree
from flask import Flask, request

app = Flask(__name__)
BASE = "/srv/files"


@app.route("/read")
def read():
    name = request.args["file"]
    if "../" in request.args["other"]:
        return "no"
    if ".." in name:
        return "no"
    with open(f"{BASE}/{name}") as handle:  # ok path (no "..", placed after a folder's "/")
        data = handle.read()
    with open(BASE + "/" + name) as handle:  # ok path
        data += handle.read()
    with open(name) as handle:  # $ path (an absolute name needs no "..")
        data += handle.read()
    with open(os.path.join(BASE, name)) as handle:  # $ path (join drops BASE for an absolute name)
        data += handle.read()
    with open(BASE + "/" + ("." + name)) as handle:  # $ path ("." before it: "./x" makes "../x")
        data += handle.read()
    with open(BASE + "/" + name + ".") as handle:  # ok path (what follows cannot climb: "x." stays inside)
        data += handle.read()
    suffixed = name + "."
    with open(BASE + "/" + suffixed) as handle:  # $ path (another text: "." + "." is "..")
        data += handle.read()
    return data


@app.route("/partial")
def partial():
    user = request.args["user"]
    if "../" in user:
        return "no"
    with open(f"/srv/users/{user}/profile.json") as handle:  # $ path (".." alone climbs)
        return handle.read()


@app.route("/find")
def find():
    uid = request.args["uid"]
    tree = lxml.etree.parse("people.xml")
    if "'" not in uid:
        tree.xpath(f"//person[@id='{uid}']")  # ok xpath
        tree.xpath('//person[@id="%s"]' % uid)  # $ xpath (a double quote was not checked)
        tree.xpath("//person[@id=" + uid + "]")  # $ xpath (not quoted at all)
    return "ok"


@app.route("/moved")
def moved():
    given = request.args["v"]
    items = ["safe"]
    items.append(given)
    items.append("more")
    items.pop(0)
    os.system(items[1])  # ok command (the constant "more" moved to index 1)
    os.system(items[0])  # $ command
    items.insert(0, "first")
    os.system(items[0])  # ok command
    os.system(items.pop())  # ok command (the last item is "more")
    os.system(items.pop())  # $ command
    return "ok"


@app.route("/choice")
def choice():
    given = request.args["v"]
    picked = "ABC"[1]
    match picked:
        case "A":
            value = given
        case "B" | "X":
            value = "constant"
        case _:
            value = given
    os.system(value)  # ok command (only case "B" can take "B")
    match given:
        case "A":
            other = "a"
        case _:
            other = given
    os.system(other)  # $ command
    return "ok"


@app.route("/shell")
def shell():
    given = request.args["v"]
    argv = []
    if os.name == "nt":
        argv.append("cmd.exe")
        argv.append("/c")
    else:
        argv.append("sh")
        argv.append("-c")
    argv.append(f"echo {given}")
    subprocess.run(argv)  # $ command
    return "ok"


@app.route("/escaped")
def escaped():
    uid = request.args["uid"]
    tree = lxml.etree.parse("people.xml")
    quoted = uid.replace("'", "&apos;")
    tree.xpath(f"//person[@id='{quoted}']")  # ok xpath
    tree.xpath(f'//person[@id="{quoted}"]')  # $ xpath (the double quote is left)
    name = request.args["file"]
    with open("/srv/files/" + name.replace("../", "")) as handle:  # $ path ("....//" becomes "../")
        data = handle.read()
    with open("/srv/files/" + name.replace("/", "_")) as handle:  # ok path (".." is left: a folder, which open() refuses)
        data += handle.read()
    os.listdir("/srv/files/" + name.replace("/", "_"))  # $ path (".." is left: the folder's parent)
    with open("/srv/files/" + name.replace(".", "_")) as handle:  # ok path (no "." is left)
        data += handle.read()
    closing = uid.replace("'", "")
    tree.xpath("//person[@name='admin'" + closing + "]")  # $ xpath (after a closing quote)
    tree.xpath("//person[@id='" + closing.replace("%27", "'") + "']")  # $ xpath (a quote put back)
    return data


@app.route("/contained")
def contained():
    name = request.args["file"]
    if os.path.realpath(os.path.join(BASE, name)).startswith(BASE + "/"):
        with open(os.path.join(BASE, name)) as handle:  # ok path (the joined name's real path stays in BASE)
            return handle.read()
    with open(os.path.join(BASE, name)) as handle:  # $ path (not checked on this path)
        return handle.read()


@app.route("/started")
def started():
    name = request.args["file"]
    resolved = os.path.realpath(os.path.join(BASE, name))
    if resolved.startswith(BASE + "/"):
        open(resolved).read()  # ok path (its real path stays in BASE)
    real = os.path.realpath(os.path.join(BASE, request.args["other"]))
    if not real.startswith(os.path.realpath(BASE) + os.sep):
        raise PermissionError(real)
    open(real).read()  # ok path (the shape fleetledger fix writes)
    raw = os.path.join(BASE, name)
    if raw.startswith(BASE + "/"):
        return open(raw).read()  # $ path (not normalised: BASE + "/../.." starts so too)
    return "no"


@app.route("/common")
def common():
    name = request.args["file"]
    base = os.path.realpath(BASE)
    full = os.path.realpath(os.path.join(base, name))
    if os.path.commonpath([base, full]) != base:
        raise ValueError(name)
    with open(full) as handle:  # ok path (commonpath says full lies inside base)
        handle.read()
    joined = os.path.join(BASE, name)
    if os.path.commonpath((BASE, os.path.realpath(joined))) == BASE:
        return open(joined).read()  # ok path
    if os.path.commonpath([base, joined]) == "/":
        return open(joined).read()  # $ path (compared with a path it was not given)
    return open(joined).read()  # $ path (not checked on this path)


def checked_name(name):
    if ".." in name:
        raise ValueError("no climbing")
    return name


@app.route("/validated")
def validated():
    name = checked_name(request.args["file"])
    with open("/srv/files/" + name) as handle:  # ok path (a validating helper's check holds)
        data = handle.read()
    with open("/srv/files/" + urllib.parse.unquote(name)) as handle:  # $ path ("%2e%2e" becomes "..")
        data += handle.read()
    return data


@app.route("/last")
def last_part():
    leaf = request.args["leaf"]
    if "../" in leaf:
        return "no"
    with open(f"{BASE}/{leaf}") as handle:  # ok path (".." alone names a folder, which open() refuses)
        data = handle.read()
    with open(BASE + "/" + leaf + ".txt") as handle:  # ok path (nothing with a "/" follows it)
        data += handle.read()
    with open(f"{BASE}/{leaf}/index.html") as handle:  # $ path ("../index.html" after ".." climbs)
        data += handle.read()
    whole = f"{BASE}/{leaf}"
    with open(whole + "/x") as handle:  # $ path (a "/" added later makes it a folder again)
        data += handle.read()
    os.listdir(f"{BASE}/{leaf}")  # $ path (listing the folder's parent)
    with open(os.path.join(BASE, leaf)) as handle:  # $ path (an absolute name)
        data += handle.read()
    with open(f"{BASE}/{leaf}{request.args['tail']}") as handle:  # $ path (what follows is not known)
        data += handle.read()
    return data
