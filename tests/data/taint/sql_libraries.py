# Engine probe: raw SQL through peewee, encode/databases, Tortoise ORM, Prisma and pg8000; their
# parameterised forms are safe.
import peewee
import pg8000
import pg8000.native
from databases import Database
from flask import Flask, request
from prisma import Prisma
from tortoise import connections

app = Flask(__name__)
store = peewee.SqliteDatabase("app.db")
database = Database("sqlite:///app.db")


class Note(peewee.Model):
    body = peewee.TextField()


@app.route("/peewee")
def with_peewee():
    term = request.args["q"]
    store.execute_sql("SELECT * FROM note WHERE body = '%s'" % term)  # $ sql
    store.execute_sql("SELECT * FROM note WHERE body = ?", (term,))  # ok sql
    rows = Note.raw("SELECT * FROM note WHERE body = '%s'" % term)  # $ sql
    Note.select().where(peewee.SQL("body = '%s'" % term))  # $ sql
    return str(len(list(rows)))


@app.route("/databases")
async def with_databases():
    term = request.args["q"]
    await database.fetch_all(query="SELECT * FROM note WHERE body = '%s'" % term)  # $ sql
    await database.fetch_all(query="SELECT * FROM note WHERE body = :b", values={"b": term})  # ok sql
    conn = connections.get("default")
    await conn.execute_query("SELECT * FROM note WHERE body = '%s'" % term)  # $ sql
    return "ok"


def rows_of(compiler, result_type):
    # an execute_sql() of another library (Django's SQL compiler takes a result type)
    return compiler.execute_sql(result_type)  # ok sql


@app.route("/prisma")
async def with_prisma():
    term = request.args["q"]
    client = Prisma()
    await client.query_raw("SELECT * FROM note WHERE body = '" + term + "'")  # $ sql
    await client.execute_raw(query=f"DELETE FROM note WHERE body = '{term}'")  # $ sql
    await client.query_first("SELECT * FROM note WHERE body = $1", term)  # ok sql
    return "done"


@app.route("/pg8000")
def with_pg8000():
    term = request.args["q"]
    legacy = pg8000.connect(user="app")
    legacy.run("SELECT * FROM note WHERE body = '%s'" % term)  # $ sql
    legacy.run("SELECT * FROM note WHERE body = :b", b=term)  # ok sql
    legacy.cursor().execute("SELECT * FROM note WHERE body = '%s'" % term)  # $ sql
    native = pg8000.native.Connection("app")
    native.run(f"SELECT * FROM note WHERE body = '{term}'")  # $ sql
    return "ok"
