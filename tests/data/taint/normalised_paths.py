# Engine probe: a containment check of a variable (p.startswith(base)) proves something only of
# the path the variable holds when it is checked, and only if every run normalised it on the
# way there: what was appended, rebound by a loop, a walrus or a tuple, joined on another
# branch, or assigned to a same-named local of a nested function does not count; a helper
# that returns a normalised path does, one that decodes it again does not. normpath()
# normalises only an absolute path (a relative one keeps its leading ..), and resolve() of an
# object of unknown type counts only as Path.resolve() is called, with no argument. A
# normalised absolute path with its leading / stripped (normpath("/" + p).lstrip("/")) is
# relative and holds no "..": joined to a folder, it stays inside it.
import os
import posixpath
from pathlib import Path
from urllib.parse import unquote

from flask import Flask, abort, request, send_file

app = Flask(__name__)
BASE = "/srv/files"


def canonical(path):
    return os.path.realpath(path)


def decode(p):
    return unquote(p)


class Folder:
    def __init__(self, root):
        self.root = root

    def resolve(self, name):
        return os.path.join(self.root, name)


folder = Folder(BASE)


@app.route("/appended")
def appended():
    path = os.path.realpath(os.path.join(BASE, request.args["name"]))
    path += request.args["suffix"]
    if not path.startswith(BASE):
        abort(403)
    return send_file(path)  # $ path


@app.route("/loop")
def loop():
    out = []
    path = os.path.realpath(os.path.join(BASE, "index.txt"))
    for path in request.args.getlist("f"):
        if path.startswith(BASE):
            out.append(open(path).read())  # $ path
    return "".join(out)


@app.route("/walrus")
def walrus():
    path = os.path.realpath(os.path.join(BASE, "index.txt"))
    if (path := os.path.join(BASE, request.args["f"])) and path.startswith(BASE):
        return send_file(path)  # $ path
    abort(403)


@app.route("/tuple")
def tuple_rebound():
    path = os.path.realpath(os.path.join(BASE, "default"))
    path, _ = os.path.join(BASE, request.args["f"]), None
    if path.startswith(BASE):
        return send_file(path)  # $ path
    abort(403)


@app.route("/nested")
def nested():
    path = os.path.join(BASE, request.args["name"])

    def inner(p):
        path = os.path.realpath(p)
        return path

    if not path.startswith(BASE):
        abort(403)
    return send_file(path)  # $ path


@app.route("/one-branch")
def one_branch():
    if request.args.get("raw"):
        path = os.path.join(BASE, request.args["name"])
    else:
        path = os.path.normpath(os.path.join(BASE, request.args["name"]))
    if not path.startswith(BASE):
        abort(403)
    return send_file(path)  # $ path


@app.route("/both-branches")
def both_branches():
    path = os.path.join(BASE, request.args["name"])
    if request.args.get("follow"):
        path = os.path.realpath(path)
    else:
        path = os.path.normpath(path)
    if not path.startswith(BASE):
        abort(403)
    return send_file(path)  # ok path


@app.route("/helper")
def helper():
    path = canonical(os.path.join(BASE, request.args["name"]))
    if not path.startswith(BASE):
        abort(403)
    return send_file(path)  # ok path


@app.route("/method-named-resolve")
def method_named_resolve():
    path = folder.resolve(request.args["name"])
    if not path.startswith(BASE):
        abort(403)
    return send_file(path)  # $ path


@app.route("/as-text")
def as_text():
    path = str(os.path.abspath(os.path.join(BASE, request.args["name"])))
    if not path.startswith(BASE):
        abort(403)
    return send_file(path)  # ok path


@app.route("/decoded-by-a-helper")
def decoded_by_a_helper():
    path = decode(os.path.realpath(os.path.join(BASE, request.args["name"])))
    if not path.startswith(BASE):  # ..%252f..%252fetc%252fpasswd: one segment for realpath, decoded after
        abort(403)
    return send_file(path)  # $ path


@app.route("/checked-then-decoded-by-a-helper")
def checked_then_decoded_by_a_helper():
    name = request.args["name"]
    if ".." in name:
        abort(403)
    return send_file(BASE + "/" + decode(name))  # $ path


@app.route("/relative-normpath-under-a-base")
def relative_normpath_under_a_base():
    target = Path(BASE) / os.path.normpath(request.args["name"])
    if not target.is_relative_to(BASE):  # ../../etc/passwd stays so, under the base lexically
        abort(403)
    return send_file(target)  # $ path


@app.route("/relative-normpath-made-absolute")
def relative_normpath_made_absolute():
    target = Path(os.path.normpath(request.args["name"])).absolute()
    if not target.is_relative_to(BASE):
        abort(403)
    return send_file(target)  # $ path


@app.route("/resolve-of-unknown-object-with-argument")
def resolve_of_unknown_object_with_argument(store=None):
    path = store.resolve(request.args["name"])
    if not path.startswith(BASE):
        abort(403)
    return send_file(path)  # $ path


@app.route("/absolute-normpath")
def absolute_normpath():
    path = os.path.normpath(os.path.join(BASE, request.args["name"]))
    if not path.startswith(BASE):
        abort(403)
    return send_file(path)  # ok path


@app.route("/rooted-then-stripped")
def rooted_then_stripped():
    relative = posixpath.normpath("/" + request.args["name"]).lstrip("/")
    send_file(os.path.realpath(BASE + "/" + relative))  # ok path
    return send_file(os.path.join(BASE, relative))  # ok path


@app.route("/rooted-not-stripped")
def rooted_not_stripped():
    rooted = os.path.normpath("/" + request.args["name"])
    return send_file(os.path.join(BASE, rooted))  # $ path (absolute: join drops BASE)


@app.route("/stripped-not-normalised")
def stripped_not_normalised():
    return send_file(os.path.join(BASE, request.args["name"].lstrip("/")))  # $ path


@app.route("/relative-normalised-then-stripped")
def relative_normalised_then_stripped():
    relative = os.path.normpath(request.args["name"]).strip("/")
    return send_file(os.path.join(BASE, relative))  # $ path (normpath keeps a relative path's ..)

