import os

from flask import Flask, request

app = Flask(__name__)


@app.post("/uploads/delete")
def delete_upload():
    filename = request.values.get("file", "")
    os.system("rm -f /srv/uploads/%(name)s" % {"name": os.path.basename(filename)})
    return "", 204
