from flask import Flask, abort, request

from .models import load_account

app = Flask(__name__)
ALLOWED_FIELDS = ("name", "email", "plan")


@app.route("/account/<int:account_id>/field")
def field(account_id):
    account = load_account(account_id)
    name = request.args["name"]
    return {"value": eval("account." + name)}
