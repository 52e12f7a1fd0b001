import os

from flask import Flask, request

app = Flask(__name__)
HOOK_FILE = os.path.join(os.path.dirname(__file__), "hooks", "on_run.py")


@app.post("/run")
def run_snippet():
    scope = {"payload": request.form["code"]}
    with open(HOOK_FILE) as handle:
        exec(handle.read(), {"__builtins__": __builtins__}, scope)
    return {"result": repr(scope.get("result"))}
