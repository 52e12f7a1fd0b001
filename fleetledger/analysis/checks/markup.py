"""CWE-79, cross-site scripting: text marked as safe HTML (``mark_safe``, ``SafeString``, ``Markup``)."""

from __future__ import annotations

import ast

from ..assessment import PROBABLE, Assessment, Site, from_trace
from ..bindings import dominating_tests, single_value
from ..taint import Tracer
from ..tree import SourceTree

CWE = 79
# Calls that exempt text from template escaping (Django's safestring, MarkupSafe).
_MARKERS = frozenset({"mark_safe", "SafeString", "SafeText", "SafeUnicode", "SafeBytes", "Markup"})
# Types of text that is already marked safe.
_SAFE_TYPES = frozenset({"SafeData", "SafeString", "SafeText", "SafeUnicode", "SafeBytes", "Markup"})
_MAX_TERMS = 64


def assess(site: Site) -> Assessment | None:
    """Judges ``mark_safe(x)``, ``SafeString(x)`` or ``Markup(x)`` (bandit B308, B703, B704).

    Marking text safe is an assertion that it holds no markup an attacker wrote; the template
    engine then inserts it unescaped. It is cross-site scripting when outside data reaches it
    unescaped. Constant markup, text escaped first (``escape``, ``conditional_escape``,
    ``format_html``, ``html.escape``), the output of template rendering (the engine escaped
    every variable) and numbers are safe. So is re-marking a value derived from input that was
    already safe (``if isinstance(value, SafeData): result = mark_safe(result)``): that keeps
    safety across a transformation, it does not assert it. A parameter or a value from other
    code is judged by the analyst's rules for those (in library code, marking a caller's text
    safe is the caller's decision).

    Args:
        site: The flagged call.

    Returns:
        The assessment (CWE-79), or None when the node is not such a call with an argument.
    """
    node = site.node
    if not isinstance(node, ast.Call) or not node.args:
        return None
    tree = site.tree
    name = tree.qualname(node.func) or tree.segment(node.func, 40)
    if name.rsplit(".", 1)[-1] not in _MARKERS:
        return None
    lead = f"{name}() exempts its argument from the template engine's HTML escaping."
    preserved = _already_safe(tree, node)
    if preserved is not None:
        fact = (f"It runs only when the input was already safe HTML ({preserved}), so it carries that safety over to the "
                "transformed value; it does not vouch for new text.")
        return Assessment(verdict="not_vulnerable", confidence=PROBABLE, cwe=CWE, facts=(lead, fact),
                          signals={"sink": "html", "source": "sanitised", "sanitised": True})
    return from_trace(Tracer(tree, "html").trace(node.args[0]), cwe=CWE, sink="html", value="the text marked safe",
                      facts=(lead,))


def _already_safe(tree: SourceTree, node: ast.Call) -> str | None:
    """Names the ``isinstance(x, SafeData)`` condition under which ``node`` runs, or None."""
    tests: list[tuple[ast.expr, bool]] = []
    child: ast.AST = node
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, ast.IfExp):
            if child is ancestor.body:
                tests.append((ancestor.test, True))
            elif child is ancestor.orelse:
                tests.append((ancestor.test, False))
        if isinstance(ancestor, ast.stmt):
            break
        child = ancestor
    tests.extend(dominating_tests(tree, node))
    for test, holds in tests:
        if holds and _checks_safe_type(tree, test):
            return f"`{tree.segment(test, 50)}`, line {test.lineno}"
    return None


def _checks_safe_type(tree: SourceTree, test: ast.expr) -> bool:
    """True when the condition requires some value to be an instance of a safe-HTML type."""
    stack = [test]
    seen = 0
    while stack and seen < _MAX_TERMS:
        expr = stack.pop()
        seen += 1
        if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.And):
            stack.extend(expr.values)
        elif isinstance(expr, ast.Name):
            bound = single_value(tree, expr)
            if bound is not None and bound is not expr:
                stack.append(bound)
        elif isinstance(expr, ast.Call) and (tree.qualname(expr.func) or "") == "isinstance" and len(expr.args) == 2:
            types = expr.args[1].elts if isinstance(expr.args[1], ast.Tuple) else [expr.args[1]]
            if types and all((tree.qualname(t) or "").rsplit(".", 1)[-1] in _SAFE_TYPES for t in types):
                return True
    return False
