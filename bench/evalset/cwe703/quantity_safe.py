from flask import Flask, abort, request

from .orders import place_order

app = Flask(__name__)


@app.post("/orders")
def order():
    quantity = int(request.form["quantity"])
    if not 0 < quantity <= 100:
        abort(400)
    return place_order(quantity)
