"""A function's switches, parameters defaulting to ``True`` or ``False``, and the summary
that a call's switch values select (``at_call``): a call that passes a switch a constant, or
leaves it as it is, is analysed as what the function does with that value. ``switches`` says
what a public function is reported for with its switches as they are.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from .definitions import FunctionInfo
from .dependencies import Dependencies
from .entries import defaults_by_param
from .facts import Summary
from .values import Value, constant

if TYPE_CHECKING:
    from .program import Program

Compute = Callable[..., tuple[Summary, Dependencies]]
"""``summaries.compute``: (program, function, depth, *, bound) -> (summary, dependencies)."""


def at_call(program: Program, function: FunctionInfo, mapping: dict[int, Value], depth: int,
            compute: Compute) -> Summary | None:
    """The function's summary for a call that passes each of its switches ``True`` or
    ``False`` or leaves it as it is: computed with every switch bound to the call's constant
    or, where the call passes none, to its default. A helper's parser is then of the kind the
    call asks for (``load(path)`` or ``load(path, resolve_entities=False)`` makes no entity
    resolving parser; ``load(path, resolve_entities=True)`` does). Kept for this analysis, per
    function and switch values.

    Args:
        program: The analysis.
        function: The function called.
        mapping: Parameter index -> what the call passes (``summaries.bind_arguments``).
        depth: Summaries being computed below this one.
        compute: ``summaries.compute``, passed in (that module calls this one).

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
    return program.specialised_summary((function.id, "switches", tuple(sorted(values.items()))), lambda: compute(
        program, function, depth, bound={i: constant(v) for i, v in values.items()}))


def switch_defaults(function: FunctionInfo) -> dict[int, bool]:
    """Index in ``function.params`` -> the default of each parameter whose default is the
    constant ``True`` or ``False`` (``entries.defaults_by_param``)."""
    node = function.node
    if isinstance(node, ast.Lambda) or not function.params:
        return {}
    defaults = defaults_by_param(node.args)
    return {i: default.value for i, param in enumerate(function.params)
            if isinstance(default := defaults.get(param.arg), ast.Constant) and isinstance(default.value, bool)}
