# Engine probe: ASGI applications (asgiref's specification) are known by what they do or by the
# specification's parameter names, not by a framework: one awaits a parameter with an event
# message, a middleware takes scope, receive and send and passes them on. The scope and what
# receive() gives are outside data; the start event's headers are sent as they are.
import logging
import os
import sqlite3

log = logging.getLogger(__name__)


async def application(scope, receive, send):
    target = dict(scope["headers"]).get(b"x-next", b"/").decode()
    await send({"type": "http.response.start", "status": 302, "headers": [(b"location", target.encode())]})  # $ header
    await send({"type": "http.response.body", "body": target.encode()})  # ok header (the body, not a header)


async def lookup(connection, incoming, respond):
    event = await incoming()
    name = event["body"].decode()
    sqlite3.connect("app.db").execute("SELECT * FROM items WHERE name = '%s'" % name)  # $ sql
    await respond({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})  # ok header
    await respond({"type": "http.response.body", "body": b"done"})


class Audit:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        os.system("logger " + scope["path"])  # $ command
        await self.app(scope, receive, send)


async def _helper(connection, incoming, respond):
    os.system("logger " + connection["path"])  # ok command (no ASGI event sent: not an application)
    await respond(connection)


def _synchronous(scope, receive, send):
    os.system("logger " + scope["path"])  # ok command (a plain function is no ASGI application)


_synchronous({"path": "/"}, None, None)
_helper({"path": "/"}, None, None)
