from flask import Flask, request

app = Flask(__name__)


@app.route("/sum")
def total():
    a = float(request.args["a"])
    b = float(request.args["b"])
    return {"value": eval(f"{a} + {b}")}
