import re

from flask import Flask, abort, request

from .db import get_cursor

app = Flask(__name__)
PARTITION = re.compile(r"events_\d{6}")


@app.post("/admin/partitions/drop")
def drop_partition():
    table = request.form["table"]
    if not PARTITION.fullmatch(table):
        abort(400)
    cur = get_cursor()
    cur.execute(f"DROP TABLE IF EXISTS {table}")
    return {"dropped": table}
