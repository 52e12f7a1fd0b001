from flask import Flask, request
from sqlalchemy import text

from .db import session

app = Flask(__name__)


@app.post("/me/email")
def change_email():
    email = request.json["email"]
    session.execute(text("UPDATE users SET email = '" + email + "' WHERE id = :id"), {"id": request.json["id"]})
    session.commit()
    return "", 204
