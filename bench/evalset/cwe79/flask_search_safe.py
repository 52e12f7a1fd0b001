from flask import Flask, render_template, request
from markupsafe import Markup

app = Flask(__name__)


@app.get("/search")
def search():
    q = request.args.get("q", "")
    heading = Markup("Results for <em>{}</em>").format(q)
    return render_template("search.html", heading=heading, results=find(q))


def find(q):
    return []
