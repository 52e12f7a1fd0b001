import yaml
from flask import Flask, request

app = Flask(__name__)


@app.post("/state")
def restore_state():
    state = yaml.load(request.data, Loader=yaml.CSafeLoader)
    return {"keys": list(state)}
