from flask import Flask, request

app = Flask(__name__)


@app.post("/quote")
def quote():
    quantity = request.form["quantity"]
    unit_price = request.form["unit_price"]
    total = eval("%s * %s" % (quantity, unit_price))
    return {"total": total}
