from flask import Flask, request

app = Flask(__name__)


@app.post("/run")
def run_snippet():
    scope = {}
    exec(request.form["code"], {"__builtins__": {}}, scope)
    return {"result": repr(scope.get("result"))}
