"""Sinks that hold only where what a call returns is itself called: ``getattr(obj, name)`` with
a ``name`` from outside, then called, runs whichever method or class the name selects
(CWE-470, unsafe reflection: celery's ``getattr(module, exc_type)(*args)``, pydash's
``invoke``). Such a sink is declared in the models with ``when_called = true``.

The call that reads the attribute (``getattr``) is not the harm: reading an attribute by a
name is how Python code dispatches, and reading is not running. Its result is marked with a
type, ``"chosen:<call>"``, that the value keeps through variables, containers and summaries
(where its labels are substituted as any value's), and holds the data that chose it, not the
object's; calling a value so marked reports that data at the sink, as it holds it then: a check on it since (``issubclass(cls,
BaseException)``) has cleaned its labels. A name with a constant start (``getattr(self, "do_" +
command)``) can select only among the attributes that start so, the dispatch the code's author
wrote: it is not marked.

A namespace read by a key is ``getattr`` by another name: ``vars(module)[name]``,
``vars(module).get(name)``, ``module.__dict__[name]`` (keras's ``vars(mod).get(name)`` of a
module ``importlib.import_module`` loaded, by names from the archive's config, CVE-2025-1550).
What is read from a member of a module that data chose is chosen too: a method of a class
the data chose (``cls.from_config(...)``) is code the data chose.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from .values import Value, join, of_labels

CHOSEN = "chosen:"
"""The mark of a value outside data chose: ``"chosen:getattr"``."""
OUTSIDE = "chosen-outside:"
"""The mark of a value chosen from a library's module or object (``getattr(hashlib, name)``):
only data from outside counts there, a name the function's callers pass selects among that
library's functions as the function's API means it to."""
_NAMESPACE = ".__dict__"
_NAMESPACE_GET = _NAMESPACE + ".get"


def mark(frame: Any, refs: Iterable[str], args: list[Value], kwargs: dict[str, Value], value: Value) -> Value:
    """Returns ``value`` (what an unmodelled library call such as ``getattr`` returns) marked
    for each of its ``when_called`` sinks whose arguments hold data from outside or from a
    parameter, without a constant start."""
    for qualified in refs:
        if qualified.endswith(_NAMESPACE_GET) and args:  # ``vars(m).get(name)`` is ``getattr(m, name, None)``
            value = namespace_read(frame, Value(types=frozenset({"=" + qualified[:-len(".get")]})), args[0], value)
            continue
        for sink in frame.catalog.sinks.get(qualified, ()):
            if not sink.when_called:
                continue
            chosen = join(*(args[i] for i in sink.args if 0 <= i < len(args)),
                          *(kwargs[k] for k in sink.keywords if k in kwargs))
            if chosen.tainted() and not chosen.prefix:
                fixed = bool(args) and _library_object(frame, args[0])
                # What the call returns is then what the choice made: the object's own data
                # chooses nothing (``getattr(self, attname)`` of a view holding request data,
                # called with a constant ``attname``, is no reflection).
                value = replace(chosen, types=value.types | {(OUTSIDE if fixed else CHOSEN) + qualified})
    return value


def namespace_read(frame: Any, owner: Value, key: Value, value: Value) -> Value:
    """``value`` (what ``owner[key]`` reads) marked as ``getattr(module, key)``'s result would
    be, where ``owner`` is a module's namespace (``vars(m)``, ``m.__dict__``)."""
    if not _namespace(owner):
        return value
    return mark(frame, ["getattr"], [Value(types=frozenset(t for t in owner.types if t.startswith("="))), key], {}, value)


def chosen_member(owner: Value, value: Value) -> Value:
    """``value`` (a member read from ``owner``) with the marks of a choice ``owner`` holds among
    a module's or a library object's members (``OUTSIDE``: a class of a module, whose methods
    are the module's code). A member of an object of the analysed code read by a name derived
    from it (``getattr(obj, field.name).all()``) is not marked again: the object's data is not
    a name an attacker wrote."""
    marks = frozenset(t for t in owner.types if t.startswith(OUTSIDE))
    return replace(value, types=value.types | marks) if marks else value


def check(frame: Any, callee: Value, node: ast.Call) -> None:
    """Reports, at a call of ``callee``, the data of the value called if ``mark`` marked it."""
    for marked in sorted(t for t in callee.types if t.startswith((CHOSEN, OUTSIDE))):
        outside_only = marked.startswith(OUTSIDE)
        target = marked[len(OUTSIDE if outside_only else CHOSEN):]
        labels = [label for label in callee.all_labels() if not (outside_only and label.channel == "param")]
        for sink in frame.catalog.sinks.get(target, ()):
            if sink.when_called and labels:
                frame.sink_value(sink, frame.site(node), of_labels(labels), "the name that chose what is called")


def _namespace(owner: Value) -> bool:
    return any(t.startswith("=") and t.endswith(_NAMESPACE) for t in owner.types)


def _library_object(frame: Any, value: Value) -> bool:
    """True for a value that is a library's module or an object of a library type, and holds
    no data of its own from outside or from a parameter."""
    return bool(value.types) and not value.tainted() and all(
        t.startswith("=") or frame.catalog.is_type(t) for t in value.types)
