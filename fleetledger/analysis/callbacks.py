"""A callback its constructor stored on the instance: ``self.callback(value)`` keeps nothing in
``self``.

A call the models do not describe, made on an object, may keep its arguments in it
(``Objects.stores_into``). Not a call of a value the object merely holds: Python binds a method
to the instance only when the class defines it, and an attribute set on the instance shadows a
method of the class (a function is a non-data descriptor; Python's data model, "Invoking
Descriptors"). So where ``__init__`` sets ``self.name = expr`` unconditionally, from an
expression that does not involve the instance, ``obj.name(...)`` calls that value without the
object, whatever subclass the object is of.

Held to what the code shows, since a miss hides a flow: every class of the object's MRO is the
analysed code's (no library base, no decorator, no metaclass, no ``__getattr__``,
``__getattribute__`` or ``__init_subclass__``), none defines ``name``, no class of its module
defines it, and the module stores an attribute ``name`` nowhere else, never calls ``setattr``,
and never reads ``__dict__``, ``__class__``, ``vars``, ``locals`` or ``exec``. A store into the
attribute from another module (``job.callback = job.keep``) is not seen.
"""

from __future__ import annotations

import ast
import weakref
from collections import Counter
from typing import TYPE_CHECKING

from .free_names import scope_bindings
from .values import Value
from .walks import walk

if TYPE_CHECKING:
    from .program import Program

_HOOKS = frozenset({"__getattr__", "__getattribute__", "__init_subclass__"})
_REFLECTION = frozenset({"setattr", "vars", "locals", "exec", "__dict__", "__class__"})
_STORES: weakref.WeakKeyDictionary[ast.Module, tuple[Counter[str], bool, frozenset[str]]] = weakref.WeakKeyDictionary()


def stored_callback(program: Program, value: Value, name: str) -> bool:
    """True when ``value.name`` is, for certain, a value the object's constructor stored on it
    (see the module's docstring), not a method bound to the object.

    Args:
        program: The program whose classes are known.
        value: The receiver (its types are the classes it is an object of).
        name: The attribute called.
    """
    if not value.types or any(t not in program.classes for t in value.types):
        return False
    for class_id in value.types:
        stored = False
        for base in program.class_mro(class_id):
            info = program.classes.get(base)
            if info is None:
                if base in ("object", "builtins.object"):
                    continue
                return False
            if (name in info.methods or name in info.attributes or _HOOKS & info.methods.keys()
                    or info.node.decorator_list or info.node.keywords):
                return False
            stores, reflective, in_classes = _stores(info.module.tree)
            if reflective or stores[name] > 1 or name in in_classes:
                return False  # (stored elsewhere, or a subclass or mixin of the module may define it)
            init = info.methods.get("__init__")
            stored = stored or (init is not None and _sets(program, init, name))
        if not stored:
            return False
    return True


def _sets(program: Program, init: str, name: str) -> bool:
    """True when ``__init__`` (a function id) sets ``self.name`` in a statement of its own body
    (not a branch) from an expression that does not read the instance."""
    function = program.functions.get(init)
    if function is None or not function.params or isinstance(function.node, ast.Lambda):
        return False
    receiver = function.params[0].arg
    for statement in function.node.body:
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(target := statement.targets[0], ast.Attribute) and target.attr == name
                and isinstance(target.value, ast.Name) and target.value.id == receiver):
            return not any(isinstance(n, ast.Name) and n.id == receiver for n in walk(statement.value))
    return False


def _stores(tree: ast.Module) -> tuple[Counter[str], bool, frozenset[str]]:
    """The attribute names the module stores (``x.name = ...``, also augmented and annotated),
    counted; whether it uses reflection that may store one unseen; and the names any class body
    of the module binds (its methods and class attributes, read from the syntax). Computed once
    per tree, so that a call costs no walk of the module's classes."""
    known = _STORES.get(tree)
    if known is None:
        stores: Counter[str] = Counter()
        reflective = False
        in_classes: set[str] = set()
        for node in walk(tree):
            if isinstance(node, ast.Attribute):
                if isinstance(node.ctx, (ast.Store, ast.Del)):
                    stores[node.attr] += 1
                reflective = reflective or node.attr in _REFLECTION
            elif isinstance(node, ast.Name) and node.id in _REFLECTION:
                reflective = True
            elif isinstance(node, ast.ClassDef):
                in_classes.update(scope_bindings(node.body))
        known = _STORES[tree] = (stores, reflective, frozenset(in_classes))
    return known
