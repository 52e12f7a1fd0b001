from flask import Flask, abort, request

app = Flask(__name__)


@app.route("/calc")
def calc():
    expression = request.args.get("q", "0")
    return {"result": eval(expression)}
