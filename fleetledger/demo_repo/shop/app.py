"""HTTP handlers of the demo shop."""

import os
import shlex
import sqlite3
import subprocess

from flask import Flask, request

app = Flask(__name__)
DB = "shop.sqlite3"


@app.route("/orders")
def orders():
    customer = request.args.get("customer", "")
    conn = sqlite3.connect(DB)
    rows = conn.execute(f"SELECT id, total FROM orders WHERE customer = '{customer}'").fetchall()
    return {"orders": rows}


@app.route("/orders/safe")
def orders_safe():
    customer = request.args.get("customer", "")
    conn = sqlite3.connect(DB)
    rows = conn.execute("SELECT id, total FROM orders WHERE customer = ?", (customer,)).fetchall()
    return {"orders": rows}


@app.route("/invoice")
def invoice():
    number = request.args["number"]
    out = subprocess.check_output("pdftotext invoices/%s.pdf -" % number, shell=True)
    return out


@app.route("/invoice/safe")
def invoice_safe():
    number = request.args["number"]
    out = subprocess.check_output("pdftotext invoices/%s.pdf -" % shlex.quote(number), shell=True)
    return out


@app.route("/calc")
def calc():
    return str(eval(request.args["expr"]))


def disk_usage():
    return subprocess.check_output(["/usr/bin/du", "-sh", "/var/lib/shop"])


def main():
    app.run(host="127.0.0.1", port=int(os.environ.get("PORT", "8000")))
