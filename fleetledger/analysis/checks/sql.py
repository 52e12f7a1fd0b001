"""CWE-89, SQL injection: SQL text built from values, and whether the text is executed."""

from __future__ import annotations

import ast

from ..assessment import LIKELY, Assessment, Site, from_trace
from ..sinks import DISPLAY_CALLS, SQL_EXECUTORS, keyword
from ..taint import Leaf, Trace, Tracer
from ..tree import SourceTree, walk_scope

CWE = 89
_QUERY_KEYWORDS = ("sql", "query", "statement", "operation", "stmt")
_PARAM_KEYWORDS = ("params", "parameters", "args", "vars", "parameters_")
_EXTRA_SQL_KEYWORDS = ("select", "where", "tables", "order_by")


def assess(site: Site) -> Assessment | None:
    """Judges SQL text built by formatting (bandit B608) or Django's ``extra``/``RawSQL`` (B610/B611).

    The flagged string is followed up to the whole expression that builds it (concatenation,
    ``%``, ``.format``, f-strings, also across lines and in triple-quoted strings) and on to the
    call that consumes it, directly or through a variable. Text that only reaches logging,
    ``print`` or an exception is not SQL that runs. Otherwise every interpolated part is traced:
    values passed separately as parameters are safe, identifiers interpolated into the text
    are safe only when constant, cast to numbers or checked against an allowlist or a tight
    pattern.

    Args:
        site: The flagged node.

    Returns:
        The assessment, or None when no string-building expression is at the flagged place.
    """
    tree = site.tree
    tracer = Tracer(tree, "sql")
    node = site.node
    if isinstance(node, ast.Call) and _short(node) in ("extra", "RawSQL"):
        parts = [keyword(node, k) for k in _EXTRA_SQL_KEYWORDS] if _short(node) == "extra" else [node.args[0] if node.args else keyword(node, "sql")]
        return from_trace(_merge(tracer, [p for p in parts if p is not None]), cwe=CWE, sink="sql",
                          value="the raw SQL", facts=(f"{_short(node)}() inserts raw SQL into a Django query.",))
    root = _query_root(tree, node)
    consumers = _consumers(tree, root)
    executors = [c for c in consumers if _short(c) in SQL_EXECUTORS]
    shown = [c for c in consumers if _is_display(c)]
    described = tree.segment(root, 60)
    if consumers and not executors and len(shown) == len(consumers):
        names = ", ".join(sorted({_short(c) + "()" for c in shown}))
        fact = f"The SQL-looking text `{described}` only reaches {names}, which display it; it is never executed."
        return Assessment(verdict="not_vulnerable", confidence=LIKELY, cwe=CWE, facts=(fact,),
                          signals={"sink": "sql", "source": "none", "sanitised": False, "executed": False})
    if executors:
        queries = [q for q in (_query_argument(c) for c in executors) if q is not None]
        parametrised = any(_parametrised(c) for c in executors)
        lead = (f"The text `{described}` is built by string formatting and executed by "
                f"{', '.join(sorted({_short(c) + '()' for c in executors}))} (line {executors[0].lineno})"
                + ("; values passed separately as parameters are not at risk." if parametrised else "."))
        found = from_trace(_merge(tracer, queries or [root]), cwe=CWE, sink="sql", value="the SQL text", facts=(lead,))
    else:
        where = "returned to the caller" if _returned(tree, root) else "not seen being executed in this function"
        lead = f"The text `{described}` is built by string formatting and {where}; it is assumed to run as SQL."
        found = from_trace(tracer.trace(root), cwe=CWE, sink="sql", value="the SQL text", facts=(lead,))
        parametrised = False
    found.signals["parametrised"] = parametrised
    found.signals["executed"] = bool(executors)
    return found


def _merge(tracer: Tracer, expressions: list[ast.expr]) -> Trace:
    traces = [tracer.trace(e) for e in expressions]
    leaves = sorted({leaf for t in traces for leaf in t.leaves}, key=Leaf.sort_key)
    return Trace(leaves=tuple(leaves), exhausted=any(t.exhausted for t in traces))


def _short(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _is_display(call: ast.Call) -> bool:
    name = _short(call)
    return name in DISPLAY_CALLS or name.endswith(("Error", "Exception", "Warning"))


def _query_root(tree: SourceTree, node: ast.AST) -> ast.AST:
    """Climbs from the flagged string to the whole expression that builds the query text."""
    current = node
    while True:
        parent = tree.parent(current)
        if isinstance(parent, (ast.JoinedStr, ast.FormattedValue)) or isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Mod)):
            current = parent
            continue
        if isinstance(parent, ast.Attribute) and parent.attr in ("format", "replace", "strip", "format_map"):
            call = tree.parent(parent)
            if isinstance(call, ast.Call) and call.func is parent:
                current = call
                continue
        return current


def _consumers(tree: SourceTree, root: ast.AST) -> list[ast.Call]:
    """Finds the calls that receive the query text, directly or through a variable."""
    found: list[ast.Call] = []
    pending = [root]
    visited: set[int] = set()
    while pending:
        expr = pending.pop()
        if id(expr) in visited:
            continue
        visited.add(id(expr))
        parent = tree.parent(expr)
        if isinstance(parent, ast.keyword):
            parent = tree.parent(parent)
        if isinstance(parent, ast.Call) and parent.func is not expr:
            found.append(parent)
        elif isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            scope = tree.function_of(parent) or tree.module
            for use in walk_scope(scope):
                if (isinstance(use, ast.Name) and use.id in names and isinstance(use.ctx, ast.Load)
                        and (use.lineno, use.col_offset) > (parent.lineno, parent.col_offset)):
                    pending.append(_query_root(tree, use))
    return sorted(found, key=lambda c: (c.lineno, c.col_offset))


def _returned(tree: SourceTree, root: ast.AST) -> bool:
    return isinstance(tree.parent(root), ast.Return)


def _query_argument(call: ast.Call) -> ast.expr | None:
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    for name in _QUERY_KEYWORDS:
        found = keyword(call, name)
        if found is not None:
            return found
    return None


def _parametrised(call: ast.Call) -> bool:
    return len(call.args) >= 2 or any(keyword(call, name) is not None for name in _PARAM_KEYWORDS)
