# Engine probe: unsafe reflection (CWE-470). A name from outside that getattr() reads is a sink
# where what it read is called: the name chooses which method or class runs. Reading an
# attribute by such a name, or a name with a constant start, chooses nothing the author did not
# list.
import sys

from flask import request


def dispatch():
    handler = getattr(sys.modules[__name__], request.args["action"])
    return handler(request.args["value"])  # $ reflection


def prefixed():
    handler = getattr(sys.modules[__name__], "do_" + request.args["action"])
    return handler()  # ok reflection (only the do_ functions)


def read_only():
    value = getattr(request, request.args["field"], None)
    return str(value)  # ok reflection (nothing is called)


def chosen_by_constant(kind):
    handler = getattr(sys.modules[__name__], "do_" + kind)
    return handler()  # ok reflection


def invoke(obj, path, *args):
    method = getattr(obj, path)
    return method(*args)  # $ reflection


def rebuild(meta):
    cls = getattr(sys.modules[meta["module"]], meta["type"])
    return cls(*meta["args"])  # $ reflection


def do_ping():
    return "pong"


def digest(data, algorithm):
    import hashlib
    hasher = getattr(hashlib, algorithm)
    return hasher(data)  # ok reflection (a name the caller passes selects among hashlib's functions)


def digest_requested():
    import hashlib
    hasher = getattr(hashlib, request.args["algorithm"])
    return hasher(b"x")  # $ reflection


def rebuild_checked(meta):
    cls = getattr(sys.modules[meta["module"]], meta["type"])
    if not isinstance(cls, type) or not issubclass(cls, Exception):
        raise ValueError(meta["type"])
    return cls(*meta["args"])  # ok reflection (only an exception class)


def _pick(owner, name):
    return getattr(owner, name)


def dispatch_through_helper():
    return _pick(sys.modules[__name__], request.args["action"])()  # $ reflection


def constant_through_helper():
    return _pick(request, "get_json")()  # ok reflection (the object's data chooses nothing)
