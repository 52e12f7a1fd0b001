import base64
import pickle

from flask import Flask, request

app = Flask(__name__)


@app.route("/resume")
def resume():
    token = request.args["t"]
    data = base64.urlsafe_b64decode(token)
    state = pickle.loads(data)
    return {"step": state["step"]}
