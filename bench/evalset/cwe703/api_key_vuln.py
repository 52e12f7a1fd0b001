from flask import Flask, request

from .config import API_KEY
from .reports import export_all

app = Flask(__name__)


@app.route("/export")
def export():
    assert request.headers.get("X-Api-Key") == API_KEY
    return export_all()
