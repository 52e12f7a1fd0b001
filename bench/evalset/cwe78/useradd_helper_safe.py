import os
import shlex

from flask import Flask, request

app = Flask(__name__)


def build_command(username):
    return "useradd --create-home " + shlex.quote(username)


@app.post("/users")
def create_user():
    os.system(build_command(request.form["username"]))
    return "created", 201
