from flask import Flask, request

from .storage import store

app = Flask(__name__)
MAX_UPLOAD = 10 * 1024 * 1024


@app.post("/upload")
def upload():
    blob = request.files["file"].read()
    assert len(blob) <= MAX_UPLOAD
    return {"id": store(blob)}
