"""A public function's switches: parameters defaulting to ``True`` or ``False``.

A library function's switch with a safe default (``resolve_entities=False``,
``allow_pickle=False``, ``autoescape=True``) is its callers' explicit choice. What its
parameters reach with the switches as they are is what the function does to its callers' data by
itself, so that is what a public function is reported for (``engine._api``); a caller that turns
a switch on passes a constant the engine reads at that call (``switch_values.at_call``), and is
flagged there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import summaries
from .definitions import FunctionInfo
from .dependencies import Dependencies
from .facts import EVIDENCE_RANK, Evidence, Summary
from .switch_values import switch_defaults
from .values import constant

if TYPE_CHECKING:
    from .program import Program


def with_switch_defaults(program: Program, function: FunctionInfo) -> Summary | None:
    """The function's summary for callers that leave its switches as they are: computed with
    each parameter whose default is ``True`` or ``False`` bound to that default (a flag carries
    no data), the others to their labels (``summaries.compute``); None when it has no such
    parameter. Kept for this analysis, per function.

    Args:
        program: The analysis.
        function: A function of the analysed code.

    Returns:
        The summary, or None.

    Raises:
        BudgetExceeded: the work budget ran out (as for any summary).
    """
    switches = switch_defaults(function)
    if not switches:
        return None

    def make() -> tuple[Summary, Dependencies]:
        general, program.evidence = program.evidence, {}
        try:
            made = summaries.compute(program, function, 0, bound={i: constant(v) for i, v in switches.items()})
        finally:
            seen, program.evidence = program.evidence, general
        _switched_evidence(program, function, seen)
        return made

    return program.specialised_summary((function.id, "switch defaults"), make)


def _switched_evidence(program: Program, function: FunctionInfo, seen: dict[tuple[str, int, int, str], Evidence]) -> None:
    """Merges the evidence the switch-defaults run saw: at a sink of the function itself where
    the plain summary saw a parameter (its callers decide) and this run sees less (sanitised,
    constant: an ``if autoescape:`` branch escaped it), a detector's candidate there is judged
    by what the function does with its switches as they are; elsewhere the worst is kept."""
    node = function.node
    first, last = node.lineno, getattr(node, "end_lineno", None) or node.lineno
    for key, evidence in seen.items():
        old = program.evidence.get(key)
        own = evidence.site.path == function.module.path and first <= evidence.site.line <= last
        if own and old is not None and old.state == "parameter" and EVIDENCE_RANK[evidence.state] < EVIDENCE_RANK["parameter"]:
            program.evidence[key] = evidence
        else:
            program.record_evidence(evidence)
