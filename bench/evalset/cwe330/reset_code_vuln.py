import random
import string

from flask import Flask, request

from .mail import send_mail
from .store import save_reset_code

app = Flask(__name__)


@app.post("/password/forgot")
def forgot_password():
    reset_code = "".join(random.choice(string.digits) for _ in range(6))
    save_reset_code(request.form["email"], reset_code)
    send_mail(request.form["email"], f"Your code: {reset_code}")
    return "", 204
