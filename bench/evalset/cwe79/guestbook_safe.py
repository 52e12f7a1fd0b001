from flask import Blueprint, render_template, request
from markupsafe import Markup, escape

bp = Blueprint("guestbook", __name__)


@bp.post("/guestbook")
def sign():
    comment = request.form["comment"]
    entry = Markup("<p class='entry'>" + escape(comment) + "</p>")
    return render_template("guestbook.html", entry=entry)
