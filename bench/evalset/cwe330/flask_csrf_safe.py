import secrets
import string

from flask import Flask, abort, request, session

app = Flask(__name__)


@app.before_request
def csrf_protect():
    if "csrf_token" not in session:
        session["csrf_token"] = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
    if request.method == "POST" and request.form.get("csrf_token") != session["csrf_token"]:
        abort(400)
