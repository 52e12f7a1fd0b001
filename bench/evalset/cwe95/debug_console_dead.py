from flask import Flask, request

app = Flask(__name__)


@app.post("/console")
def console():
    if False:
        exec(request.form["code"])
    return "", 404
