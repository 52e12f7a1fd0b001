# Engine probe: a response whose type is set right after it is made, as passing it would set it
# (``resp.mimetype = "application/json"``): no HTML, no cross-site scripting. Set only on some
# paths, set to HTML, or set after the response may have left, it is still HTML.
import json

from flask import Flask, Response, request

app = Flask(__name__)


@app.route("/a")
def a():
    resp = Response(json.dumps({"user": request.args["u"]}))  # ok xss
    resp.headers["X-Id"] = "1"
    resp.mimetype = "application/json"
    return resp


@app.route("/b")
def b():
    resp = Response(request.args["u"])  # $ xss
    if request.args.get("x"):
        return resp
    resp.mimetype = "application/json"
    return resp


@app.route("/c")
def c():
    resp = Response(request.args["u"])  # $ xss
    resp.mimetype = "text/html"
    return resp


@app.route("/d")
def d():
    resp = Response(request.args["u"])  # ok xss
    resp.content_type = "text/plain"
    return resp


@app.route("/e")
def e():
    resp = Response(request.args["u"])  # $ xss
    resp = Response("fixed")
    resp.mimetype = "text/plain"
    return resp
