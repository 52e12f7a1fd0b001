# Engine probe: where a module imports no web framework, a first parameter named request is a
# served request only where the code does not say otherwise: annotated with another class (the
# request an HTTP client sends, named here only for type checkers), it is that class;
# unannotated, it may be any framework's request.
import os
import subprocess
import typing

if typing.TYPE_CHECKING:
    from .outgoing import OutgoingRequest


def certificate(request: "OutgoingRequest") -> str:
    path = request.url.rpartition("/")[2]
    if not os.path.exists(os.path.join("/etc/certs", path)):  # ok path (the client's own request)
        raise OSError(path)
    return path


def resolve(request):
    return subprocess.check_output("host " + request.args["name"], shell=True)  # $ command


def lookup(request: typing.Any):
    return subprocess.check_output("dig " + request.args["name"], shell=True)  # $ command (Any says nothing)


def search(request: "SearchRequest"):
    return subprocess.check_output("grep " + request.args["q"], shell=True)  # $ command (a name not imported from the package)
