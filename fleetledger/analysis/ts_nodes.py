"""The pieces every part of the tree-sitter converter (``tsconvert``) builds with: the
error it raises, CPython 3.14's node classes the host may lack, and the helpers that make
host ``ast`` nodes with CPython's positions from tree-sitter nodes.

Positions are CPython's: ``lineno`` 1-based, ``col_offset`` and ``end_col_offset`` in UTF-8
bytes, which is how tree-sitter counts its points.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from tree_sitter import Node

_POSITIONS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


class TreeSitterSyntaxError(ValueError):
    """The text is not Python that tree-sitter and this converter understand.

    The message is ``syntax error at line N: why``; ``lineno`` is N (None when unknown). Any
    failure inside the conversion is reported as this error too, never as another exception.
    """

    def __init__(self, message: str, *, lineno: int | None = None) -> None:
        super().__init__(message)
        self.lineno = lineno

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (str(self), self.lineno))


def _rebuild_error(message: str, lineno: int | None) -> TreeSitterSyntaxError:
    return TreeSitterSyntaxError(message, lineno=lineno)


class _Reparse(Exception):
    """The tree misreads a ``type`` keyword at ``offset``: hide it and parse again."""

    def __init__(self, offset: int, message: str, lineno: int) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.lineno = lineno


def _late_class(name: str, base: type, fields: tuple[str, ...], doc: str) -> Any:
    """The host's ``ast.<name>``, or a stand-in with CPython 3.14's fields and attributes."""
    host = getattr(ast, name, None)
    if host is not None:
        return host
    return type(name, (base,), {"_fields": fields, "_attributes": _POSITIONS, "__doc__": doc,
                                "__module__": __name__, "__match_args__": fields})


type_param: Any = _late_class("type_param", ast.AST, (), "A type parameter (Python 3.12's ast.type_param).")
TypeVar: Any = _late_class("TypeVar", type_param, ("name", "bound", "default_value"), "``T``, ``T: bound``, ``T = default``.")
ParamSpec: Any = _late_class("ParamSpec", type_param, ("name", "default_value"), "``**P`` in type parameters.")
TypeVarTuple: Any = _late_class("TypeVarTuple", type_param, ("name", "default_value"), "``*Ts`` in type parameters.")
TypeAlias: Any = _late_class("TypeAlias", ast.stmt, ("name", "type_params", "value"), "``type X[T] = value`` (PEP 695).")
TemplateStr: Any = _late_class("TemplateStr", ast.expr, ("values",), "A t-string (PEP 750): Constant and Interpolation parts.")
Interpolation: Any = _late_class("Interpolation", ast.expr, ("value", "str", "conversion", "format_spec"),
                                 "A replacement field of a t-string; ``str`` is the expression's source text.")

_HAS_TYPE_PARAMS = "type_params" in ast.FunctionDef._fields

_new = ast.AST.__new__
_LOAD, _STORE, _DEL = ast.Load(), ast.Store(), ast.Del()


def _kids(node: Node) -> list[Node]:
    """The node's children without comments and line continuations."""
    return [child for child in node.children if not child.is_extra]


def _span(node: Node) -> tuple[int, int, int, int]:
    start = node.start_point
    end = node.end_point
    return (start[0] + 1, start[1], end[0] + 1, end[1])


def _join(first: Node, last: Node) -> tuple[int, int, int, int]:
    start = first.start_point
    end = last.end_point
    return (start[0] + 1, start[1], end[0] + 1, end[1])


def _mk(cls: Any, fields: dict[str, Any], pos: tuple[int, int, int, int]) -> Any:
    """A node of ``cls`` with ``fields`` and positions ``pos`` (bypasses ``__init__`` for speed)."""
    fields["lineno"], fields["col_offset"], fields["end_lineno"], fields["end_col_offset"] = pos
    node = _new(cls)
    node.__dict__ = fields
    return node


def _at(cls: Any, fields: dict[str, Any], node: Node) -> Any:
    """A node of ``cls`` with ``fields``, spanning tree-sitter node ``node``."""
    start = node.start_point
    end = node.end_point
    fields["lineno"] = start[0] + 1
    fields["col_offset"] = start[1]
    fields["end_lineno"] = end[0] + 1
    fields["end_col_offset"] = end[1]
    result = _new(cls)
    result.__dict__ = fields
    return result


def _mk_bare(cls: Any, fields: dict[str, Any]) -> Any:
    """A node of ``cls`` that has no positions (``arguments``, ``comprehension``...)."""
    node = _new(cls)
    node.__dict__ = fields
    return node


def _from_to(first: ast.AST, last: ast.AST) -> tuple[int, int, int, int]:
    return (first.lineno, first.col_offset, last.end_lineno, last.end_col_offset)  # type: ignore[attr-defined]


def _with_end(node: Node, last: ast.AST) -> tuple[int, int, int, int]:
    start = node.start_point
    return (start[0] + 1, start[1], last.end_lineno, last.end_col_offset)  # type: ignore[attr-defined]


class _Handlers(dict):  # type: ignore[type-arg]
    """Node type -> handler; an unknown type gets ``default`` (which refuses the node)."""

    def __init__(self, default: Callable[[Node], Any], handlers: dict[str, Callable[[Node], Any]]) -> None:
        super().__init__(handlers)
        self._default = default

    def __missing__(self, key: str) -> Callable[[Node], Any]:
        return self._default


def _split(nodes: list[Node], separator: str) -> list[list[Node]]:
    """Groups ``nodes`` between ``separator`` tokens (a trailing separator makes no group)."""
    groups: list[list[Node]] = [[]]
    for node in nodes:
        if node.type == separator:
            groups.append([])
        else:
            groups[-1].append(node)
    if not groups[-1]:
        groups.pop()
    return groups


def _last_block(node: Node) -> Node | None:
    for child in reversed(node.children):
        if child.type == "block":
            return child
    return None
