"""Lists and tuples the engine knows by position: the items it knows one by one from the
start, and what the rest holds where a part of unknown length comes next (``["hg", *cmd]``).
Such a value is a ``Value`` whose items are keyed ``0 .. n-1``, and ``ADDED_ITEMS`` for the rest.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .values import ADDED_ITEMS, MAX_ITEMS, Value, bounded, computed_from, join, of_labels


def leading_items(value: Value) -> tuple[list[Value], Value | None] | None:
    """The items of a list or tuple built here that the engine knows by position, and what the
    rest holds: ``["hg", *cmd]`` is ``(["hg"], cmd)``, ``[a, b]`` is ``([a, b], None)``. None
    when the value is not such a sequence (keys other than ``0 .. n-1`` and ``ADDED_ITEMS``, or
    taint beside its items)."""
    if value.labels or value.types or value.is_const or value.functions:
        return None
    return positions(value)


def positions(value: Value) -> tuple[list[Value], Value | None] | None:
    """``leading_items`` of the items alone, whatever taint the value holds beside them (an
    argument vector's positions decide what runs even so)."""
    items = value.items
    if items is None:
        return None
    rest = items.get(ADDED_ITEMS)
    known = [items.get(i) for i in range(len(items) - (rest is not None))]
    if any(item is None for item in known):
        return None
    return known, rest  # type: ignore[return-value]


def with_rest(known: list[Value], rest: Value | None) -> Value:
    """A list or tuple whose first items are ``known`` by position and whose other items, of a
    number the engine does not know, hold ``rest`` (``ADDED_ITEMS``); None: there are no
    others."""
    items: dict[Any, Value] = dict(enumerate(bounded(item) for item in known))
    if rest is not None:
        items[ADDED_ITEMS] = bounded(rest)
    if len(items) > MAX_ITEMS:
        return join(*(item.flatten() for item in items.values()))
    return Value(items=items)


def held_only(value: Value, positions: tuple[int, ...]) -> frozenset[tuple[Any, ...]]:
    """The keys of the labels that ``value``, a list or tuple, holds only at these positions:
    not in its other items, not beside its items (what a ``list(...)`` of unknown parts
    holds), not under a key whose position is unknown. Keys as a call's result holds them (a
    parameter's label marked ``DERIVED``, ``computed_from``). Empty when the value is no such
    sequence."""
    if value.items is None:
        return frozenset()

    def keys(*parts: Value) -> set[tuple[Any, ...]]:
        return {label.key for label in computed_from(of_labels([lab for p in parts for lab in p.all_labels()])).labels.values()}

    there = keys(*(item for key, item in value.items.items() if key in positions))
    elsewhere = keys(of_labels(list(value.labels.values())), *(item for key, item in value.items.items() if key not in positions))
    return frozenset(there - elsewhere)


def clean_only(value: Value, keys: frozenset[tuple[Any, ...]], kinds: frozenset[str], by: str) -> Value:
    """``value`` with its labels of these keys (``held_only``) sanitised for ``kinds``."""
    if not keys or not value.tainted():
        return value
    return join(replace(value, labels={}, items=None), of_labels(
        [label.clean(kinds, by) if label.key in keys else label for label in value.all_labels()]))


def item_position(owner: Value, key: Value) -> int | None:
    """The item ``xs[k] = v`` replaces in a list known by position (``k`` counted from the end
    when negative), or None when that is not known."""
    if not (key.is_const and isinstance(key.const, int) and not isinstance(key.const, bool)):
        return None
    leading = leading_items(owner)
    if leading is None or leading[1] is not None or not leading[0]:
        return None
    count = len(leading[0])
    index = key.const + count if key.const < 0 else key.const
    return index if 0 <= index < count else None
