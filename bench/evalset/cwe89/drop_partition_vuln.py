from flask import Flask, request

from .db import get_cursor

app = Flask(__name__)


@app.post("/admin/partitions/drop")
def drop_partition():
    table = request.form["table"]
    cur = get_cursor()
    cur.execute(f"DROP TABLE IF EXISTS {table}")
    return {"dropped": table}
