import tarfile

from flask import Flask, request

app = Flask(__name__)
UPLOAD_DIR = "/srv/bundles"


@app.post("/bundles")
def upload_bundle():
    tar = tarfile.open(fileobj=request.files["bundle"].stream)
    tar.extractall(UPLOAD_DIR, filter="data")
    return "", 201
