from flask import Flask, Markup, flash, redirect, request, url_for

from .users import find_user

app = Flask(__name__)


@app.post("/login")
def login():
    username = request.form["username"]
    if find_user(username) is None:
        flash(Markup("No account for %s. <a href='/signup'>Sign up</a>" % username))
        return redirect(url_for("login_form"))
    return redirect(url_for("dashboard"))
