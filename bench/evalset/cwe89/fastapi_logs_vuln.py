from datetime import date

from fastapi import FastAPI

from .db import cursor

app = FastAPI()


@app.get("/logs")
def logs(level: str, day: date):
    sql = "SELECT msg FROM logs WHERE level = '%s' AND day = '%s'" % (level, day)
    cur = cursor()
    cur.execute(sql)
    return [r[0] for r in cur.fetchall()]
