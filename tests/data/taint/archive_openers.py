# Engine probe: archive and compressed-file openers read the file a path names, as open() does
# (path traversal when a request chooses it); each also takes an open file in the path's place,
# and an upload or a stream given there is read, not a path.
import bz2
import gzip
import io
import lzma
import tarfile
import zipfile

from flask import Flask, request

app = Flask(__name__)


@app.route("/a")
def a():
    name = request.args["name"]
    tarfile.open(name)  # $ path
    tarfile.TarFile(name)  # $ path
    tarfile.TarFile.open(name, mode="r:")  # $ path
    zipfile.ZipFile(name)  # $ path
    gzip.open(name)  # $ path
    bz2.BZ2File(name)  # $ path
    lzma.open(filename=name)  # $ path
    return "ok"


@app.route("/b", methods=["POST"])
def b():
    upload = request.files["f"]
    zipfile.ZipFile(upload)  # ok path
    tarfile.open(fileobj=upload)  # ok path
    gzip.GzipFile(fileobj=io.BytesIO(request.data))  # ok path
    zipfile.ZipFile(io.BytesIO(request.data))  # ok path
    return "ok"


@app.route("/c", methods=["POST"])
def c():
    label = request.args["name"]
    gzip.GzipFile(filename=label, mode="wb", fileobj=io.BytesIO())  # ok path
    tarfile.open(label, "r", io.BytesIO(request.data))  # ok path
    return "ok"
