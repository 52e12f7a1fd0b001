"""What a test that a text starts with a constant proves: where ``x.startswith(C)`` holds, ``x``
starts with ``C`` (Python's semantics), so its value gets ``C`` as its constant start. A URL
whose checked start fixes the scheme and host is then seen as such by the URL sinks (a partial
SSRF, a redirect that stays on the site: ``Sink.host_fixed``), as a URL built from that
constant would be.
"""

from __future__ import annotations

import ast
import os
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .interp import Frame


def started(frame: Frame, test: ast.Call, truth: bool) -> list[tuple[str, frozenset[str], str, object]]:
    """The proof ``x.startswith(C)`` found true gives (``conditions.Proof``): ``x`` with ``C``
    (or the start that every text of a tuple ``C`` shares) as its constant prefix, when that
    is longer than the prefix known before; nothing otherwise."""
    func = test.func
    if not (truth and isinstance(func, ast.Attribute) and func.attr == "startswith" and isinstance(func.value, ast.Name)
            and len(test.args) == 1 and not test.keywords):
        return []
    name = func.value.id
    current = frame.env.get(name)
    checked = frame.expr(test.args[0])
    options = [checked] if checked.is_const else list((checked.items or {}).values())
    if current is None or not options or not all(o.is_const and isinstance(o.const, str) for o in options):
        return []
    start = os.path.commonprefix([str(o.const) for o in options])
    if not start or len(start) <= len(current.prefix or ""):
        return []
    return [(name, frozenset(), f"the check {ast.unparse(test)[:60]}", replace(current, prefix=start))]
