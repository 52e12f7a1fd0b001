"""A public function's switches: parameters defaulting to ``True`` or ``False``.

A library function's switch with a safe default (``resolve_entities=False``,
``allow_pickle=False``, ``autoescape=True``) is its callers' explicit choice. What its
parameters reach with the switches as they are is what the function does to its callers' data by
itself, so that is what a public function is reported for (``engine._api``); a caller that turns
a switch on passes a constant the engine reads at that call, and is flagged there.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import summaries
from .definitions import FunctionInfo
from .entries import defaults_by_param
from .facts import EVIDENCE_RANK, Evidence, Summary
from .values import Value, constant

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
    key = (function.id, "switch defaults")
    known = program.specialised.get(key)
    if known is not None:
        program.depend(known[1])
        return known[0]
    general, program.evidence = program.evidence, {}
    try:
        result, deps = summaries.compute(program, function, 0, bound={i: constant(v) for i, v in switches.items()})
    finally:
        seen, program.evidence = program.evidence, general
    _switched_evidence(program, function, seen)
    program.specialised[key] = (result, deps)
    return result


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


def at_call(program: Program, function: FunctionInfo, mapping: dict[int, Value], depth: int) -> Summary | None:
    """The function's summary for a call that passes each of its switches ``True`` or
    ``False`` or leaves it as it is: computed with every switch bound to the call's constant
    or, where the call passes none, to its default. A helper's parser is then of the kind the
    call asks for (``load(path)`` of ``load(path, resolve_entities=False)`` makes no entity
    resolving parser; ``load(path, resolve_entities=True)`` does). Kept for this analysis, per
    function and switch values.

    Args:
        program: The analysis.
        function: The function called.
        mapping: Parameter index -> what the call passes (``summaries.bind_arguments``).
        depth: Summaries being computed below this one.

    Returns:
        The summary; None when the function has no switch, when the call passes a switch
        anything but a constant ``True`` or ``False``, or when the function is being computed
        (a recursive call takes the plain summary).

    Raises:
        BudgetExceeded: the work budget ran out (as for any summary).
    """
    defaults = switch_defaults(function)
    if not defaults or function.id in program.in_progress:
        return None
    values: dict[int, bool] = {}
    for index, default in defaults.items():
        passed = mapping.get(index)
        if passed is not None and not (passed.is_const and isinstance(passed.const, bool)):
            return None
        values[index] = default if passed is None else passed.const
    key = (function.id, "switches", tuple(sorted(values.items())))
    known = program.specialised.get(key)
    if known is not None:
        program.depend(known[1])
        return known[0]
    result, deps = summaries.compute(program, function, depth, bound={i: constant(v) for i, v in values.items()})
    program.specialised[key] = (result, deps)
    return result


def switch_defaults(function: FunctionInfo) -> dict[int, bool]:
    """Index in ``function.params`` -> the default of each parameter whose default is the
    constant ``True`` or ``False`` (``entries.defaults_by_param``)."""
    node = function.node
    if isinstance(node, ast.Lambda) or not function.params:
        return {}
    defaults = defaults_by_param(node.args)
    return {i: default.value for i, param in enumerate(function.params)
            if isinstance(default := defaults.get(param.arg), ast.Constant) and isinstance(default.value, bool)}
