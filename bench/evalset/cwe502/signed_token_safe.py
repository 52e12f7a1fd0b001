import pickle

from flask import Flask, request
from itsdangerous import Signer

app = Flask(__name__)
signer = Signer("loaded-from-config")


@app.route("/resume")
def resume():
    token = request.args["t"]
    data = signer.unsign(token)
    state = pickle.loads(data)
    return {"step": state["step"]}
