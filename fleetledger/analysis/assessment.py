"""The flagged site a check looks at, and what a check concludes about it."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Literal

from .sinks import SinkKind
from .taint import Leaf, Trace
from .tree import SourceTree

Verdict = Literal["vulnerable", "not_vulnerable", "uncertain"]

# Confidence scale shared by every check (0-10).
CERTAIN = 9       # the syntax shows it: a constant, a request read, a safe loader
LIKELY = 8        # shown, with one assumption (a sanitiser does what its name promises)
PROBABLE = 7      # a caller supplies the value, or the value passes through unseen code
OPEN = 5          # the analysis could not decide


@dataclass(frozen=True, kw_only=True)
class Site:
    """A detector's candidate located in the syntax tree.

    Attributes:
        tree: The parsed file.
        node: The flagged node (a call, a string, an ``assert``...).
        path: The file's repository-relative path.
        rule_id: The detector's rule id, e.g. ``"B602"``.
        detector_cwe: The CWE the detector assigned, or None.
        in_test: Why the node is test code, or None.
    """

    tree: SourceTree
    node: ast.AST
    path: str
    rule_id: str
    detector_cwe: int | None
    in_test: str | None


@dataclass(frozen=True, kw_only=True)
class Assessment:
    """A check's conclusion about one site.

    Attributes:
        verdict: ``"vulnerable"``, ``"not_vulnerable"`` or ``"uncertain"``.
        confidence: 0-10 on the scale above.
        cwe: The weakness the conclusion is about.
        facts: Sentences a security engineer can check, in reading order.
        signals: JSON-ready facts for triage (``source``, ``channel``, ``sanitised``...).
        trace: The taint trace of the dangerous value, when there is one.
        sink: The sink kind the trace was made for.
    """

    verdict: Verdict
    confidence: int
    cwe: int | None
    facts: tuple[str, ...]
    signals: dict[str, Any] = field(default_factory=dict)
    trace: Trace | None = None
    sink: SinkKind | None = None


def describe(leaf: Leaf) -> str:
    """Returns a clause naming an origin, e.g. ``"request.args (request data), line 12"``."""
    text = f"{leaf.detail} (line {leaf.line})" if leaf.line else leaf.detail
    if leaf.through:
        text += f", passed through {leaf.through}"
    return text


def from_trace(trace: Trace, *, cwe: int, sink: SinkKind, value: str, facts: tuple[str, ...] = ()) -> Assessment:
    """Turns the origins of a sink's dangerous value into a verdict.

    Outside data that reaches the sink unsanitised is ``vulnerable`` (confidence 9, or 7 when
    it passed through code this file does not show, or came from the environment or a file any
    local user can write); a
    parameter of the enclosing function is ``vulnerable`` at 7 (a caller decides); an
    unknown origin is ``uncertain`` at 5; constants and sanitised values are
    ``not_vulnerable`` (9 for constants only, 8 when a sanitiser or check was relied on).

    Args:
        trace: The trace of the dangerous value.
        cwe: The weakness concerned.
        sink: The sink kind traced for.
        value: How to name the dangerous value in a sentence, e.g. ``"the command line"``.
        facts: Sentences that come before the origin sentence.

    Returns:
        The assessment.
    """
    worst = trace.worst()
    signals: dict[str, Any] = {
        "sink": sink,
        "source": worst.kind if worst else ("constant" if not trace.sanitisers() else "sanitised"),
        "channel": worst.channel if worst else None,
        "sanitised": worst is None and bool(trace.sanitisers()),
        "through": worst.through if worst else None,
        "origins": [describe(leaf) for leaf in trace.leaves if leaf.kind != "constant"][:6],
    }
    if worst is None:
        guarded = trace.sanitisers()
        if guarded:
            sentence = f"Every non-constant part of {value} is made safe before use: {'; '.join(guarded)}."
            return Assessment(verdict="not_vulnerable", confidence=LIKELY, cwe=cwe, facts=(*facts, sentence),
                              signals=signals, trace=trace, sink=sink)
        sentence = f"{value[0].upper()}{value[1:]} is built only from constants."
        return Assessment(verdict="not_vulnerable", confidence=CERTAIN, cwe=cwe, facts=(*facts, sentence),
                          signals=signals, trace=trace, sink=sink)
    others = [describe(leaf) for leaf in trace.dangerous()[1:4]]
    extra = f" (also: {'; '.join(others)})" if others else ""
    if worst.kind == "request":
        confidence = PROBABLE if worst.through or worst.channel in ("env", "local") else CERTAIN
        sentence = f"{value[0].upper()}{value[1:]} contains outside data, unsanitised: {describe(worst)}{extra}."
        return Assessment(verdict="vulnerable", confidence=confidence, cwe=cwe, facts=(*facts, sentence),
                          signals=signals, trace=trace, sink=sink)
    if worst.kind == "parameter":
        sentence = f"{value[0].upper()}{value[1:]} contains {describe(worst)}, unsanitised, so its callers decide what runs{extra}."
        return Assessment(verdict="vulnerable", confidence=PROBABLE, cwe=cwe, facts=(*facts, sentence),
                          signals=signals, trace=trace, sink=sink)
    sentence = f"{value[0].upper()}{value[1:]} contains a value whose origin this file does not show: {describe(worst)}{extra}."
    return Assessment(verdict="uncertain", confidence=OPEN, cwe=cwe, facts=(*facts, sentence),
                      signals=signals, trace=trace, sink=sink)
