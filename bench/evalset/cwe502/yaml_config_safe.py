import yaml
from flask import Flask, request

app = Flask(__name__)


@app.post("/config")
def update_config():
    config = yaml.load(request.data, Loader=yaml.SafeLoader)
    return {"keys": sorted(config)}
