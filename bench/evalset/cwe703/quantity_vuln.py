from flask import Flask, request

from .orders import place_order

app = Flask(__name__)


@app.post("/orders")
def order():
    quantity = int(request.form["quantity"])
    assert 0 < quantity <= 100
    return place_order(quantity)
