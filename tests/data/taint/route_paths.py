# Engine probe: the request's path is the route's text in a view that only routes without
# variable parts reach, and outside data wherever another path can reach the code.
import os

from flask import Flask, request

app = Flask(__name__)


@app.route("/reports/daily", methods=["POST"])
def daily_post():
    section = request.path.split("/")[1]
    os.system("ls " + section)  # ok command (the path is "/reports/daily")
    return "ok"


@app.route("/reports/daily", methods=["GET"])
def daily_get():
    return daily_post()


@app.route("/files/<name>")
def by_name(name):
    os.system("ls " + request.path)  # $ command (the rule has a variable part)
    return "ok"


@app.before_request
def audit():
    os.system("logger " + request.path)  # $ command (a hook runs for every path)


def helper():
    os.system("ls " + request.path)  # $ command (also called where any path reaches)


@app.route("/static/page")
def page():
    helper()
    return "ok"


@app.errorhandler(404)
def missing(error):
    helper()
    return "missing", 404


@app.route("/reports/weekly")
def weekly():
    os.system("ls " + request.path)  # $ command (the view is also registered below for any path)
    return "ok"


app.add_url_rule("/<path:anything>", view_func=weekly)
