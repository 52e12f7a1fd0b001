"""Sinks that hold only where what a call returns is itself called: ``getattr(obj, name)`` with
a ``name`` from outside, then called, runs whichever method or class the name selects
(CWE-470, unsafe reflection: celery's ``getattr(module, exc_type)(*args)``, pydash's
``invoke``). Such a sink is declared in the models with ``when_called = true``.

The call that reads the attribute (``getattr``) is not the harm: reading an attribute by a
name is how Python code dispatches, and reading is not running. Its result is marked with the
value that chose it (``Program.chosen``, under a type ``"chosen:<site>"`` the value keeps
through variables and summaries); calling a value so marked reports that value at the sink.
A name with a constant start (``getattr(self, "do_" + command)``) can select only among the
attributes that start so, the dispatch the code's author wrote: it is not marked.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from .values import Value, join, of_labels

CHOSEN = "chosen:"


def mark(frame: Any, refs: Iterable[str], args: list[Value], kwargs: dict[str, Value], value: Value,
         node: ast.Call) -> Value:
    """Returns ``value`` (what an unmodelled library call such as ``getattr`` returns) marked
    for each of its ``when_called`` sinks that outside data chose: the data at the sink's
    arguments, tainted and without a constant start."""
    for qualified in refs:
        for sink in frame.catalog.sinks.get(qualified, ()):
            if not sink.when_called:
                continue
            chosen = join(*(args[i] for i in sink.args if 0 <= i < len(args)),
                          *(kwargs[k] for k in sink.keywords if k in kwargs))
            if not chosen.tainted() or chosen.prefix:
                continue
            if args and _library_object(frame, args[0]):
                # A library's module or object (``hashlib``, a logger): a name the function's
                # callers pass selects among that library's functions, as the function's API
                # means it to (``getattr(hashlib, algorithm)``); data from outside still
                # selects freely.
                chosen = of_labels([label for label in chosen.all_labels() if label.channel != "param"])
                if not chosen.tainted():
                    continue
            site = frame.site(node)
            key = f"{site.path}:{site.line}:{site.col}:{qualified}"
            frame.program.chosen[key] = (sink, chosen)
            value = replace(value, types=value.types | {CHOSEN + key})
    return value


def check(frame: Any, callee: Value, node: ast.Call) -> None:
    """Reports, at a call of ``callee``, the data that chose what it calls (``mark``)."""
    for key in sorted(t[len(CHOSEN):] for t in callee.types if t.startswith(CHOSEN)):
        found = frame.program.chosen.get(key)
        if found is not None:
            sink, chosen = found
            # The chosen data as the called value holds it now: a check on that value since
            # (``issubclass(cls, BaseException)``) has cleaned its labels.
            wanted = {label.key[:6] for label in chosen.all_labels()}  # the origin, whatever read or cleaned it since
            now = [label for label in callee.all_labels() if label.key[:6] in wanted]
            frame.sink_value(sink, frame.site(node), of_labels(now) if now else chosen,
                             "the name that chose what is called")


def _library_object(frame: Any, value: Value) -> bool:
    """True for a value that is a library's module or an object of a library type, and holds
    no data of its own from outside or from a parameter."""
    return bool(value.types) and not value.tainted() and all(
        t.startswith("=") or frame.catalog.is_type(t) for t in value.types)
