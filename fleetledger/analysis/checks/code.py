"""CWE-95/94, code injection: ``eval``/``exec`` of text an attacker can shape."""

from __future__ import annotations

import ast

from ..assessment import Assessment, Site, from_trace
from ..taint import Tracer


def assess(site: Site) -> Assessment | None:
    """Judges ``eval``/``exec`` (bandit B307, B102).

    The evaluated text is traced to its origins. Restricting ``globals`` (``{"__builtins__":
    {}}``) is not counted as a fix: attribute walks such as ``().__class__.__base__`` reach
    builtins again. Only constants, numbers and text validated to arithmetic characters are
    safe.

    Args:
        site: The flagged call.

    Returns:
        The assessment (CWE-95 for ``eval``, CWE-94 for ``exec``), or None when the node is
        not a call with an argument.
    """
    node = site.node
    if not isinstance(node, ast.Call) or not node.args:
        return None
    name = site.tree.qualname(node.func) or "eval"
    cwe = 94 if name.rsplit(".", 1)[-1] == "exec" else 95
    lead = f"{name}() runs its argument as Python code."
    if len(node.args) > 1 or node.keywords:
        lead += " Restricted globals do not make that safe (attribute walks reach the builtins again)."
    return from_trace(Tracer(site.tree, "code").trace(node.args[0]), cwe=cwe, sink="code",
                      value="the evaluated text", facts=(lead,))
