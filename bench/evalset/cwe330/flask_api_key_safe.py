import secrets
import string

from flask import Flask, g, jsonify

from .auth import login_required
from .store import save_api_key

app = Flask(__name__)
ALPHABET = string.ascii_letters + string.digits


@app.post("/account/api-keys")
@login_required
def create_api_key():
    key = "".join(secrets.choice(ALPHABET) for _ in range(40))
    save_api_key(g.user.id, key)
    return jsonify(api_key=key), 201
