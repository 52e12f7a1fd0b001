import json

from flask import Flask, request

app = Flask(__name__)


@app.post("/models")
def upload_model():
    data = request.files["model"].read()
    model = json.loads(data)
    return {"type": type(model).__name__}
