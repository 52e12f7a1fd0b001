# Engine probe: a redirect to the request's own absolute URL stays on the site (its scheme and
# host are the ones the browser sent); its path alone, or what a link chooses, does not.
from urllib.parse import urljoin

from flask import Flask, redirect, request, url_for

app = Flask(__name__)


@app.route("/form/<name>", methods=["GET", "POST"])
def form(name):
    if request.method == "POST":
        return redirect(request.url)  # ok redirect
    return redirect(urljoin(request.url_root, url_for("form", name=name)))  # ok redirect


@app.route("/again/<name>")
def again(name):
    return redirect(request.host_url + request.args["next"])  # $ redirect


@app.route("/path/<name>")
def path_only(name):
    return redirect(request.path)  # $ redirect


@app.route("/back/<name>")
def back(name):
    return redirect(request.referrer)  # $ redirect
