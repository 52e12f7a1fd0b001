import subprocess

from flask import Flask, request

app = Flask(__name__)


@app.post("/thumb")
def thumbnail():
    upload = request.files["image"]
    name = upload.filename
    upload.save("/srv/uploads/" + name)
    cmd = "convert /srv/uploads/"
    cmd += name
    cmd += " -resize 128x128 /srv/thumbs/out.png"
    subprocess.Popen(cmd, shell=True).wait()
    return "ok"
