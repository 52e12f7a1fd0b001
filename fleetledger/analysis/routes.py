"""What a matched route fixes: the request's path in a view that only rules without variable
parts reach.

A router runs a view only for a path that matches one of its rules (Werkzeug redirects other
spellings, ``//x`` or a missing ``/``, to the rule's own). So in a view registered only with
``@app.route("/reports/daily")``, ``request.path`` is ``"/reports/daily"``: text the code's
author wrote, not the client's. That holds for the code a request reaches only through such
views; a view that another function calls (an error handler, a ``before_request`` hook, a
view with ``<converters>``) may see any path. ``fixed_path`` therefore asks, of the function
that reads the path:

* it is a handler registered only by routing decorators (``[[handler]] path_argument``), each
  with a constant rule holding no variable part (``<id>``, ``{id}``, ``:id``), and no other
  decorator (a hook or a wrapper could run it for other paths);
* every reference to it in its module is a call made by a function that passes the same test
  (the ``GET`` view that calls the ``POST`` one), and none is elsewhere (passed as a value,
  called at module level).

The rule's text is the value (with one rule; with several, a text built from constants): a
prefix the application adds at registration (a blueprint's) is written by the author too.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .definitions import FunctionInfo
from .values import Value, constant
from .walks import child_nodes, walk

if TYPE_CHECKING:
    from .interp import Frame
    from .program import Program

_VARIABLE = ("<", "{", ":")


def fixed_path(program: Program, function: FunctionInfo | None) -> Value | None:
    """Returns the request path as the routes reaching ``function`` fix it, or None when they
    do not (then the path is outside data).

    Args:
        program: The analysis (its library models and loaded modules).
        function: The function reading the path (None at module level: not fixed).

    Returns:
        A constant (one rule), a value built from constants (several rules), or None.
        Computed once per function and analysis.
    """
    if function is None:
        return None
    rules = _rules(program, function, program.fixed_paths)
    if rules is None:
        return None
    return constant(rules[0]) if len(set(rules)) == 1 else Value(types=frozenset({"str"}))


def _rules(program: Program, function: FunctionInfo, cache: dict[str, tuple[str, ...] | None]) -> tuple[str, ...] | None:
    if function.id in cache:
        return cache[function.id]
    cache[function.id] = None  # a cycle of calls reaches nothing fixed
    own = _static_rules(program, function)
    callers = _callers(program, function) if own is not None else None
    if own is None or callers is None:
        return None
    rules = list(own)
    for caller in callers:
        theirs = _rules(program, caller, cache)
        if theirs is None:
            return None
        rules.extend(theirs)
    if not rules:
        return None  # an undecorated function nothing calls
    cache[function.id] = tuple(rules)
    return cache[function.id]


def _static_rules(program: Program, function: FunctionInfo) -> tuple[str, ...] | None:
    """The rules of a function registered only by routing decorators (``X.route(...)`` with a
    ``[[handler]] path_argument`` decorator name) with constant rules without variable parts;
    ``()`` for an undecorated function; None otherwise."""
    names = {name for h in program.catalog.handlers if h.path_argument for name in h.decorators}
    rules: list[str] = []
    for decorator in function.decorators:
        if not isinstance(decorator, ast.Call) or not isinstance(decorator.func, ast.Attribute) or (
                decorator.func.attr not in names):
            return None
        first = decorator.args[0] if decorator.args else next(
            (k.value for k in decorator.keywords if k.arg in ("rule", "path")), None)
        rule = _constant_text(program, function, first)
        if rule is None or not rule.startswith("/") or any(mark in rule for mark in _VARIABLE):
            return None
        rules.append(rule)
    return tuple(rules)


def _constant_text(program: Program, function: FunctionInfo, expr: ast.expr | None) -> str | None:
    """A rule written as a literal, or as a module constant's name."""
    if isinstance(expr, ast.Constant):
        return expr.value if isinstance(expr.value, str) else None
    if isinstance(expr, ast.Name):
        program.run(function.module)
        value = function.module.globals.get(expr.id)
        if value is not None and value.is_const and isinstance(value.const, str):
            return value.const
    return None


def _callers(program: Program, function: FunctionInfo) -> list[FunctionInfo] | None:
    """The functions of its module that call ``function`` by its name; None when the name is
    used otherwise (passed as a value, called at module level or from a class body)."""
    module = function.module
    callers: list[FunctionInfo] = []
    for other in (f for f in program.functions.values() if f.module is module and f is not function):
        for node in _own_nodes(other.node):
            if isinstance(node, ast.Name) and node.id == function.name:
                if not _called(other.node, node):
                    return None
                if other not in callers:
                    callers.append(other)
    for node in _own_nodes(module.tree):
        if isinstance(node, ast.Name) and node.id == function.name:
            return None
    return callers


def _own_nodes(root: ast.AST):  # type: ignore[no-untyped-def]
    """The nodes of a function's (or a module's) own code, not of the functions it defines
    (their decorators and defaults are its own; a class body it defines is too)."""
    todo = list(child_nodes(root)) if not isinstance(root, ast.Lambda) else [root.body]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(getattr(node, "decorator_list", []))
            todo.extend(node.args.defaults)
            todo.extend(d for d in node.args.kw_defaults if d is not None)
            continue
        yield node
        todo.extend(child_nodes(node))


def _called(root: ast.AST, name: ast.Name) -> bool:
    """True when ``name`` is the callee of a call in ``root``."""
    return any(isinstance(node, ast.Call) and node.func is name for node in walk(root))


def fixed_read(frame: Frame, owner: Value, attr: str) -> Value | None:
    """``request.path`` read in a function where the routes reaching it fix it
    (``fixed_path``): the route's text, not outside data; None elsewhere (a member no source
    model lists as ``route_fixed``, a module's body, an object holding data)."""
    if frame.function is None or owner.labels or owner.items is not None:
        return None
    for type_name in owner.types:
        for base in frame.program.class_mro(type_name):
            source = frame.catalog.sources_type.get(base)
            if source is not None and attr in source.route_fixed:
                return fixed_path(frame.program, frame.function)
    return None
