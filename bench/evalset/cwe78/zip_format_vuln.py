import subprocess

from flask import Flask, request

app = Flask(__name__)


@app.post("/export")
def export():
    archive = request.json["archive"]
    folder = request.json["folder"]
    cmd = "zip -r {} {}".format(archive, folder)
    subprocess.run(cmd, shell=True, check=True)
    return {"archive": archive}
