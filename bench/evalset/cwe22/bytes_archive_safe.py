import io
import tarfile

from flask import Flask, request

app = Flask(__name__)


@app.post("/restore")
def restore():
    tar = tarfile.open(fileobj=io.BytesIO(request.get_data()))
    tar.extractall(path="/srv/restore", filter="tar")
    return "", 204
