"""CWE-295, certificate verification turned off."""

from __future__ import annotations

import ast
import ipaddress
from collections.abc import Callable
from urllib.parse import urlsplit

from ..assessment import LIKELY, PROBABLE, Assessment, Site
from ..sinks import keyword
from ..taint import Tracer

CWE = 295
_LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})


def assess(site: Site) -> Assessment | None:
    """Judges ``verify=False`` on an HTTP client call (B501) or an unverified SSL context (B323).

    Without verification anyone on the network path can impersonate the server and read or
    change the traffic. The exception is a URL whose host is a fixed loopback address
    (``localhost``, ``127.0.0.0/8``, ``::1``): that traffic never leaves the machine.

    Args:
        site: The flagged call.

    Returns:
        The assessment, or None when the node is not a call.
    """
    node = site.node
    if not isinstance(node, ast.Call):
        return None
    tree = site.tree
    name = tree.qualname(node.func) or tree.segment(node.func, 40)
    if name.endswith("_create_unverified_context"):
        fact = f"{name}() makes an SSL context that accepts any certificate, so a man in the middle can impersonate the server."
        return Assessment(verdict="vulnerable", confidence=PROBABLE, cwe=CWE, facts=(fact,),
                          signals={"sink": "tls", "source": "none", "sanitised": False})
    url = _url_argument(node)
    host = _fixed_host(url, Tracer(tree, "any").literal) if url is not None else None
    if host is not None and _is_loopback(host):
        fact = f"{name}() turns certificate checks off, but only for the fixed loopback host {host!r}; the traffic never leaves the machine."
        return Assessment(verdict="not_vulnerable", confidence=LIKELY, cwe=CWE, facts=(fact,),
                          signals={"sink": "tls", "source": "constant", "sanitised": False, "loopback": True})
    target = f"the host {host!r}" if host else "a host this code does not fix"
    fact = f"{name}() sends the request to {target} with certificate verification off, so a man in the middle can read and change it."
    return Assessment(verdict="vulnerable", confidence=LIKELY, cwe=CWE, facts=(fact,),
                      signals={"sink": "tls", "source": "constant" if host else "unknown", "sanitised": False})


def _url_argument(call: ast.Call) -> ast.expr | None:
    found = keyword(call, "url")
    if found is not None:
        return found
    method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    index = 1 if method == "request" else 0
    return call.args[index] if len(call.args) > index else None


def _fixed_host(url: ast.expr, literal: Callable[[ast.expr], ast.expr]) -> str | None:
    """Returns the host a URL expression starts with, when its constant beginning fixes it.

    The URL is read left to right through concatenation and f-strings, following names bound
    to one value (``REGISTRY + "/v2/_catalog"`` with ``REGISTRY = "https://127.0.0.1:5000"``),
    up to the first part that is not constant.
    """
    pending: list[ast.expr] = [url]
    prefix = ""
    complete = True
    steps = 0
    while pending and steps < 64:
        steps += 1
        part = literal(pending.pop())
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            prefix += part.value
        elif isinstance(part, ast.BinOp) and isinstance(part.op, ast.Add):
            pending.extend((part.right, part.left))
        elif isinstance(part, ast.JoinedStr):
            pending.extend(reversed(part.values))
        elif isinstance(part, ast.FormattedValue) and part.format_spec is None:
            pending.append(part.value)
        else:
            complete = False
            break
    if pending:
        complete = False
    if "://" not in prefix:
        return None
    rest = prefix.split("://", 1)[1]
    if not complete and not any(mark in rest for mark in ":/?#"):
        return None  # the host itself continues in an interpolated part
    host = urlsplit(prefix).hostname
    return host or None


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
