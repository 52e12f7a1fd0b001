import random

from flask import Flask, make_response, render_template, request

app = Flask(__name__)


@app.get("/pricing")
def pricing():
    variant = request.cookies.get("pricing_variant")
    if variant not in ("a", "b"):
        variant = "b" if random.random() < 0.5 else "a"
    response = make_response(render_template(f"pricing_{variant}.html"))
    response.set_cookie("pricing_variant", variant, max_age=30 * 86400)
    return response
