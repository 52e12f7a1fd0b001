"""Entry points known by what they do, not by a decorator or a base class: WSGI and ASGI
applications.

A WSGI application (PEP 3333) calls one of its parameters with an HTTP status line first
(``start_response("404 Not Found", headers)``); an ASGI application (asgiref's specification,
"HTTP & WebSocket ASGI Message Format") awaits one of its parameters with an event message
(``await send({"type": "http.response.start", ...})``), or takes the three parameters the
specification names (``scope, receive, send``) and passes them on, as a middleware does. The
parameter so called is the server's responder (typed by the handler model, whose sinks are
its own); the parameters before it hold the request (``environ``; ``scope`` and ``receive``).
Nothing here looks at a name the analysed code's author chose, other than the specification's
convention.
"""

from __future__ import annotations

import ast
import functools
import re

from .definitions import FunctionInfo
from .model_handlers import Handler
from .walks import walk

# RFC 9110's status line as WSGI passes it: three digits, a space, a reason phrase ("200 OK",
# "404 Not Found"), whose words start with a capital letter by convention (RFC 9110, 15).
_STATUS_LINE = re.compile(r"[1-5][0-9][0-9] [A-Z][A-Za-z-]*( [A-Z][A-Za-z-]*)*$")
# The events an ASGI application sends (the specification's HTTP and WebSocket messages).
_ASGI_SENT = re.compile(r"(http\.response\.(start|body|trailers|zerocopysend|pathsend)"
                        r"|websocket\.(accept|send|close|http\.response\.(start|body)))$")
ASGI_PARAMETERS = ("scope", "receive", "send")
"""The names asgiref's specification gives an ASGI application's parameters."""


def responder(function: FunctionInfo, handler: Handler) -> tuple[int, str] | None:
    """The server's responder among ``function``'s parameters, for a WSGI or ASGI handler model.

    Args:
        function: The function looked at.
        handler: A handler model with ``start_response`` or ``asgi_send`` set (others: None).

    Returns:
        ``(index in function.params, the type the handler model gives it)``, or None when the
        function is not such an application.
    """
    if handler.start_response:
        index = status_caller(function)
        return None if index is None else (index, handler.start_response)
    if handler.asgi_send:
        index = asgi_sender(function)
        return None if index is None else (index, handler.asgi_send)
    return None


def status_caller(function: FunctionInfo) -> int | None:
    """The index in ``function.params`` of the parameter the function calls with an HTTP status
    line first and its headers next (PEP 3333's ``start_response("404 Not Found", headers)``):
    the status a constant, a name assigned one in the function or the module's body, or an
    f-string starting with one; the headers anything but a text. None when there is none (the
    parameter's name does not matter)."""
    node = function.node
    if isinstance(node, ast.Lambda):
        return None
    positions = {param.arg: i for i, param in enumerate(function.params)}
    statuses = set(_module_statuses(function.module.tree))
    calls = []
    for child in walk(node):
        if isinstance(child, ast.Assign) and _status_text(child.value):
            statuses.update(t.id for t in child.targets if isinstance(t, ast.Name))
        elif (isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in positions
              and len(child.args) + len(child.keywords) >= 2 and child.args):
            calls.append(child)
    for call in calls:
        first = call.args[0]
        headers = call.args[1] if len(call.args) > 1 else next(iter(call.keywords)).value
        if isinstance(headers, (ast.Constant, ast.JoinedStr, ast.BinOp)):
            continue  # a text, not the list of header pairs
        if _status_text(first) or isinstance(first, ast.Name) and first.id in statuses:
            assert isinstance(call.func, ast.Name)
            return positions[call.func.id]
    return None


def asgi_sender(function: FunctionInfo) -> int | None:
    """The index in ``function.params`` of the parameter the function calls with an ASGI event
    message (a dict whose ``"type"`` is a constant naming an event an application sends:
    ``send({"type": "http.response.start", "status": 200, "headers": [...]})``), or of ``send``
    when its parameters (after ``self``) are exactly the specification's ``scope, receive,
    send``; None when there is neither (or the function is not a coroutine function)."""
    if not isinstance(function.node, ast.AsyncFunctionDef):
        return None  # the specification's application is a coroutine function
    positions = {param.arg: i for i, param in enumerate(function.params)}
    names = tuple(param.arg for param in function.params[1 if function.bound else 0:])
    if names == ASGI_PARAMETERS:
        return positions["send"]
    for child in walk(function.node):
        if (isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in positions
                and len(child.args) == 1 and isinstance(child.args[0], ast.Dict) and _asgi_event(child.args[0])):
            return positions[child.func.id]
    return None


def _asgi_event(message: ast.Dict) -> bool:
    for key, value in zip(message.keys, message.values):
        if isinstance(key, ast.Constant) and key.value == "type":
            return isinstance(value, ast.Constant) and isinstance(value.value, str) and bool(
                _ASGI_SENT.match(value.value))
    return False


@functools.lru_cache(maxsize=64)
def _module_statuses(tree: ast.Module) -> frozenset[str]:
    """Names the module's body assigns a status line (``NOT_FOUND = "404 Not Found"``), found
    once per module."""
    return frozenset(t.id for statement in tree.body if isinstance(statement, ast.Assign)
                     and _status_text(statement.value) for t in statement.targets if isinstance(t, ast.Name))


def _status_text(expr: ast.expr) -> bool:
    if isinstance(expr, ast.JoinedStr) and expr.values:
        expr = expr.values[0]
    return isinstance(expr, ast.Constant) and isinstance(expr.value, str) and bool(_STATUS_LINE.match(expr.value))
