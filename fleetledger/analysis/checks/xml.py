"""CWE-611/776, XML parsers that resolve or expand entities from data an attacker sends."""

from __future__ import annotations

import ast

from ..assessment import LIKELY, Assessment, Site, from_trace
from ..sinks import keyword
from ..taint import Leaf, Trace, Tracer
from ..tree import SourceTree, walk_scope

# Confidence of an answer meant to be dropped: one below the pipeline's keep threshold.
DROPPED = 4
_HARDENED_WORDS = ("defused", "safe")
# Calls that make a parser object, and the methods that give it a document.
_PARSER_FACTORIES = frozenset({"make_parser", "create_parser", "XMLParser"})
_FEEDING_METHODS = frozenset({"feed", "parse"})


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

    A module that calls ``defusedxml.defuse_stdlib()`` at import replaces the standard
    library's parse functions with defused ones, so a call through the module (``minidom.parse``,
    ``ET.fromstring``, ``xml.sax.make_parser``) is hardened too; a function imported by name
    before that call (``from xml.dom.minidom import parse``) keeps the original.

    A parser object (``xml.sax.make_parser()``, ``ElementTree.XMLParser()``, expat's
    ``create_parser()``) is judged by what it is fed: the documents passed to its ``feed`` and
    ``parse`` methods in this file.

    Args:
        site: The flagged call.

    Returns:
        The assessment, or None when the node is not a call with an argument (a parser
        factory needs none).
    """
    node = site.node
    if not isinstance(node, ast.Call):
        return None
    tree = site.tree
    name = tree.qualname(node.func) or tree.segment(node.func, 40)
    factory = name.rsplit(".", 1)[-1] in _PARSER_FACTORIES
    if not factory and not (node.args or node.keywords):
        return None
    lxml = name.startswith("lxml.") or site.rule_id == "B320"
    cwe = 611 if lxml else 776
    hardened = (None if lxml else _defused_stdlib(tree, node)) or _hardened_parser(tree, node)
    if hardened is not None:
        fact = f"{name}() is hardened: {hardened}."
        return Assessment(verdict="not_vulnerable", confidence=LIKELY, cwe=cwe, facts=(fact,),
                          signals={"sink": "xml", "source": "sanitised", "sanitised": True})
    danger = ("lxml resolves entities by default, so a document can pull in local files" if lxml else
              "the standard library's parsers no longer fetch external entities, but a document can still declare "
              "entities that expand to exhaust memory")
    if factory:
        fed = _fed_documents(tree, node)
        lead = f"{name}() makes an XML parser; {danger}."
        if not fed:
            fact = ("The parser is not given a document in this file (no .feed() or .parse() on it), so nothing shows an "
                    "attacker supplying one; the parse is left undecided and not kept.")
            return Assessment(verdict="uncertain", confidence=DROPPED, cwe=cwe, facts=(lead, fact),
                              signals={"sink": "any", "source": "unknown", "sanitised": False})
        lines = ", ".join(str(d.lineno) for d in fed)
        lead += f" It is fed on line {lines}."
        traces = [Tracer(tree, "any").trace(document) for document in fed]
        trace = Trace(leaves=tuple(sorted({leaf for t in traces for leaf in t.leaves}, key=Leaf.sort_key)),
                      exhausted=any(t.exhausted for t in traces))
    else:
        lead = f"{name}() parses XML; {danger}."
        data = node.args[0] if node.args else (keyword(node, "source") or keyword(node, "text") or node.keywords[0].value)
        trace = Tracer(tree, "any").trace(data)
    found = from_trace(trace, cwe=cwe, sink="any", value="the parsed XML", facts=(lead,))
    if found.verdict != "uncertain":
        return found
    fact = "Nothing shows an attacker supplying the document, so the parse is left undecided and not kept."
    return Assessment(verdict="uncertain", confidence=DROPPED, cwe=cwe, facts=(*found.facts, fact),
                      signals=found.signals, trace=found.trace, sink=found.sink)


def _defused_stdlib(tree: SourceTree, call: ast.Call) -> str | None:
    """Describes a module-level ``defusedxml.defuse_stdlib()`` that covers ``call``, or None.

    The call must reach the parse function through its module (looked up when it runs, after
    the patch), or through a name imported after the patch.
    """
    patch = next((n for n in _module_level_calls(tree) if (tree.qualname(n.func) or "") == "defusedxml.defuse_stdlib"), None)
    if patch is None:
        return None
    func = call.func
    if isinstance(func, ast.Name):
        imported = [n for n in tree.module.body if isinstance(n, ast.ImportFrom)
                    and any((a.asname or a.name) == func.id for a in n.names)]
        if not imported or any(n.lineno < patch.lineno for n in imported):
            return None
    elif not isinstance(func, ast.Attribute):
        return None
    return (f"defusedxml.defuse_stdlib() on line {patch.lineno} replaced the standard library's parsers with defused ones, "
            "which refuse entity declarations, when the module was imported, before this call looks the parser up")


def _module_level_calls(tree: SourceTree) -> list[ast.Call]:
    """Calls that run when the module is imported (outside any function or class body)."""
    found: list[ast.Call] = []
    stack: list[ast.AST] = list(reversed(tree.module.body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            found.append(node)
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return found


def _fed_documents(tree: SourceTree, factory: ast.Call) -> list[ast.expr]:
    """The documents given to the parser a factory call makes: the first argument of each
    ``.feed()``/``.parse()`` on it, whether called on the call itself, on the name it is
    assigned to (in the same scope), or on the ``self`` attribute it is stored in (in the class)."""
    parent = tree.parent(factory)
    receivers: list[ast.AST] = [factory]
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is factory:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        for target in targets:
            if isinstance(target, ast.Name):
                scope = tree.function_of(factory) or tree.module
                receivers.extend(n for n in walk_scope(scope) if isinstance(n, ast.Name) and n.id == target.id
                                 and isinstance(n.ctx, ast.Load))
            elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                function = tree.function_of(factory)
                owner = tree.enclosing_class(function) if function is not None else None
                if owner is not None:
                    receivers.extend(n for n in ast.walk(owner) if isinstance(n, ast.Attribute) and n.attr == target.attr
                                     and isinstance(n.value, ast.Name) and n.value.id == "self" and isinstance(n.ctx, ast.Load))
    documents: list[ast.expr] = []
    for receiver in receivers:
        method = tree.parent(receiver)
        call = tree.parent(method) if method is not None else None
        if not (isinstance(method, ast.Attribute) and method.value is receiver and method.attr in _FEEDING_METHODS
                and isinstance(call, ast.Call) and call.func is method):
            continue
        document = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in ("data", "source")), None)
        if document is not None:
            documents.append(document)
    return sorted(documents, key=lambda d: (d.lineno, d.col_offset))


def _hardened_parser(tree: SourceTree, call: ast.Call) -> str | None:
    """Describes a hardened parser the call is given, or None."""
    if any(name.startswith("defusedxml") for name in tree.imports.values()) and (tree.qualname(call.func) or "").startswith("defusedxml"):
        return "it is defusedxml's, which refuses entity declarations"
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
            return f"it is given a hardened parser ({label}()), which refuses entity declarations"
        resolve = keyword(expr, "resolve_entities")
        if isinstance(resolve, ast.Constant) and resolve.value is False:
            return f"it is given a parser made with {label}(resolve_entities=False), which does not resolve entities"
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
