"""A relative URL check: a URL with no scheme, no host, and not starting with ``//`` or ``/\\``
is a path on this site, so it is a safe redirect target. Part of ``conditions``.

An empty host alone proves nothing for a redirect: browsers follow ``/\\evil.example`` and
``///evil.example`` to another site, and ``javascript:...`` has no host either. The three
checks together, in one conjunction (``a and b and c`` found true, or ``a or b or c`` found
false), are the check Django's ``url_has_allowed_host_and_scheme`` makes for a URL without a
host, and the one ``fleetledger fix`` writes (``jobs/scan/fixes/web.same_site_redirect``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .interp import Frame

_HOST_PARTS = frozenset({"netloc", "hostname"})
_PROTOCOL_RELATIVE = ("//", "/\\")


def relative(frame: Frame, values: list[ast.expr], truth: bool,
             guards_of: Callable[[Frame, ast.Call], list[tuple[Any, ast.expr | None]]]) -> list[tuple[str, frozenset[str], str, None]]:
    """The variables a conjunction proves to be relative URLs, safe for redirects.

    Args:
        frame: The frame the condition is tested in.
        values: The conjunction's operands.
        truth: The truth each operand has on the path (True for ``and``, False for ``or``).
        guards_of: ``conditions._guards_of``: the guard models a call matches, with what it
            checks (``urlparse(x)`` checks ``x``).

    Returns:
        ``(variable, {"redirect"}, what checked it, None)`` per variable checked all three ways.
    """
    hosts: set[str] = set()
    schemes: set[str] = set()
    slashes: set[str] = set()
    for value in values:
        found = _empty_part(frame, value, truth, guards_of)
        if found is not None:
            name, part = found
            (hosts if part in _HOST_PARTS else schemes if part == "scheme" else set()).add(name)
        name = _not_protocol_relative(frame, value, truth)
        if name is not None:
            slashes.add(name)
    return [(name, frozenset({"redirect"}), "a relative URL check (no scheme, no host, not // or /\\)", None)
            for name in sorted(hosts & schemes & slashes)]


def _empty_part(frame: Frame, test: ast.expr, truth: bool,
                guards_of: Callable[[Frame, ast.Call], list[tuple[Any, ast.expr | None]]]) -> tuple[str, str] | None:
    """``(x, part)`` when ``test`` with ``truth`` says ``urlparse(x).part`` is empty."""
    test, truth = _unnegated(test, truth)
    if truth or not isinstance(test, ast.Attribute):
        return None
    owner = test.value
    if isinstance(owner, ast.Name) and isinstance(frame.conditions.get(owner.id), ast.Call):
        owner = frame.conditions[owner.id]
    if not isinstance(owner, ast.Call):
        return None
    for guard, checked in guards_of(frame, owner):
        direct = owner.args[guard.arg] if guard.arg < len(owner.args) else None  # not through urljoin
        if guard.compare and isinstance(checked, ast.Name) and checked is direct:
            return checked.id, test.attr
    return None


def _not_protocol_relative(frame: Frame, test: ast.expr, truth: bool) -> str | None:
    """``x`` when ``test`` with ``truth`` says ``x.startswith(("//", "/\\"))`` is false."""
    test, truth = _unnegated(test, truth)
    if truth or not (isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith"
                     and isinstance(test.func.value, ast.Name) and len(test.args) == 1 and not test.keywords):
        return None
    prefixes = frame.expr(test.args[0])
    texts = [prefixes.const] if prefixes.is_const else [item.const for item in (prefixes.items or {}).values()
                                                       if item.is_const]
    if all(any(isinstance(t, str) and wanted.startswith(t) for t in texts) for wanted in _PROTOCOL_RELATIVE):
        return test.func.value.id
    return None


def _unnegated(test: ast.expr, truth: bool) -> tuple[ast.expr, bool]:
    """``not x`` found true is ``x`` found false, through any number of ``not``."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, truth = test.operand, not truth
    return test, truth
