"""CWE-611/776, XML parsers that resolve or expand entities from data an attacker sends."""

from __future__ import annotations

import ast

from ..assessment import LIKELY, Assessment, Site, from_trace
from ..sinks import keyword
from ..taint import Tracer
from ..tree import SourceTree

# Confidence of an answer meant to be dropped: one below the pipeline's keep threshold.
DROPPED = 4
_HARDENED_WORDS = ("defused", "safe")


def assess(site: Site) -> Assessment | None:
    """Judges an XML parse with the standard library or lxml (bandit B313-B320).

    Since Python 3.7.1 the standard library's parsers do not fetch external entities, and the
    bundled expat (2.4.1 and later) limits entity expansion; what is left is a denial of
    service (CWE-776) when an attacker sends the XML. lxml resolves entities by default, so a
    document an attacker sends can read local files (CWE-611). A hardened parser passed in
    (``defusedxml``, a class named ``Defused...``/``Safe...``, lxml's ``XMLParser(
    resolve_entities=False)``) settles it; otherwise the data is traced: outside data is a
    finding, a parameter is judged by the analyst's rules for parameters, and data whose origin
    the file does not show (a file of the deployment, data from other code) is left
    ``uncertain`` below the keep threshold, since nothing shows an attacker writing it.

    Args:
        site: The flagged call.

    Returns:
        The assessment, or None when the node is not a call with an argument.
    """
    node = site.node
    if not isinstance(node, ast.Call) or not (node.args or node.keywords):
        return None
    tree = site.tree
    name = tree.qualname(node.func) or tree.segment(node.func, 40)
    lxml = name.startswith("lxml.") or site.rule_id == "B320"
    cwe = 611 if lxml else 776
    hardened = _hardened_parser(tree, node)
    if hardened is not None:
        fact = f"{name}() is given a hardened parser ({hardened}), which refuses entity declarations."
        return Assessment(verdict="not_vulnerable", confidence=LIKELY, cwe=cwe, facts=(fact,),
                          signals={"sink": "xml", "source": "sanitised", "sanitised": True})
    danger = ("lxml resolves entities by default, so a document can pull in local files" if lxml else
              "the standard library's parsers no longer fetch external entities, but a document can still declare "
              "entities that expand to exhaust memory")
    lead = f"{name}() parses XML; {danger}."
    data = node.args[0] if node.args else (keyword(node, "source") or keyword(node, "text") or node.keywords[0].value)
    found = from_trace(Tracer(tree, "any").trace(data), cwe=cwe, sink="any", value="the parsed XML", facts=(lead,))
    if found.verdict != "uncertain":
        return found
    fact = "Nothing shows an attacker supplying the document, so the parse is left undecided and not kept."
    return Assessment(verdict="uncertain", confidence=DROPPED, cwe=cwe, facts=(*found.facts, fact),
                      signals=found.signals, trace=found.trace, sink=found.sink)


def _hardened_parser(tree: SourceTree, call: ast.Call) -> str | None:
    """Describes a hardened parser the call is given, or None."""
    if any(name.startswith("defusedxml") for name in tree.imports.values()) and (tree.qualname(call.func) or "").startswith("defusedxml"):
        return "defusedxml"
    parser = keyword(call, "parser") or (call.args[1] if len(call.args) > 1 else None)
    if parser is None:
        return None
    tracer = Tracer(tree, "any")
    pending: list[ast.expr] = [tracer.literal(parser)]
    for _ in range(8):
        if not pending:
            break
        expr = pending.pop()
        if not isinstance(expr, ast.Call):
            continue
        label = (tree.qualname(expr.func) or tree.segment(expr.func, 40))
        if any(word in label.lower() for word in _HARDENED_WORDS):
            return f"{label}()"
        resolve = keyword(expr, "resolve_entities")
        if isinstance(resolve, ast.Constant) and resolve.value is False:
            return f"{label}(resolve_entities=False)"
        method = _own_method(tree, expr)
        if method is not None:
            pending.extend(tracer.literal(n.value) for n in ast.walk(method) if isinstance(n, ast.Return) and n.value is not None)
    return None


def _own_method(tree: SourceTree, call: ast.Call) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The method of this file's class that ``self.name(...)`` calls, or None."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return None
    function = tree.function_of(call)
    owner = tree.enclosing_class(function) if function is not None else None
    if owner is None:
        return None
    return next((s for s in owner.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == func.attr), None)
