import xml.etree.ElementTree as ET

from flask import Flask, jsonify, request

app = Flask(__name__)


@app.post("/api/orders/import")
def import_orders():
    root = ET.fromstring(request.data)
    orders = [
        {"sku": item.findtext("sku"), "qty": int(item.findtext("qty", "0"))}
        for item in root.iter("item")
    ]
    return jsonify(imported=len(orders), orders=orders)
