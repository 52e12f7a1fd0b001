# Engine probe: an uploaded file's name is the client's; saving an upload under it (or under
# any name the request chose) writes where the client says. A name made safe, or chosen by the
# program, is not.
import os

from flask import Flask, request
from werkzeug.utils import secure_filename

site = Flask(__name__)
FOLDER = "/srv/uploads"


@site.route("/avatar", methods=["POST"])
def avatar():
    upload = request.files["avatar"]
    upload.save(os.path.join(FOLDER, upload.filename))  # $ path
    return "saved"


@site.route("/attach", methods=["POST"])
def attach():
    upload = request.files.get("attachment")
    upload.save(FOLDER + "/" + request.form["as"])  # $ path
    upload.save(os.path.join(FOLDER, secure_filename(upload.filename)))  # ok path
    upload.save(os.path.join(FOLDER, "latest.bin"))  # ok path
    return "saved"
