import pickle

from flask import Flask, request

app = Flask(__name__)


@app.post("/state")
def restore_state():
    state = pickle.load(request.files["state"])
    return {"keys": list(state)}
