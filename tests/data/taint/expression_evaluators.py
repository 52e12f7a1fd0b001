# Engine probe: libraries that evaluate a text as an expression: SymPy's sympify and parse_expr
# (eval), numexpr.evaluate (eval), pandas' eval and a DataFrame's query.
import numexpr
import pandas as pd
import sympy
from flask import Flask, request
from sympy.parsing.sympy_parser import parse_expr

app = Flask(__name__)


@app.route("/solve")
def solve():
    text = request.args["expr"]
    sympy.sympify(text)  # $ code
    parse_expr(text)  # $ code
    numexpr.evaluate(text)  # $ code
    sympy.sympify("x**2 + 1")  # ok code
    return "ok"


@app.route("/table")
def table():
    frame = pd.read_csv("data.csv")
    frame.query(request.args["where"])  # $ code
    pd.eval(request.args["formula"])  # $ code
    frame.query("a > 1")  # ok code
    return "ok"
