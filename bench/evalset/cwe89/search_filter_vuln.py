from fastapi import FastAPI

from .db import connection

app = FastAPI()


@app.get("/customers")
def customers(name: str | None = None):
    query = "SELECT id, name FROM customers WHERE active = 1"
    if name:
        query += " AND name LIKE '%" + name + "%'"
    with connection() as conn:
        return conn.execute(query).fetchall()
