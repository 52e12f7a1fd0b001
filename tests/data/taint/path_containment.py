# Engine probe: a containment check proves something only of a normalised path (pathlib compares
# the text: Path("/srv/files", "../../etc/passwd") lies inside /srv/files for it), and
# relative_to(), which raises unless the path lies inside, proves it once it has returned.
# "base in p.parents" is pathlib's other way to say it, with the same need.
import contextlib
import os
import posixpath
from pathlib import Path

from flask import Flask, abort, request

app = Flask(__name__)
BASE = Path("/srv/files")


@app.route("/joined")
def joined():
    target = Path(BASE, request.args["name"])
    if target.is_relative_to(BASE):
        target.read_bytes()  # $ path
        return "read"
    return b""


@app.route("/resolved")
def resolved():
    target = Path(BASE, request.args["name"]).resolve()
    if target.is_relative_to(BASE):
        target.read_bytes()  # ok path
        return "read"
    return b""


@app.route("/text")
def text():
    name = request.args["name"]
    if str(Path(name)).startswith("/srv/files/"):
        open(name, "rb").read()  # $ path
        return "read"
    if os.path.abspath(name).startswith("/srv/files/"):
        open(name, "rb").read()  # ok path
        return "read"
    return b""


@app.route("/relative")
def relative():
    target = (BASE / request.args["name"]).resolve()
    try:
        target.relative_to(BASE)
    except ValueError:
        abort(404)
    target.read_bytes()  # ok path
    return "read"


@app.route("/lexical")
def lexical():
    target = BASE / request.args["name"]
    try:
        target.relative_to(BASE)
    except ValueError:
        abort(404)
    target.read_bytes()  # $ path
    return "read"


@app.route("/swallowed")
def swallowed():
    target = (BASE / request.args["name"]).resolve()
    try:
        target.relative_to(BASE)
    except ValueError:
        pass
    target.read_bytes()  # $ path
    return "read"


@app.route("/normalised")
def normalised():
    target = Path(os.path.normpath(os.path.join("/srv/files", request.args["name"])))
    try:
        target.relative_to("/srv/files")
    except ValueError:
        abort(404)
    target.read_bytes()  # ok path
    return "read"


@app.route("/walked")
def walked():
    target = (BASE / request.args["name"]).resolve()
    try:
        target.relative_to(BASE, walk_up=True)
    except ValueError:
        abort(404)
    target.read_bytes()  # $ path
    return "read"


@app.route("/suppressed")
def suppressed():
    target = (BASE / request.args["name"]).resolve()
    with contextlib.suppress(ValueError):
        target.relative_to(BASE)
    target.read_bytes()  # $ path (what relative_to raised was swallowed)
    return "read"


@app.route("/finally")
def finally_returns():
    target = (BASE / request.args["name"]).resolve()
    try:
        target.relative_to(BASE)
    finally:
        target.read_bytes()  # $ path (reached when relative_to raised, too)
        return "read"


@app.route("/posix")
def posix():
    name = posixpath.normpath(posixpath.join("/srv/files", request.args["name"]))
    if name.startswith("/srv/files/"):
        open(name, "rb").read()  # ok path (posixpath is os.path on POSIX)
    return "read"


@app.route("/prefixed")
def prefixed():
    base = os.path.realpath("/srv/files")
    full = os.path.realpath(os.path.join(base, request.args["name"]))
    if os.path.commonprefix([full, base]) != base:
        abort(404)
    open(full).read()  # $ path (character-wise: "/srv/files-private/key" shares "/srv/files")
    if os.path.commonprefix([full, "/srv/files/"]) != "/srv/files/":
        abort(404)
    return open(full).read()  # ok path (the base ends with a separator)


@app.route("/parents")
def parents():
    target = (BASE / request.args["name"]).resolve()
    if BASE not in target.parents:
        abort(404)
    target.read_bytes()  # ok path
    return "read"


@app.route("/parents-of-text")
def parents_of_text():
    target = BASE / request.args["name"]
    if BASE in target.parents:
        target.read_bytes()  # $ path (lexical: BASE/../../etc/passwd has BASE among its parents)
    return "read"


@app.route("/parents-other")
def parents_other():
    target = (BASE / request.args["name"]).resolve()
    if BASE in target.parents or request.args.get("any"):
        target.read_bytes()  # $ path (either test may hold)
    return "read"
