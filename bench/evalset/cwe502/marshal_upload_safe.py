import marshal
import os

from flask import Flask, request

app = Flask(__name__)
CACHE = os.path.join(os.path.dirname(__file__), "__cache__", "compiled.bin")


@app.post("/bytecode")
def load_bytecode():
    with open(CACHE, "rb") as handle:
        code = marshal.loads(handle.read())
    return {"name": code.co_name}
