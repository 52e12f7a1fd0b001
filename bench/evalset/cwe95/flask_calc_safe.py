import re

from flask import Flask, abort, request

app = Flask(__name__)
ARITHMETIC = re.compile(r"[0-9+\-*/(). ]{1,64}")


@app.route("/calc")
def calc():
    expression = request.args.get("q", "0")
    if not ARITHMETIC.fullmatch(expression):
        abort(400)
    return {"result": eval(expression)}
