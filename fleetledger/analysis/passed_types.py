"""The types a class's constructions pass to ``__init__`` for an attribute it stores from a
parameter: ``self.logger = logger`` holds what the code that makes the object passes.

A method that only a library calls (a callback given to a server: uvicorn's
``RequestResponseCycle.send``) is analysed with ``self`` of its class but no caller: what
``__init__`` stored from its parameters has no type there, and a call on it
(``self.access_logger.info(...)``) matches no model. Its module's constructions of the class
say what is passed (``RequestResponseCycle(access_logger=self.access_logger)`` in a method of a
class whose ``__init__`` stored ``logging.getLogger(...)``). This reads them, flow-insensitively,
as a type inference of attributes from their assignments does: each construction in the
class's own module, its argument for the parameter typed when it is ``self.<attribute>`` of
the constructing method's class (that class's own stored or passed types), a call of a
library function or class the models type, or a class of the code.
"""

from __future__ import annotations

import ast
from .definitions import ClassInfo, FunctionInfo
from .interp import Frame
from .walks import child_nodes

MAX_CONSTRUCTIONS = 16
"""Constructions of a class a lookup reads, at most (the first in the module's order)."""
MAX_NESTED = 4
"""Lookups under way inside one another, at most (``self.x`` passed from a class whose own ``x``
was passed from another's...): a chain of thousands of classes built to exhaust the stack
stops there, its types unknown, instead of costing the functions reading it their analysis."""


def passed_types(frame: Frame, class_id: str, init: FunctionInfo, params: list[int]) -> frozenset[str]:
    """The types the constructions of ``class_id`` in its module pass for ``params`` (indices
    of ``init``'s parameters that ``__init__`` stores as they are).

    Args:
        frame: The frame reading the attribute.
        class_id: The class.
        init: Its ``__init__``.
        params: The parameter indices whose arguments are looked at.

    Returns:
        The union of the argument types found; empty when none is known, while the same
        lookup is under way (a construction passing ``self.x`` of its own class), or inside
        ``MAX_NESTED`` other lookups.
    """
    program = frame.program
    info = program.classes.get(class_id)
    key = (class_id, tuple(params))
    if key in program.passed:
        return program.passed[key]
    if info is None or key in program.passing or len(program.passing) >= MAX_NESTED:
        return frozenset()
    program.passing.add(key)
    try:
        found: set[str] = set()
        for call, method in _constructions(info):
            for index in params:
                argument = _argument(call, init, index)
                if argument is not None:
                    found |= _types(frame, info, method, argument)
    finally:
        program.passing.discard(key)
    if not program.passing:  # (one found inside another's lookup may miss what that one holds)
        program.passed[key] = frozenset(found)
    return frozenset(found)


def _constructions(info: ClassInfo) -> list[tuple[ast.Call, FunctionInfo | None]]:
    """The calls ``Name(...)`` (or ``x.Name(...)``) of the class in its module, each with the
    innermost function making it (None: the module's own code), the first ``MAX_CONSTRUCTIONS``
    in the module's order. The module's calls of its classes' names are indexed once, in one
    walk of its tree (a module of thousands of classes costs one pass, not one per class), kept
    with the module (the analyses of one process share it)."""
    module = info.module
    index = module.constructions
    if index is None:
        names = {c.name for c in module.classes.values()}
        made: list[tuple[str, ast.Call, FunctionInfo | None]] = []
        stack: list[tuple[ast.AST, FunctionInfo | None]] = [(module.tree, None)]
        while stack:
            node, function = stack.pop()
            for child in child_nodes(node):
                if isinstance(child, ast.Call):
                    name = child.func.id if isinstance(child.func, ast.Name) else \
                        child.func.attr if isinstance(child.func, ast.Attribute) else None
                    if name in names:
                        made.append((name, child, function))
                stack.append((child, module.functions.get(module.by_node.get(child, ""), function)))
        index = {}
        for name, node, function in sorted(made, key=lambda m: (m[1].lineno, m[1].col_offset)):
            calls = index.setdefault(name, [])
            if len(calls) < MAX_CONSTRUCTIONS:
                calls.append((node, function))
        module.constructions = index
    return index.get(info.name, [])


def _argument(call: ast.Call, init: FunctionInfo, index: int) -> ast.expr | None:
    """The argument a call of the class passes for ``init``'s parameter ``index`` (its first
    parameter is the instance): by keyword, else by position before any ``*args``."""
    name = init.params[index].arg
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    position = index - 1
    before = [a for a in call.args[:position + 1] if not isinstance(a, ast.Starred)]
    if position < len(call.args) and len(before) == position + 1:
        return call.args[position]
    return None


def _types(frame: Frame, info: ClassInfo, method: FunctionInfo | None, argument: ast.expr) -> frozenset[str]:
    """The types of an argument expression, as far as it shows them without interpreting its
    function: ``self.x`` of the making method's class, a call of a library name the models type
    or of a class of the code."""
    program = frame.program
    if (isinstance(argument, ast.Attribute) and isinstance(argument.value, ast.Name) and method is not None and method.bound
            and method.cls is not None and method.params and argument.value.id == method.params[0].arg):
        return program.stored_types(frame, method.cls.id, argument.attr)
    if not isinstance(argument, ast.Call) or not _dotted(argument.func):
        return frozenset()
    callee = Frame(program, info.module, None, dict(info.module.globals), summarising=True).expr(argument.func)
    types = {t for q in program.library_refs(callee.types) for t, when in program.catalog.returns.get(q, ()) if when is None}
    types |= {q for q in program.library_refs(callee.types) if q in program.catalog.bases}
    return frozenset(types | (callee.functions & program.classes.keys()))


def _dotted(node: ast.expr) -> bool:
    """True for a name or a chain of attributes of one (``logging.getLogger``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)
