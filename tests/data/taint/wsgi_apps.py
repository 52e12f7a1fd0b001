# Engine probe: a WSGI application (PEP 3333) is known by what it does, not by its names: it
# calls a parameter with an HTTP status line first. environ is outside data; the status and the
# headers given to start_response are sent as they are.
import os
import subprocess
from urllib.parse import parse_qs

NOT_FOUND = "404 Not Found"


def application(environ, start_response):
    query = parse_qs(environ.get("QUERY_STRING", ""))
    target = query.get("to", ["/"])[0]
    start_response("302 Found", [("Location", target)])  # $ header
    return [b""]


def tool(environ, start_response):
    status = "200 OK"
    start_response(status, [("Content-Type", "text/plain")])  # ok header
    name = environ["PATH_INFO"]
    return [subprocess.check_output("ls " + name, shell=True)]  # $ command


def missing(environ, start_response):
    start_response(NOT_FOUND, [("Content-Type", "text/plain")])
    os.system("logger " + environ["PATH_INFO"])  # $ command
    return [b"missing"]


class Middleware:
    def __init__(self, wrapped):
        self.wrapped = wrapped

    def __call__(self, environ, start_response):
        os.system("logger " + environ.get("HTTP_USER_AGENT", ""))  # $ command
        start_response(f"403 Forbidden", [])
        return [b"no"]


def notify(items, report):
    report("done", items)
    os.system("echo " + items)  # $ command (a public function's parameter, as any library's)


def _private(items, report):
    report("done", items)
    os.system("echo " + items)  # ok command (no status line: not an application, and private)


def synchronise(folder, report):
    report("100 files synced", folder)
    report("200 OK", "done")
    os.system("rsync -a " + folder + " /srv")  # $ command (a public function's parameter: a progress callback is no start_response)
