"""Operators and string building in the abstract interpreter (``interp.Frame``): constants are
folded while small; ``+``, ``%`` and f-strings join their parts' taint and keep where each part
is placed (a constant prefix, suffix and the texts around a value), which the checks of a sink
kind read (``marks.placed_after``); numeric operators give untainted numbers.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Any

from .sequences import leading_items, with_rest
from .texts import format_pieces, format_tail, joined_text, tail_of, texts_of
from .marks import placed_after, unmarked
from .reprs import formatted
from .values import EMPTY, NOT_CONSTANT, UNKNOWN_KEYS, Value, constant, join, taint_only

CONST_TYPES = (str, int, float, bool, bytes, type(None))
_NUMERIC_OPS = (ast.Sub, ast.Div, ast.FloorDiv, ast.Pow, ast.LShift, ast.RShift, ast.BitAnd, ast.BitXor, ast.MatMult)
_CONST_OPS: dict[type, Any] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Mod: lambda a, b: a % b, ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: a / b,
    ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b,
}
MAX_CONST_LEN = 4096

_NUMBER_TYPES = frozenset({"int", "float", "bool", "complex", "decimal.Decimal", "fractions.Fraction"})

SOME_BOOL = Value(types=frozenset({"bool"}))
"""A truth value not known here (``a == b`` of values that are not constants). Unlike
``EMPTY``, which a join skips, it makes a join of constants not constant: a function returning
``True`` on one path and a comparison on another does not always return ``True``."""


class Operators:
    """Operators and string building, mixed into ``interp.Frame``."""

    def binop_chain(self, node: ast.BinOp) -> Value:
        """Evaluates ``a + b + c + ...`` iteratively (a left-deep chain of thousands of terms
        costs one level of recursion, not thousands)."""
        spine: list[ast.BinOp] = []
        current: ast.expr = node
        while isinstance(current, ast.BinOp):
            spine.append(current)
            current = current.left
        value = self.expr(current)
        for link in reversed(spine):
            self.program.budget.spend()
            value = self.binop(link.op, value, self.expr(link.right), link)
        return value

    def unary(self, op: ast.unaryop, operand: Value) -> Value:
        """Applies a unary operator: folded for a constant; else a number or a bool (no taint)."""
        if operand.is_const:
            try:
                result = {ast.Not: lambda v: not v, ast.USub: lambda v: -v, ast.UAdd: lambda v: +v,
                          ast.Invert: lambda v: ~v}[type(op)](operand.const)
                return constant(result)
            except Exception:
                return EMPTY
        return SOME_BOOL if isinstance(op, ast.Not) else EMPTY

    def binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
        if left.is_const and right.is_const and type(op) in _CONST_OPS and _small(left.const, right.const, op):
            try:
                result = _CONST_OPS[type(op)](left.const, right.const)
            except Exception:
                result = NOT_CONSTANT
            if isinstance(result, CONST_TYPES) and not (isinstance(result, (str, bytes)) and len(result) > MAX_CONST_LEN):
                return constant(result)
        if isinstance(op, ast.Div) and not left.is_const and not _numeric(left) and not _numeric(right):
            # ``folder / name``, Python's ``__truediv__``: on a path (``pathlib``), the joined path.
            # A folder read from an object or a library setting (``settings.MEDIA_ROOT / name``)
            # is of a type not known here, and text never divides a number: the join it makes
            # holds both sides' data.
            joined = join(taint_only(left.flatten()), taint_only(right.flatten()))
            if any(not t.startswith("=") for t in left.types):
                return join(self.method_result(left, "__truediv__", node, args=[right]), joined)
            return joined
        if isinstance(op, _NUMERIC_OPS):
            return EMPTY
        if isinstance(op, ast.Mod) and left.is_const and isinstance(left.const, (str, bytes)):
            fields = left.const.count("%" if isinstance(left.const, str) else b"%")
            operands = _constant_operands(right, fields)  # ``"^(%s)+$" % (a, b)`` of constants: Python's own result
            if operands is not None and _widths_bounded(left.const):
                try:
                    result = left.const % operands
                except (TypeError, ValueError, KeyError):
                    result = None
                if isinstance(result, (str, bytes)) and len(result) <= MAX_CONST_LEN:
                    return constant(result)
        if isinstance(op, ast.Mod) and left.is_const and isinstance(left.const, str):
            prefix = left.const.split("%", 1)[0]
            if right.items is None:  # one value, placed at the first field
                right = placed_after(right, prefix, prefix)
            # What ``%r`` writes is the value's repr, ``%d`` a number (not a host: "http://%d/").
            right = formatted(left.const, right, frozenset(self.catalog.kinds))
            return replace(unmarked(join(taint_only(left), taint_only(right.flatten()))), prefix=prefix or None,
                           suffix=format_tail(left.const), texts=texts_of(*map(constant, format_pieces(left.const))))
        if isinstance(op, ast.Add):
            joined = _concatenated(left, right)
            if joined is not None:
                return joined
            text = left.const if left.is_const and isinstance(left.const, str) else ""
            left = placed_after(left, "", None, right.const if right.is_const and isinstance(right.const, str) else None)
            right = placed_after(right, text, text if text else None, "")
        result = unmarked(join(taint_only(left.flatten()), taint_only(right.flatten())), placed=isinstance(op, ast.Add))
        if isinstance(op, ast.Add):
            prefix = left.prefix
            if left.is_const and isinstance(left.const, str) and right.prefix is not None:
                prefix = left.const + right.prefix
            suffix = right.suffix
            if right.is_const and isinstance(right.const, str) and left.suffix is not None:
                suffix = left.suffix + right.const
            return replace(result, prefix=prefix, suffix=suffix, texts=texts_of(left, right))
        return result

    def fstring(self, node: ast.AST) -> Value:
        parts: list[Value] = []
        prefix = ""
        fixed = True
        before = ""
        values = [self.expr(part) for part in getattr(node, "values", [])]
        for index, value in enumerate(values):
            value = placed_after(value, before, prefix if fixed else None, joined_text(values[index + 1:]))
            before = value.const if value.is_const and isinstance(value.const, str) else ""
            parts.append(value)
            if fixed:
                if value.is_const and isinstance(value.const, str):
                    prefix += value.const
                else:
                    fixed = False
        result = unmarked(join(*(taint_only(p) for p in parts)), placed=True)
        if fixed and all(p.is_const for p in parts):
            return constant(prefix)
        return replace(result, prefix=prefix or None, suffix=tail_of(parts), texts=texts_of(*parts), const=NOT_CONSTANT,
                       choices=frozenset())


def _small(left: Any, right: Any, op: ast.operator) -> bool:
    """True when folding ``left op right`` cannot build a huge constant (``10**10`` squared
    twenty times, a string repeated a million times): such results are not folded."""
    def size(value: Any) -> int:
        if isinstance(value, int):
            return value.bit_length() // 8
        return len(value) if isinstance(value, (str, bytes)) else 0

    if isinstance(op, ast.Mod) and isinstance(left, (str, bytes)) and not _widths_bounded(left):
        return False
    if isinstance(op, ast.Mult):
        if isinstance(left, (str, bytes)) or isinstance(right, (str, bytes)):
            count = right if isinstance(right, int) else left if isinstance(left, int) else 0
            return count * max(size(left), size(right)) <= MAX_CONST_LEN
        return size(left) + size(right) <= MAX_CONST_LEN
    return size(left) <= MAX_CONST_LEN and size(right) <= MAX_CONST_LEN


def _concatenated(left: Value, right: Value) -> Value | None:
    """``a + b`` where ``a`` is a list (or tuple) built here: the items of both, in order
    (``BASE + ["show", name]``), as far as positions are known; when ``b``'s are not (a list
    another function returns), ``a``'s items and then the rest, ``b`` whole. None when ``a`` is
    not such a sequence."""
    first = leading_items(left)
    if first is None:
        return None
    known, rest = first
    if rest is not None:
        return with_rest(known, join(rest, right.flatten()))
    second = leading_items(right)
    if second is None:
        return with_rest(known, right.flatten())
    return with_rest([*known, *second[0]], second[1])


_CONVERSION = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d*)(?:\.(\*|\d*))?")
"""A ``%`` conversion's start: its mapping key, flags, width and precision."""


