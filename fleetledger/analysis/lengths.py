"""Bounded lengths: ``len(x) <= N`` found true, or a slice ``x[:N]``, bounds how long a text is,
and so how long any pattern can take to match it (ReDoS). Used by ``conditions`` and by the
interpreter's slices."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .values import Value, clean

if TYPE_CHECKING:
    from .interp import Frame


MAX_BOUNDED_LENGTH = 10_000
"""The longest text a length check makes safe from a slow pattern: a quadratic pattern does
about 10^8 steps on it, under a second in CPython's ``re``."""


def bounded(frame: Frame, test: ast.Compare, truth: bool) -> list[tuple[str, frozenset[str], str, None]]:
    """``len(x) <= N`` found true (or ``len(x) > N`` false, either way round) with ``N`` a
    constant of at most ``MAX_BOUNDED_LENGTH``: ``x`` as it is is a short text, whose matching
    time no pattern can make grow with the input (ReDoS, ``slow-regex``). The mark is one of
    ``x`` as checked (``"slow-regex@@whole"``): an item of ``x`` (the check counted items, not
    characters) or a text built from it is not known to be short."""
    op, left, right = test.ops[0], test.left, test.comparators[0]
    below = isinstance(op, (ast.Lt, ast.LtE))  # left is the smaller side
    for measured, bound, upper in ((left, right, below), (right, left, not below)):
        if not (isinstance(measured, ast.Call) and isinstance(measured.func, ast.Name) and measured.func.id == "len"
                and len(measured.args) == 1 and isinstance(measured.args[0], ast.Name) and not measured.keywords):
            continue
        limit = frame.expr(bound)
        if (upper == truth and limit.is_const and isinstance(limit.const, int) and limit.const <= MAX_BOUNDED_LENGTH
                and "=len" in frame.expr(measured.func).types):
            return [(measured.args[0].id, frozenset({"slow-regex@@whole"}), f"the length check {ast.unparse(test)[:60]}",
                     None)]
    return []


def sliced(frame: Frame, part: ast.Slice, value: Value) -> Value:
    """``x[:N]`` (or ``x[a:b]`` with both constants, no step) of at most ``MAX_BOUNDED_LENGTH``
    items: the part is as short as a length check would make it (``"slow-regex@@whole"``).

    Args:
        frame: The frame evaluating the slice.
        part: The slice.
        value: What the part holds (its taint).

    Returns:
        ``value``, marked when the slice bounds its length.
    """
    if part.step is not None or part.upper is None or not value.tainted():
        return value
    upper = frame.expr(part.upper)
    lower = frame.expr(part.lower) if part.lower is not None else None
    if not (upper.is_const and isinstance(upper.const, int) and not isinstance(upper.const, bool)):
        return value
    start = lower.const if lower is not None and lower.is_const and isinstance(lower.const, int) else None
    if lower is not None and start is None:
        return value
    # x[:N] and x[a:b] with 0 <= a <= b keep at most b - a items; a negative end keeps all but some
    if upper.const < 0 or (start or 0) < 0 or upper.const - (start or 0) > MAX_BOUNDED_LENGTH:
        return value
    return clean(value, frozenset({"slow-regex@@whole"}), f"the slice {ast.unparse(part)[:40]}")
