# Engine probe: GraphQL resolvers are entry points. The arguments of a query or a mutation are
# the client's data; the parent object and the resolve info are the framework's; an argument
# the schema parses as a number is safe.
import os
import sqlite3
import subprocess

import ariadne
import graphene
import requests
import strawberry
from strawberry.types import Info


class Catalogue(graphene.ObjectType):
    lookup = graphene.String(term=graphene.String())
    count = graphene.Int(limit=graphene.Int())

    def resolve_lookup(parent, info, term):
        db = sqlite3.connect("shop.db")
        return db.execute("SELECT name FROM items WHERE name = '%s'" % term).fetchone()  # $ sql

    @staticmethod
    def resolve_count(root, info, limit: int = 10):
        db = sqlite3.connect("shop.db")
        return db.execute("SELECT count(*) FROM items LIMIT %d" % limit).fetchone()  # ok sql

    def resolve_owner(self, info):
        return os.system("id -un " + str(info))  # ok command (the resolve info is the framework's)


class Fetch(graphene.Mutation):
    class Arguments:
        address = graphene.String()

    ok = graphene.Boolean()

    def mutate(root, info, address):
        requests.get(address)  # $ ssrf
        return Fetch(ok=True)


@strawberry.type
class Query:
    @strawberry.field
    def ping(self, info: Info, host: str) -> str:
        return subprocess.check_output("ping -c 1 " + host, shell=True).decode()  # $ command

    @strawberry.field
    def page(self, info: Info, number: int) -> str:
        return subprocess.check_output("seq %d" % number, shell=True).decode()  # ok command


query = ariadne.QueryType()


@query.field("report")
def resolve_report(_, info, name):
    with open(os.path.join("/srv/reports", name)) as handle:  # $ path
        return handle.read()

