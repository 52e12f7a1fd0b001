# Engine probe: a first parameter named request is a web framework's request only where the code
# does not say otherwise. Annotated with another class (the request an HTTP client sends, named
# here only for type checkers), it is that class; unannotated or annotated as a framework's
# request, it is the request. A cookie jar's set_cookie(cookie) sets no response cookie.
import copy
import os
import subprocess
import typing

from django.http import HttpRequest

if typing.TYPE_CHECKING:
    from .outgoing import OutgoingRequest


def certificate(request: "OutgoingRequest") -> str:
    path = request.url.rpartition("/")[2]
    if not os.path.exists(os.path.join("/etc/certs", path)):  # ok path (the client's own request)
        raise OSError(path)
    return path


def lookup(request: HttpRequest):
    return subprocess.check_output("host " + request.GET["name"], shell=True)  # $ command


def ping(request):
    return subprocess.check_output("ping -c1 " + request.GET["host"], shell=True)  # $ command


def merged(jar, cookies):
    fresh = copy.copy(jar)
    for cookie in cookies:
        fresh.set_cookie(cookie)  # ok cookie-secure (a cookie jar stores a Cookie object)
    return fresh
