"""What a call adds to the objects its caller passed: Python passes objects by reference, so a
helper that appends to a list it was given (``def add(parts, v): parts.append(v)``), stores
into a dict it was given (``params[k] = v``) or grows a list its object holds
(``self.parts.append(v)``) changes the caller's object, and what the caller later builds from
that object carries what the helper added.

In a function being summarised (``summaries``), such a change is recorded among the summary's
``writes`` under the parameter it reached: ``(index, attribute)`` for a container an attribute
of the parameter holds (the attribute's new value, its old one included through the
parameter's label read along that attribute), and ``(index, ADDED)`` for the parameter's own
object (what was added: nothing is replaced; a list known by position holds it in its rest,
a dict built here under a key not known, so the program of an argument vector or another key's
constant stays known).
At a call, ``summaries`` gives each back to the variable the caller passed (``write_back``),
or, in a summary, to the caller's own parameter. The same rules keep the change in a local
object's variable where no summary is involved (``b.parts.append(v)`` in a view).

Only a variable's object and one attribute of it are followed, as ``writes`` are; a change
through a longer path (``self.a.b.append(v)``) or a computed receiver is not.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import checked_paths
from .sequences import leading_items, with_rest
from .values import EMPTY, UNKNOWN_KEYS, Value, join, taint_only, with_items

if TYPE_CHECKING:
    from .interp import Frame

STORING = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft", "extendleft",
                     "write", "writelines"})
"""Methods of Python's containers and files that keep their arguments in their receiver
(``list``, ``dict``, ``set``, ``collections.deque``, ``io``): a call of one of these names on a
receiver the models do not describe changes that receiver. Other methods of an unknown object
(``self.form_class(data)``) are not taken to store what they are given in their caller's
object."""

ADDED = "[]"
"""The attribute under which ``writes`` keeps what a function adds into a parameter's own
object (no Python attribute has this name)."""


def own_parameter(frame: Frame, name: str) -> int | None:
    """The index of the summarised function's parameter that the variable ``name`` still names
    (the parameter itself, never rebound in the function but by ``+=``: after ``parts =
    list(parts)`` the object is a copy), or None."""
    function = frame.function
    if function is None or not frame.summarising or name not in frame.env:
        return None
    names = [param.arg for param in function.params]
    if name not in names or name in function.rebound():
        return None
    return names.index(name)


def added(frame: Frame, target: ast.expr | None, value: Value) -> None:
    """Records that ``value`` was put into the object ``target`` names (an item appended,
    stored under a key, written), where ``target`` is a variable or an attribute of one.

    Args:
        frame: The frame interpreting the change.
        target: The receiver's expression (``parts`` in ``parts.append(v)``, ``self.parts``
            in ``self.parts.append(v)``); any other expression records nothing.
        value: What the object now holds besides what it held (its taint is what counts).
    """
    checked_paths.forget_under(frame, target)  # (what a check proved of its entries may no longer hold)
    if not value.tainted():
        return
    carried = taint_only(value.flatten())
    if isinstance(target, ast.Name):
        index = own_parameter(frame, target.id)
        if index is not None:
            frame.writes[(index, ADDED)] = join(frame.writes.get((index, ADDED), EMPTY), carried)
        return
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
        return
    name = target.value.id
    owner = frame.env.get(name)
    if owner is None:
        return
    grown = join(frame.attribute(owner, target.attr, target), carried)
    frame.env[name] = with_items(owner, {"." + target.attr: grown})
    index = own_parameter(frame, name)
    if index is not None:
        frame.writes[(index, target.attr)] = join(frame.writes.get((index, target.attr), EMPTY), grown)


def write_back(frame: Frame, target: ast.expr, attr: str, stored: Value) -> bool:
    """Gives a callee's write (``summaries``) to the variable the caller passed for that
    parameter, or to an attribute of one (``add(self.parts, v)``).

    Args:
        frame: The caller's frame.
        target: The argument's expression.
        attr: The attribute written, or ``ADDED`` for the object itself.
        stored: The written value, the call's arguments substituted.

    Returns:
        True when ``target`` names something the caller follows and the write was given to it.
    """
    checked_paths.forget_under(frame, target)
    if attr == ADDED:
        if isinstance(target, ast.Name) and target.id in frame.env:
            old = frame.env[target.id]
            frame.rebind(target.id, old, _grown(old, taint_only(stored.flatten())))
            if frame.summarising:
                added(frame, target, stored)
            return True
        if isinstance(target, ast.Attribute):
            added(frame, target, stored)
            return True
        return False
    if isinstance(target, ast.Name) and target.id in frame.env:
        owner = frame.env[target.id]
        frame.env[target.id] = with_items(owner, {"." + attr: stored})
        index = own_parameter(frame, target.id)
        if index is not None:  # the caller's own parameter: its caller's object changes too
            frame.writes[(index, attr)] = join(frame.writes.get((index, attr), EMPTY), stored)
        return True
    return False


def _grown(old: Value, added: Value) -> Value:
    """The caller's object after a callee added ``added`` to it: a list known by position keeps
    its known items and holds the addition in its rest (``["git", "clone", "--"]`` stays git's
    vector); a dict built here keeps its known keys and holds it under a key not known
    (``ctx["cmd"]`` keeps its constant); anything else carries it."""
    leading = leading_items(old)
    if leading is not None:
        known, rest = leading
        return with_rest(known, join(rest, added) if rest is not None else added)
    if old.items is not None and not old.labels and not any(isinstance(key, int) for key in old.items):
        return with_items(old, {UNKNOWN_KEYS: join(old.items.get(UNKNOWN_KEYS, EMPTY), added)})
    return join(old, added)
