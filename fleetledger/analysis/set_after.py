"""What the code sets on an object right after a call made it: ``resp = Response(body)`` then
``resp.mimetype = "application/json"`` makes the same response as
``Response(body, mimetype="application/json")``.

A sink model says which of its ``unless`` keywords are also attributes of the object the call
returns (``Sink.unless_set``: a Flask, Quart or Pyramid response's ``mimetype`` and
``content_type``; not Django's ``HttpResponse``, which has no such attribute). Read here: the
statements after ``name = call(...)`` in the same block, in order, while each is an expression
or an assignment that neither rebinds ``name`` nor can leave the block (a ``return``, a
``raise``, a branch or a loop ends the reading: what follows may not run). The first
assignment of one of those attributes on ``name`` decides; the object is not sent before it,
as nothing in between can return it.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Mapping
from typing import Any

MAX_FOLLOWING = 32
"""Statements read after the call (a response's type is set within a few; a block of thousands
of such calls would otherwise cost their square)."""
_BLOCKS: weakref.WeakKeyDictionary[ast.AST, dict[int, tuple[list[ast.stmt], int]]] = weakref.WeakKeyDictionary()


def attribute_set(scope: ast.AST, call: ast.Call, wanted: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The attribute, of those ``wanted`` names, first assigned right after ``call`` on the
    variable the call's result is bound to, and the constant assigned.

    Args:
        scope: The function (or module) whose body holds the call.
        call: The call; it must be the whole value of a plain ``name = call`` statement.
        wanted: Attribute name -> the constants the caller looks for (only the names are read).

    Returns:
        ``(attribute, constant)``, the constant as the code wrote it (``None`` for an
        assigned value that is no constant); or None when there is no such statement, the
        call is not so bound, a statement in between may leave the block or rebinds the
        name, or none is within ``MAX_FOLLOWING`` statements.
    """
    where = _statements(scope).get(id(call))
    if where is None:
        return None
    body, index = where
    bound = body[index]
    assert isinstance(bound, ast.Assign)
    name = bound.targets[0].id  # type: ignore[attr-defined]
    for statement in body[index + 1:index + 1 + MAX_FOLLOWING]:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    return None
                if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == name and target.attr in wanted):
                    return target.attr, statement.value.value if isinstance(statement.value, ast.Constant) else None
            continue
        if isinstance(statement, (ast.Expr, ast.AugAssign, ast.AnnAssign)) and not _binds(statement, name):
            continue
        return None
    return None


def _binds(statement: ast.stmt, name: str) -> bool:
    target = getattr(statement, "target", None)
    return isinstance(target, ast.Name) and target.id == name


def _statements(scope: ast.AST) -> dict[int, tuple[list[ast.stmt], int]]:
    """id(call) -> (the statement list, index) of each ``name = call(...)`` in ``scope``'s
    blocks, nested blocks included, not nested functions' (computed once per scope)."""
    known = _BLOCKS.get(scope)
    if known is not None:
        return known
    found: dict[int, tuple[list[ast.stmt], int]] = {}
    todo: list[list[ast.stmt]] = [list(getattr(scope, "body", []))]
    while todo:
        body = todo.pop()
        for index, statement in enumerate(body):
            if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call)):
                found[id(statement.value)] = (body, index)
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    todo.append(inner)
            for handler in getattr(statement, "handlers", []):
                todo.append(handler.body)
            for case in getattr(statement, "cases", []):
                todo.append(case.body)
    _BLOCKS[scope] = found
    return found
