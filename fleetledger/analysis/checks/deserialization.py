"""CWE-502, deserialisation of untrusted data: pickle, marshal, dill, shelve, unsafe YAML."""

from __future__ import annotations

import ast

from ..assessment import CERTAIN, Assessment, Site, from_trace
from ..bindings import dominating_tests
from ..guards import integrity_check
from ..sinks import data_sink
from ..taint import Tracer
from ..tree import SourceTree

CWE = 502
# Confidence of an answer meant to be dropped: one below the pipeline's keep threshold.
DROPPED = 4
_ENCODERS = {
    "pickle": frozenset({"pickle.dump", "pickle.dumps", "pickle.Pickler", "cPickle.dump", "cPickle.dumps",
                         "_pickle.dump", "_pickle.dumps"}),
    "dill": frozenset({"dill.dump", "dill.dumps"}),
    "marshal": frozenset({"marshal.dump", "marshal.dumps"}),
    "jsonpickle": frozenset({"jsonpickle.encode"}),
}


def assess(site: Site) -> Assessment | None:
    """Judges a deserialisation call (bandit B301, B302, B506).

    Decoding pickle/marshal/unsafe YAML runs constructors the data names, so the question is
    who can write the data. Data from a request, a socket or an HTTP response is attacker
    controlled unless its MAC is verified first (``hmac.compare_digest`` guarding the call, or
    a signer's ``unsign``); bytes the process serialised itself (``pickle.dumps``) and files at
    fixed paths inside the deployment are trusted (a fixed path under ``/tmp`` is not: any
    local user can write there). ``yaml.load`` with ``SafeLoader``/``CSafeLoader`` builds only
    plain data.

    A round trip through the component's own store is not outside data either: when the class
    that decodes (or, outside a class, the module) also encodes with the same library
    (``pickle.dump``/``pickle.dumps``), the data it reads back is what it wrote, as in a cache
    backend's ``get``/``set`` or a serialiser's ``loads``/``dumps``. Unless the trace shows
    outside data, that is left ``uncertain`` below the keep threshold: only someone who can
    already write the store (the cache directory, the cache server) could plant a payload.

    Args:
        site: The flagged call.

    Returns:
        The assessment, or None when the node is not a deserialiser this check knows.
    """
    node = site.node
    if not isinstance(node, ast.Call):
        return None
    tree = site.tree
    sink = data_sink(tree, node)
    if sink is None or sink.value is None:
        return None
    if sink.safe_loader is not None:
        fact = f"{sink.api}() is given {sink.safe_loader}, which builds only plain data (no Python objects)."
        return Assessment(verdict="not_vulnerable", confidence=CERTAIN, cwe=CWE, facts=(fact,),
                          signals={"sink": "data", "source": "none", "sanitised": True})
    verified = next((found for test, holds in dominating_tests(tree, node)
                     if (found := integrity_check(tree, test, holds)) is not None), None)
    lead = f"{sink.api}() can construct arbitrary objects (and run code) from the data it decodes."
    found = from_trace(Tracer(tree, "data").trace(sink.value, sanitiser=verified), cwe=CWE, sink="data",
                       value="the decoded data", facts=(lead,))
    worst = found.trace.worst() if found.trace is not None else None
    if worst is None or worst.kind == "request":
        return found
    store = _own_store(tree, node, sink.library)
    if store is None:
        return found
    fact = (f"{store} also encodes with {sink.library}, so the data it decodes here is what it wrote to its own store; "
            "only someone who can already write that store (its files, its cache server) could plant a payload.")
    return Assessment(verdict="uncertain", confidence=DROPPED, cwe=CWE, facts=(*found.facts, fact),
                      signals={**found.signals, "own_store": True}, trace=found.trace, sink=found.sink)


def _own_store(tree: SourceTree, node: ast.Call, library: str) -> str | None:
    """Names the class (or module) around ``node`` that also serialises with ``library``, or None."""
    function = tree.function_of(node)
    owner: ast.AST | None = tree.enclosing_class(function) if function is not None else None
    scope = owner if owner is not None else tree.module
    encoders = _ENCODERS.get(library, frozenset())
    for inner in ast.walk(scope):
        if isinstance(inner, ast.Call) and inner is not node and (tree.qualname(inner.func) or "") in encoders:
            where = f"the class {owner.name}" if isinstance(owner, ast.ClassDef) else "this module"
            return f"{where} ({tree.qualname(inner.func)}() on line {inner.lineno})"
    return None
