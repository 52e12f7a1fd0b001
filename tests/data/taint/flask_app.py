# Engine probe: Flask sources, handlers and sinks. A trailing "$ <kind>" comment marks a line the
# engine must flag with that kind; a trailing "ok <kind>" one a line it must not.
import logging
import os
import random
import sqlite3
import subprocess

import requests
from flask import Flask, make_response, redirect, render_template, request, session
from markupsafe import escape

app = Flask(__name__)
ALLOWED = {"ls", "pwd"}


def lookup(name):
    conn = sqlite3.connect("app.db")
    cur = conn.cursor()
    cur.execute("SELECT * FROM users WHERE name = '%s'" % name)  # $ sql
    cur.execute("SELECT * FROM users WHERE name = ?", (name,))  # ok sql
    return cur.fetchall()


@app.route("/users")
def users():
    who = request.args.get("who", "")
    lookup(who)
    return "<h1>Hello " + who + "</h1>"  # $ xss


@app.route("/safe")
def safe_page():
    who = request.args.get("who", "")
    return "<h1>Hello " + escape(who) + "</h1>"  # ok xss


@app.route("/template")
def template_page():
    return render_template("page.html", who=request.args["who"])  # ok xss


@app.route("/run/<command>")
def run(command):
    if command in ALLOWED:
        subprocess.run(command, shell=True)  # ok command
    subprocess.run(["echo", command])  # ok command
    subprocess.run(["sh", "-c", command])  # $ command
    os.system("ping " + command)  # $ command
    return "done"


@app.route("/number/<int:n>")
def number(n):
    os.system("echo %d" % n)  # ok command
    return "ok"


@app.route("/go")
def go():
    target = request.args.get("next")
    if request.args.get("local"):
        return redirect("/profile/" + target)  # ok redirect
    return redirect(target)  # $ redirect


@app.route("/count")
def count():
    try:
        n = request.args["n"]
        n = int(n)
    except ValueError:  # int() raised: n still holds the text
        logging.error("not a number: " + n)  # $ log
        n = 0
    m = "0"
    try:
        m = int(request.args["m"])
    except ValueError:  # int() raised before m was assigned: it holds "0"
        logging.error("not a number: " + m)  # ok log
    return str(n + m)


@app.route("/moved")
def moved():
    resp = make_response("moved", 302)
    resp.headers["Location"] = request.args["to"]  # $ redirect $ header
    resp.headers.set("Link", request.args["to"])  # $ header
    resp.headers["Location"] = "/home"  # ok redirect
    return resp


@app.route("/fetch")
def fetch():
    url = request.form["url"]
    requests.get("https://api.example.com/items/" + url, timeout=5)  # $ ssrf (partial: the host is fixed)
    return requests.get(url, timeout=5).text  # $ ssrf $ xss


@app.route("/login")
def login():
    token = str(random.random())
    resp = make_response("welcome")
    resp.set_cookie("remember", token)  # $ secret $ cookie-secure $ cookie-httponly
    resp.set_cookie("theme", "dark", secure=True, httponly=True)  # ok cookie-secure ok cookie-httponly
    session["user"] = request.args.get("user")  # $ trust-boundary
    return resp


@app.route("/download")
def download():
    name = request.args["file"]
    if ".." in name or name.startswith("/"):
        return "no", 400
    with open(os.path.join("/srv/files", os.path.basename(name))) as handle:  # ok path
        data = handle.read()
    with open("/srv/files/" + name) as handle:  # ok path (no "..", joined after a folder's "/")
        data += handle.read()
    return data
