# Engine probe: reading a property calls its getter (Python's descriptors).
import os
from functools import cached_property

from flask import Flask, request

app = Flask(__name__)


class Query:
    def __init__(self, incoming):
        self.incoming = incoming

    @property
    def term(self):
        return request.args["term"]

    @property
    def own(self):
        return "uptime"  # a getter's constant, whatever the object holds

    @property
    def fixed(self):
        return "uptime"

    @cached_property
    def sort(self):
        return self.incoming.args["sort"]

    def command(self):
        return "grep " + self.term

    @property
    def looping(self):
        return self.looping  # a getter that reads itself: the reads must end

    @property
    def first(self):
        return self.second + request.args["first"]

    @property
    def second(self):
        return self.first


@app.route("/search")
def search():
    query = Query(request)
    os.system(query.command())  # $ command
    os.system(query.term)  # $ command
    os.system(query.fixed)  # ok command
    os.system(query.sort)  # $ command
    os.system(query.looping)
    os.system(Query(request.args["x"]).own)  # ok command
    os.system(query.first)  # $ command
    return "done"
