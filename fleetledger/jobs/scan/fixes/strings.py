"""String-built values as the rewrites read them: a concatenation, an f-string, ``%``
formatting or ``str.format`` split into constant text and the expressions put into it."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Piece:
    """Constant text (``text``) or an expression put into the string (``node``); ``formatted``
    when the expression is formatted in (an f-string, ``%``, ``format``: it may be any type),
    not added to text (then it is text already)."""

    text: str | None = None
    node: ast.expr | None = None
    formatted: bool = False


_PERCENT = re.compile(r"%(?:\((\w+)\))?([-#0 +]*\d*(?:\.\d+)?)([sdirfa%])")


def pieces(node: ast.expr) -> list[Piece] | None:
    """Splits a string-building expression into pieces; None when it is not one this module
    reads (a call, a name, a format specification, a ``%`` with a mapping...).

    Args:
        node: The expression.

    Returns:
        The pieces in order, adjacent constants merged; a lone ``Piece(node=...)`` is never
        returned for a plain expression (None instead).
    """
    out = _pieces(node)
    if out is None:
        return None
    merged: list[Piece] = []
    for piece in out:
        if piece.text is not None and merged and merged[-1].text is not None:
            merged[-1] = Piece(text=merged[-1].text + piece.text)
        elif piece.text != "":
            merged.append(piece)
    return merged


def _pieces(node: ast.expr) -> list[Piece] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [Piece(text=node.value)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _pieces(node.left) if _stringy(node.left) else [Piece(node=node.left)]
        right = _pieces(node.right) if _stringy(node.right) else [Piece(node=node.right)]
        if left is None or right is None or not (_stringy(node.left) or _stringy(node.right)):
            return None
        return left + right
    if isinstance(node, ast.JoinedStr):
        out: list[Piece] = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                out.append(Piece(text=value.value))
            elif isinstance(value, ast.FormattedValue) and value.conversion == -1 and value.format_spec is None:
                out.append(Piece(node=value.value, formatted=True))
            else:
                return None
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) \
            and isinstance(node.left.value, str):
        mapping: dict[str, ast.expr] | None = None
        if isinstance(node.right, ast.Dict):  # "%(name)s" % {"name": value}: constant keys only
            if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.right.keys):
                return None
            mapping = {k.value: v for k, v in zip(node.right.keys, node.right.values)}  # type: ignore[union-attr]
        values = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        if any(isinstance(v, ast.Starred) for v in values) or isinstance(node.right, ast.DictComp):
            return None
        out, at, used = [], 0, 0
        for match in _PERCENT.finditer(node.left.value):
            if match.group(2) or (match.group(1) is None) == (mapping is not None) and match.group(3) != "%":
                return None
            out.append(Piece(text=node.left.value[at:match.start()]))
            if match.group(3) == "%":
                out.append(Piece(text="%"))
            elif match.group(3) in "sdi" and mapping is not None and match.group(1) in mapping:
                out.append(Piece(node=mapping[match.group(1)], formatted=True))
            elif match.group(3) in "sdi" and mapping is None and used < len(values):
                out.append(Piece(node=values[used], formatted=True))
                used += 1
            else:
                return None
            at = match.end()
        if mapping is None and used != len(values):
            return None
        out.append(Piece(text=node.left.value[at:]))
        return out
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str) and not node.keywords \
            and not any(isinstance(a, ast.Starred) for a in node.args):
        template = node.func.value.value
        out, at, used = [], 0, 0
        for match in re.finditer(r"\{\{|\}\}|\{(\d*)\}|[{}]", template):
            out.append(Piece(text=template[at:match.start()]))
            token = match.group(0)
            if token in ("{{", "}}"):
                out.append(Piece(text=token[0]))
            elif token.startswith("{") and token.endswith("}"):
                index = int(match.group(1)) if match.group(1) else used
                if index >= len(node.args):
                    return None
                out.append(Piece(node=node.args[index], formatted=True))
                used += 1
            else:
                return None
            at = match.end()
        out.append(Piece(text=template[at:]))
        return out
    return None


def _stringy(node: ast.expr) -> bool:
    """True when the node builds a string this module reads (not a plain expression)."""
    return (isinstance(node, (ast.Constant, ast.JoinedStr)) and not (isinstance(node, ast.Constant)
                                                                      and not isinstance(node.value, str))) \
        or (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)) and _pieces(node) is not None) \
        or (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant))


def literal(text: str, like: str = '"') -> str:
    """Returns a Python string literal for ``text``, with ``like``'s quote where it can."""
    if like == '"' and '"' not in text and "\\" not in text and "\n" not in text and "\r" not in text \
            and text.isprintable():
        return f'"{text}"'
    return repr(text)
