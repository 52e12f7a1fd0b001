import hmac

from flask import Flask, abort, request

from .config import API_KEY
from .reports import export_all

app = Flask(__name__)


@app.route("/export")
def export():
    if not hmac.compare_digest(request.headers.get("X-Api-Key", ""), API_KEY):
        abort(401)
    return export_all()
