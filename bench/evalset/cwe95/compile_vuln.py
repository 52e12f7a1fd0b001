from flask import Flask, request

app = Flask(__name__)


@app.post("/eval")
def evaluate():
    code = compile(request.json["expr"], "<expr>", "eval")
    return {"value": eval(code)}
