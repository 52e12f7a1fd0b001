# Engine probe: in a module that imports a framework, a view's first parameter named request is
# that framework's request whatever its annotation says (the framework passes its request; an
# annotation must not hide a view's flows). A cookie jar's set_cookie(cookie) sets no response
# cookie. (http_client.py: where no framework is imported, the annotation decides.)
import copy
import subprocess

from django.http import HttpRequest


def lookup(request: HttpRequest):
    return subprocess.check_output("host " + request.GET["name"], shell=True)  # $ command


class Decoy:
    pass


def disguised(request: Decoy):
    return subprocess.check_output("dig " + request.GET["name"], shell=True)  # $ command (Django passes its request)


def ping(request):
    return subprocess.check_output("ping -c1 " + request.GET["host"], shell=True)  # $ command


def merged(jar, cookies):
    fresh = copy.copy(jar)
    for cookie in cookies:
        fresh.set_cookie(cookie)  # ok cookie-secure (a cookie jar stores a Cookie object)
    return fresh


def remember(response, settings):
    response.set_cookie(**settings)  # ok cookie-secure ok cookie-httponly (the flags may be among the unpacked keywords, as a variable flag is not known)
