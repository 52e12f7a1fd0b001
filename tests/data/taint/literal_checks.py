# Engine probe: a value checked to be one whole quoted literal is inert as code, and only as
# the whole input: a string built from it is code again.
import sqlite3

from flask import Flask, request

app = Flask(__name__)


@app.route("/calc", methods=["POST"])
def calc():
    expr = request.form.get("e", "")
    if not expr.startswith('"') or not expr.endswith('"') or '"' in expr[1:-1]:
        return "a quoted string only"
    shown = eval(expr)  # ok code (one "-quoted literal, no quote inside)
    again = eval("f" + expr)  # $ code (an f-string runs what its braces hold)
    return "done" if shown and again else "none"


@app.route("/calc2")
def calc2():
    text = request.args["t"]
    if text[0] == "'" and text[-1] == "'" and "'" not in text[1:-1]:
        eval(text)  # ok code
        return "done"
    return "no"


@app.route("/calc3")
def calc3():
    text = request.args["t"]
    if text.startswith("'") and text.endswith("'"):
        eval(text)  # $ code (a quote inside ends the literal: 'a'+x+'b')
        return "done"
    return "no"


@app.route("/calc4")
def calc4():
    text = request.args["t"]
    if text.startswith("'") and text.endswith('"') and "'" not in text[1:-1]:
        eval(text)  # $ code (opened and closed by different quotes)
        return "done"
    return "no"


@app.route("/calc5")
def calc5():
    text = request.args["t"]
    if text.startswith("'") or text.endswith("'") and "'" not in text[1:-1]:
        eval(text)  # $ code (only one of the checks holds on this branch)
        return "done"
    return "no"


@app.route("/calc6")
def calc6():
    text = request.args["t"]
    if not text.startswith("'") or not text.endswith("'") or "'" in text[1:-1]:
        return "no"
    stripped = text.strip()
    eval(stripped)  # $ code (a call's result is another text)
    return "done"


@app.route("/query")
def query():
    word = request.args["w"]
    db = sqlite3.connect("app.db")
    if word.startswith("'") and word.endswith("'") and "'" not in word[1:-1]:
        db.execute("SELECT * FROM t WHERE name = " + word)  # $ sql (placed in a statement, not the whole of it)
    return "ok"