def _widths_bounded(template: str | bytes) -> bool:
    """True when no ``%`` conversion of ``template`` asks for a width or precision from its
    arguments (``*``) or larger than ``MAX_CONST_LEN``: ``"%900000000s" % "x"`` in a hostile
    repository would have Python build a text of 900 MB before its length is checked."""
    text = template.decode("latin-1") if isinstance(template, bytes) else template
    return all(part != "*" and (not part or int(part) <= MAX_CONST_LEN)
               for found in _CONVERSION.finditer(text) for part in found.groups(""))


def _constant_operands(right: Value, left_fields: int) -> tuple[Any, ...] | dict[str, Any] | None:
    """What ``text % right`` formats when every part of it is a constant: a tuple's items by
    position (``% (a, b)``), or a dict's items by their text keys (``% {"hex": a}``, which
    ``%(hex)s`` reads, ``left_fields`` times at most); else None."""
    found = leading_items(right)
    if found is not None:
        parts = found[0] if found[1] is None else []
        return tuple(item.const for item in parts) if parts and all(item.is_const for item in parts) else None
    if (not right.items or right.labels or right.types or right.is_const or right.functions
            or not all(isinstance(k, str) and k != UNKNOWN_KEYS and not k.startswith(".") for k in right.items)):
        return None
    if not all(v.is_const and isinstance(v.const, (str, bytes, int)) for v in right.items.values()):
        return None
    mapping = {k: v.const for k, v in right.items.items()}  # (a key read many times must not build a huge text)
    return mapping if left_fields * max(len(str(v)) for v in mapping.values()) <= MAX_CONST_LEN else None


def _numeric(value: Value) -> bool:
    """True for a number, or a value of a number type (``int(x)``): what ``/`` divides."""
    if value.is_const:
        return isinstance(value.const, (int, float, complex))
    return bool(value.types & _NUMBER_TYPES)
