from flask import Flask, request, session

from .profiles import update_profile

app = Flask(__name__)


@app.post("/profile")
def profile():
    assert session.get("user_id") is not None, "login required"
    update_profile(session["user_id"], request.form)
    return "", 204
