import base64
import hashlib
import hmac
import pickle

from flask import Flask, abort, request

app = Flask(__name__)
SECRET = b"loaded-from-config"


@app.route("/cart")
def cart():
    blob = base64.b64decode(request.cookies["cart"])
    signature = request.cookies.get("cart_sig", "")
    expected = hmac.new(SECRET, blob, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(signature, expected):
        abort(400)
    items = pickle.loads(blob)
    return {"items": items}
