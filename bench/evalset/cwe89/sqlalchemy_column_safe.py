from flask import Flask, request
from sqlalchemy import text

from .db import session

app = Flask(__name__)
COLUMNS = {"mail": "email", "name": "display_name"}


@app.post("/me/field")
def change_field():
    column = COLUMNS[request.json["field"]]
    session.execute(text("UPDATE users SET " + column + " = :v WHERE id = :id"), {"v": request.json["value"], "id": request.json["id"]})
    session.commit()
    return "", 204
