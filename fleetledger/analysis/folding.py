"""Library functions whose result on constants the engine computes, with Python's own
implementation: a regular expression built from escaped constants (``re.escape``, also through
``map(re.escape, words)``) stays a constant that the backtracking checks read, and so does a
list comprehension over constant texts whose element is computed without calls
(``"|".join([x % subs for x in variations])``).

Only functions of a text alone, without effects, are listed; anything else stays a call the
models describe.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from .sequences import leading_items
from .interp_operators import MAX_CONST_LEN
from .values import MAX_ITEMS, Value, constant
from .walks import walk

FOLDED: dict[str, Callable[[Any], Any]] = {"re.escape": re.escape}
"""Qualified name -> the function computed on a constant text."""

_CHARACTERS = {"set": dict.fromkeys, "frozenset": dict.fromkeys, "list": list, "tuple": list}
"""The builtins that make a container of a text's characters (a set keeps each one once)."""


def called(target: str, receiver: Value | None, args: list[Value], kwargs: dict[str, Value],
           star: list[Value]) -> Value | None:
    """The result of ``target(arg)`` for a function of ``FOLDED`` given one constant text, or
    of ``set``, ``frozenset``, ``list`` or ``tuple`` of a constant ``str`` (its characters by
    position, at most ``MAX_ITEMS``: ``set(string.ascii_letters + "-")`` is an allowlist whose
    members ``c in ALLOWED`` checks read); else None."""
    if receiver is not None or kwargs or star or len(args) != 1 or not args[0].is_const:
        return None
    text = args[0].const
    if target in _CHARACTERS and isinstance(text, str) and len(text) <= MAX_ITEMS:
        return Value(items={i: constant(c) for i, c in enumerate(_CHARACTERS[target](text))})
    fold = FOLDED.get(target)
    return _bounded(fold(text)) if fold is not None and isinstance(text, (str, bytes)) else None


def mapped(function: Value, iterables: list[Value]) -> Value | None:
    """``map(f, xs)`` of a function of ``FOLDED`` and a list or tuple of constant texts: the
    results by position; else None."""
    refs = [t[1:] for t in function.types if t.startswith("=")]
    fold = FOLDED.get(refs[0]) if len(refs) == 1 and len(function.types) == 1 else None
    if fold is None or len(iterables) != 1:
        return None
    source = iterables[0]
    if source.is_const and isinstance(source.const, (tuple, list)):
        texts = list(source.const)
    else:
        found = leading_items(source)
        if found is None or found[1] is not None or not all(item.is_const for item in found[0]):
            return None
        texts = [item.const for item in found[0]]
    if not texts or len(texts) > MAX_ITEMS or not all(isinstance(text, (str, bytes)) for text in texts):
        return None
    results = [_bounded(fold(text)) for text in texts]
    return Value(items=dict(enumerate(results)))


_UNROLLED_NODES = (ast.Name, ast.Constant, ast.BinOp, ast.JoinedStr, ast.FormattedValue, ast.Subscript,
                   ast.Slice, ast.Tuple, ast.List, ast.expr_context, ast.operator)
"""Nodes of an element expression computed without effects: no call, no attribute read (a
property of the analysed code could run), no assignment expression."""


def unrolled(interp: Any, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> Value | None:
    """The list of ``[elt for name in iterable]`` computed item by item, when ``iterable`` (an
    expression of names and literals, without calls or attribute reads, like ``elt``) holds at
    most ``MAX_ITEMS`` constant texts and numbers by position, there is one clause without
    conditions, and every item's ``elt`` is a constant; else None.

    Args:
        interp: the interpreter, whose ``expr(node)`` evaluates in its environment ``env``.
        node: the comprehension (a set's is never unrolled: its order is not the clause's).
    Returns:
        A ``Value`` with the results as items ``0 .. n-1``, or None (the caller then reads the
        comprehension as one unknown element, as for any other).
    """
    if isinstance(node, ast.SetComp) or len(node.generators) != 1:
        return None
    clause = node.generators[0]
    if clause.ifs or clause.is_async or not isinstance(clause.target, ast.Name):
        return None
    if not all(isinstance(n, _UNROLLED_NODES) for part in (clause.iter, node.elt) for n in walk(part)):
        return None
    found = leading_items(interp.expr(clause.iter))
    if found is None or found[1] is not None or len(found[0]) > MAX_ITEMS:
        return None
    if not all(item.is_const and isinstance(item.const, (str, bytes, int)) for item in found[0]):
        return None
    saved = interp.env
    results = []
    try:
        for item in found[0]:
            interp.env = {**saved, clause.target.id: item}
            result = interp.expr(node.elt)
            if not result.is_const:
                return None
            results.append(result)
    finally:
        interp.env = saved
    return Value(items=dict(enumerate(results)))


def _bounded(result: Any) -> Value:
    """A computed text as a constant, unless it is longer than the engine keeps constants (a
    hostile repository's huge literal): then a text of unknown value."""
    return constant(result) if len(result) <= MAX_CONST_LEN else Value()
