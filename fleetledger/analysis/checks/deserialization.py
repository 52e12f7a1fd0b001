"""CWE-502, deserialisation of untrusted data: pickle, marshal, dill, shelve, unsafe YAML."""

from __future__ import annotations

import ast

from ..assessment import CERTAIN, Assessment, Site, from_trace
from ..bindings import dominating_tests
from ..guards import integrity_check
from ..sinks import data_sink
from ..taint import Tracer

CWE = 502


def assess(site: Site) -> Assessment | None:
    """Judges a deserialisation call (bandit B301, B302, B506).

    Decoding pickle/marshal/unsafe YAML runs constructors the data names, so the question is
    who can write the data. Data from a request, a socket or an HTTP response is attacker
    controlled unless its MAC is verified first (``hmac.compare_digest`` guarding the call, or
    a signer's ``unsign``); bytes the process serialised itself (``pickle.dumps``) and files at
    fixed paths inside the deployment are trusted (a fixed path under ``/tmp`` is not: any
    local user can write there). ``yaml.load`` with ``SafeLoader``/``CSafeLoader`` builds only
    plain data.

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
    return from_trace(Tracer(tree, "data").trace(sink.value, sanitiser=verified), cwe=CWE, sink="data",
                      value="the decoded data", facts=(lead,))
