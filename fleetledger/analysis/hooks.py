"""A hook a base class declares and its subclasses fill in: what ``self.hook(...)`` runs when the
instance's class is not known.

A method whose body does nothing but declare itself (a docstring, ``pass``, ``...``, ``raise
NotImplementedError``; ``abc.abstractmethod`` or not) raises or does nothing: what does the work
on an instance is the override of its class, where Python looks ``self.hook`` up (the
template-method pattern, and ``abc``'s abstract methods, PEP 3119). Read in a method of the base class through
its ``self`` (a summary, or a public method analysed as an entry point), such a hook stands for
the overrides of the subclasses, the way class hierarchy analysis resolves a virtual call (Dean,
Grove and Chambers, ECOOP 1995), restricted to placeholders: a method with a body of its own may
be what runs, and stays the one resolved.

Only the public subclasses defined in the module of the instance's class are read: a module is
the unit whose content a summary depends on, so the answer never depends on which other modules
an analysis happened to load; a private class (``_Name``) is not the API its module offers
(``engine.template_caller`` reads the template-method pattern the same way).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .definitions import FunctionInfo

if TYPE_CHECKING:
    from .program import Program

MAX_OVERRIDES = 16
"""Overrides a hook stands for at most (the first by class id): each is a call to interpret."""


def is_placeholder(function: FunctionInfo) -> bool:
    """True when a method's body only declares it: docstring, ``pass``, ``...`` and ``raise
    NotImplementedError`` (called or not) statements, in any number, nothing else."""
    node = function.node
    if isinstance(node, ast.Lambda) or function.cls is None:
        return False
    for statement in node.body:
        if isinstance(statement, ast.Pass):
            continue
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and (
                isinstance(statement.value.value, str) or statement.value.value is Ellipsis):
            continue
        if isinstance(statement, ast.Raise) and statement.exc is not None and statement.cause is None:
            raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
            if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
                continue
        return False
    return True


def dispatched(program: Program, method: str, class_id: str, through_parameter: bool) -> frozenset[str]:
    """The functions ``self.name`` may run, for the method ``method`` (a function id) that the
    class ``class_id`` or one of its bases defines: the method itself, or, when it is a
    placeholder (``is_placeholder``) read through a parameter (the instance's class unknown), the
    overrides of ``class_id``'s public subclasses of its own module (at most ``MAX_OVERRIDES``, sorted
    by class id), with the placeholder when none overrides it.

    Args:
        program: The program whose classes and functions are known.
        method: The function id Python's lookup on ``class_id`` finds.
        class_id: The class the instance is known to be (or to derive from).
        through_parameter: True when the instance is a parameter's (``self`` in its method).

    Returns:
        Function ids, never empty.
    """
    function = program.functions.get(method)
    if not through_parameter or function is None or not is_placeholder(function):
        return frozenset({method})
    info = program.classes.get(class_id)
    if info is None:
        return frozenset({method})
    known = program.overrides.get((class_id, method))
    if known is None:
        known = program.overrides[(class_id, method)] = _overrides(program, function, class_id)
    return known


def _overrides(program: Program, function: FunctionInfo, class_id: str) -> frozenset[str]:
    """``dispatched`` for a placeholder, computed once per class and placeholder (``Program.overrides``)."""
    info = program.classes[class_id]
    method = function.id
    found: list[str] = []
    for other in sorted(info.module.classes):
        program.budget.spend()  # (a module of thousands of classes is read within the work budget)
        if other == class_id or info.module.classes[other].name.startswith("_") or (
                class_id not in program.class_mro(other)):
            continue
        override = program.method(other, function.name)
        resolved = program.functions.get(override) if override is not None else None
        if resolved is not None and override != method and override not in found and not is_placeholder(resolved):
            found.append(override)
        if len(found) >= MAX_OVERRIDES:
            break
    return frozenset(found or (method,))
