"""CWE-79, cross-site scripting: text marked as safe HTML (``mark_safe``, ``SafeString``, ``Markup``)."""

from __future__ import annotations

import ast
import dataclasses
import re

from .. import bindings, sources
from ..assessment import PROBABLE, Assessment, Site, from_trace
from ..bindings import dominating_tests, single_value
from ..taint import Tracer
from ..tree import SourceTree

CWE = 79
# The start of an HTML tag written into a string: "<td>", '<a href="', "</mark>", "<!--".
_TAG = re.compile(r"<(?:/?[A-Za-z][A-Za-z0-9-]*(?=[\s/>]|$)|!)")
_MAX_MARKUP_NODES = 256
# Calls that exempt text from template escaping (Django's safestring, MarkupSafe).
_MARKERS = frozenset({"mark_safe", "SafeString", "SafeText", "SafeUnicode", "SafeBytes", "Markup"})
# Types of text that is already marked safe.
_SAFE_TYPES = frozenset({"SafeData", "SafeString", "SafeText", "SafeUnicode", "SafeBytes", "Markup"})
_MAX_TERMS = 64
# Names followed from the marked value back to a filter's parameter (comprehension variables).
_MAX_HOPS = 4


def assess(site: Site) -> Assessment | None:
    """Judges ``mark_safe(x)``, ``SafeString(x)`` or ``Markup(x)`` (bandit B308, B703, B704).

    Marking text safe is an assertion that it holds no markup an attacker wrote; the template
    engine then inserts it unescaped. It is cross-site scripting when outside data reaches it
    unescaped. Constant markup, text escaped first (``escape``, ``conditional_escape``,
    ``format_html``, ``html.escape``), the output of template rendering (the engine escaped
    every variable) and numbers are safe. So is re-marking a value derived from input that was
    already safe (``if isinstance(value, SafeData): result = mark_safe(result)``): that keeps
    safety across a transformation, it does not assert it. Text passed through a translation
    table that replaces ``<``, ``>`` and ``&`` (Django's ``json_script``) is escaped. A template
    filter that does nothing but mark its input safe (Django's ``|safe``) leaves the decision
    to the template author who applies it. The parameters of Django's hooks (template filters
    and tags, a widget's ``render``, admin display methods: ``sources.hook_kind``) are outside
    data. Another parameter or a value from other code is judged by the analyst's rules for
    those (in library code, marking a caller's text safe is the caller's decision, but markup
    the function writes around it is its own: signal ``builds_markup``).

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
    marker = _marking_filter(tree, node.args[0])
    if marker is not None:
        fact = (f"The template filter {marker}() does nothing but mark its input safe, unchanged: a template applies it "
                "to say that a value is trusted HTML (as with Django's |safe), so whether that holds is the template "
                "author's decision, not this code's.")
        return Assessment(verdict="not_vulnerable", confidence=PROBABLE, cwe=CWE, facts=(lead, fact),
                          signals={"sink": "html", "source": "parameter", "sanitised": False})
    found = from_trace(Tracer(tree, "html").trace(node.args[0]), cwe=CWE, sink="html", value="the text marked safe",
                       facts=(lead,))
    tag = builds_markup(tree, node.args[0])
    if tag is not None:
        found = dataclasses.replace(found, signals={**found.signals, "builds_markup": tag})
    return found


def builds_markup(tree: SourceTree, expr: ast.expr) -> str | None:
    """Returns the first HTML tag written in this file's code for the marked text, or None.

    Walks the expression and what the names in it are bound to (a bounded number of nodes):
    a string constant with a tag (``f"<td>{value}</td>"``) means the code composes markup
    around its values and vouches for the whole, rather than passing on text someone else
    wrote.
    """
    stack: list[ast.AST] = [expr]
    seen = 0
    while stack and seen < _MAX_MARKUP_NODES:
        current = stack.pop()
        seen += 1
        if isinstance(current, ast.Constant) and isinstance(current.value, str):
            match = _TAG.search(current.value)
            if match is not None:
                return match.group(0)
        elif isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load):
            stack.extend(b.node for b in bindings.reaching(tree, current, lambda test, holds: None)
                         if b.kind == "value" and b.node is not None)
        elif not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(reversed(list(ast.iter_child_nodes(current))))
    return None


def _marking_filter(tree: SourceTree, argument: ast.expr) -> str | None:
    """Names the template filter whose parameter is marked safe as it is, or None.

    ``return mark_safe(value)`` and ``[mark_safe(obj) for obj in value]`` in a filter registered
    on a template library mark the filter's input unchanged: the filter exists to let templates
    declare text trusted. A value transformed or combined with other text first is not this.
    """
    current: ast.expr = argument
    for _ in range(_MAX_HOPS):
        if not isinstance(current, ast.Name):
            return None
        found = bindings.reaching(tree, current, lambda test, holds: None)
        if len(found) != 1:
            return None
        binding = found[0]
        if binding.kind == "parameter":
            owner = binding.owner
            if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)) and sources.hook_kind(tree, owner) == "template":
                return owner.name
            return None
        # Only a comprehension variable is followed: it is each item of the iterable, unchanged.
        if binding.kind != "value" or not isinstance(binding.node, ast.expr) or not isinstance(tree.parent(binding.node), ast.comprehension):
            return None
        current = binding.node
    return None


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
