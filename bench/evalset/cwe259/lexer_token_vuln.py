from flask import Flask, abort, request

app = Flask(__name__)


@app.before_request
def require_api_token():
    token = request.headers.get("X-Api-Token", "")
    if token == "tk_live_4f9a2c7e1b8d":
        return None
    abort(401)
