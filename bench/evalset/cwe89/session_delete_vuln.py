from flask import Flask, request

from .db import connection

app = Flask(__name__)


@app.post("/logout-all")
def logout_all():
    query = "DELETE FROM sessions WHERE user_id = %s" % request.form["uid"]
    connection().execute(query)
    return "", 204
