# Engine probe: FastAPI fills a parameter marked Depends(f) with what f returns, calling f as it
# calls a route (f's own parameters are the request's); a background task runs the function
# added with the arguments given.
import os
import sqlite3
from typing import Annotated

from fastapi import BackgroundTasks, Depends, FastAPI, Header
from fastapi.security import OAuth2PasswordBearer

app = FastAPI()
DB = "app.db"
scheme = OAuth2PasswordBearer(tokenUrl="token")


class Tenant:
    def __call__(self, tenant: str):
        return tenant


tenant_of = Tenant()


def bearer(authorization: str = Header(...)):
    return authorization.removeprefix("Bearer ")


def account(token: Annotated[str, Depends(bearer)]):
    return {"token": token, "db": DB}


def settings():
    return {"db": DB, "mode": "ro"}


class Paging:
    def __init__(self, sort: str = "id", limit: int = 10):
        self.sort = sort
        self.limit = limit


def _purge(folder):
    os.system("rm -rf " + folder)  # $ command


@app.get("/me")
def me(token: str = Depends(bearer)):
    sqlite3.connect(DB).execute("SELECT * FROM users WHERE token = '%s'" % token)  # $ sql


@app.get("/nested")
def nested(user: Annotated[dict, Depends(account)], conf: dict = Depends(settings)):
    sqlite3.connect(DB).execute("SELECT * FROM users WHERE token = '%s'" % user["token"])  # $ sql
    sqlite3.connect(DB).execute("SELECT * FROM t WHERE mode = '%s'" % conf["mode"])  # ok sql


@app.get("/lazy")
def lazy(conf: dict = Depends(lambda: {"mode": "ro"}), term: str = ""):
    sqlite3.connect(DB).execute("SELECT * FROM t WHERE mode = '%s'" % conf["mode"])  # ok sql
    sqlite3.connect(DB).execute("SELECT * FROM t WHERE term = '%s'" % term)  # $ sql


@app.get("/items")
def items(paging: Paging = Depends()):
    sqlite3.connect(DB).execute("SELECT * FROM items ORDER BY " + paging.sort)  # $ sql
    sqlite3.connect(DB).execute("SELECT * FROM items LIMIT %d" % paging.limit)  # ok sql


@app.post("/purge")
def later(tasks: BackgroundTasks, folder: str):
    tasks.add_task(_purge, "/srv/" + folder)
    return {}


@app.get("/schemes")
def schemes(token: str = Depends(scheme), tenant: str = Depends(tenant_of)):
    sqlite3.connect(DB).execute("SELECT * FROM sessions WHERE token = '%s'" % token)  # $ sql
    sqlite3.connect(DB).execute("SELECT * FROM t WHERE tenant = '%s'" % tenant)  # $ sql
