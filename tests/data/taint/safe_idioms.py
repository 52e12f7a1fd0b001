# Engine probe (from trying to break the engine): safe idioms that must not be flagged, and
# shapes that hid real flows.
import os
import re
import socket
import sqlite3
import subprocess

from flask import Flask, Response, abort, request, send_from_directory

app = Flask(__name__)
COLUMNS = {"name": "name", "age": "age"}
TYPE_CHECKING = True  # a variable that happens to share typing's name


@app.route("/json")
def as_json():
    return {"q": request.args["q"]}  # ok xss


@app.route("/text")
def as_text():
    return Response(request.args["q"], mimetype="text/plain")  # ok xss


@app.route("/tuple")
def as_tuple():
    return request.args["q"], 200, {"Content-Type": "text/plain"}  # ok xss


@app.route("/file")
def a_file():
    return send_from_directory("/srv/files", request.args["name"])  # ok xss ok path


@app.route("/rows")
def rows():
    found = sqlite3.connect("a.db").execute("SELECT * FROM t WHERE n = ?", (request.args["n"],)).fetchall()
    return "<p>%s</p>" % found  # ok xss


@app.route("/order")
def order():
    column = COLUMNS.get(request.args["col"], "name")
    limit = request.args.get("limit", 10, type=int)
    sqlite3.connect("a.db").execute("SELECT * FROM t ORDER BY %s LIMIT %d" % (column, limit))  # ok sql
    return "ok"


@app.route("/host")
def host():
    name = request.args["h"]
    if re.fullmatch(r"[a-z0-9.-]+", name) is None:
        abort(400)
    os.system("ping -c1 " + name)  # ok command
    if TYPE_CHECKING:
        os.system("host " + request.args["h"])  # $ command
    return "ok"


def serve(port):
    listener = socket.socket()
    listener.bind(("0.0.0.0", port))
    conn, _ = listener.accept()
    subprocess.run(conn.recv(1024).decode(), shell=True)  # $ command
