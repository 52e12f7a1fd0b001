"""Method calls on a parameter whose type only the caller knows: sinks checked where the
summary is applied.

Inside ``def note(logger, message): logger.info(message)`` the engine does not know what
``logger`` is: ``info`` is a sink of ``logging.Logger`` (log injection), but a method named
``info`` on an object of unknown type is no sink (the models match only a few of DB-API's
own names on any receiver: ``execute``). The caller knows: ``note(logging.getLogger(), text)``.
So a summary being computed keeps such calls (``Summary.deferred``): the receiver and the
arguments as parameter labels, the method's name, the call's site. Where the summary is
applied, the receiver is read from what the call passed (``substitution.substitute``); when it
is of a library type whose model makes that method a sink, the sink is checked there, at the
callee's site, with the caller's arguments; when it is still a parameter of the caller, the
call is deferred again, to the caller's callers. It is the deferred-receiver part of
summary-based taint analysis (a summary's effects that depend on a parameter's dynamic
type: Pysa resolves them with the call graph's type information; here the caller's value
carries the type).

What is kept is bounded: only calls of a method name some library type's sink model names,
on a parameter or one member of one (``logger``, ``self.logger``), where what such a sink reads
carries a label; at most ``MAX_DEFERRED`` per summary (the first in the function's order),
passed on through at most ``MAX_HOPS`` callers. A function of many calls on its parameters
costs little more than their names' lookup.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from .catalog_index import indexed
from .facts import Deferred, Site
from .model_records import UNTYPED, Sink
from .values import EMPTY, Value

if TYPE_CHECKING:  # pragma: no cover - typing only
    from .catalog import Catalog
    from .interp import Frame

MAX_DEFERRED = 16
"""Deferred calls a summary keeps (the rest are dropped: their sinks go unchecked)."""
MAX_HOPS = 1
"""Callers a deferred call is passed on to while its receiver is still a parameter's (a
session passed through two helpers to the one that calls ``get``): each hop substitutes its
arguments again at every call, so chains of calls that only pass a parameter on (Django's
``as_sql(compiler, ...)`` into ``compiler.compile(...)``) stop costing after one."""


def sink_methods(catalog: Catalog) -> dict[str, tuple[bool, frozenset[int], frozenset[str]]]:
    """The method names some library type's sink model names (``info`` of ``logging.Logger``),
    but no model on a receiver of unknown type (``*.execute`` is checked where it is called),
    each with what some such sink reads: the receiver, argument positions (-1: every
    argument), keywords. Indexed once for the catalog in use (``catalog_index``)."""
    return indexed(catalog, _sink_methods)


def _sink_methods(catalog: Catalog) -> dict[str, tuple[bool, frozenset[int], frozenset[str]]]:
    def sinks(target: str) -> list[Sink]:
        return [s for s in catalog.sinks.get(target, ()) if s.is_method and not s.when_called]

    reads: dict[str, tuple[bool, frozenset[int], frozenset[str]]] = {}
    for target in catalog.sinks:
        name = target.rpartition(".")[2]
        if target.startswith(UNTYPED + ".") or sinks(f"{UNTYPED}.{name}"):
            continue
        for sink in sinks(target):
            receiver, positions, keywords = reads.get(name, (False, frozenset(), frozenset()))
            reads[name] = (receiver or sink.receiver, positions | frozenset(sink.args), keywords | frozenset(sink.keywords))
    return reads


def _unlabelled(value: Value) -> Value:
    return EMPTY if value.tainted() else value


def _from_parameter(value: Value, depth: int) -> bool:
    """True when ``value`` is a parameter, or a member of one read at most ``depth`` deep
    (``logger``, ``self.logger``), and nothing else: what a caller's value types."""
    labels = value.labels.values()
    return bool(labels) and all(label.channel == "param" and len(label.access) <= depth for label in labels)


def defer(frame: Frame, receiver: Value, method: str, args: list[Value], kwargs: dict[str, Value],
          star: list[Value], node: ast.Call, site: Site, hops: int = 0) -> None:
    """Keeps a call whose receiver may be typed by a caller, when ``frame`` computes a summary:
    the receiver comes from a parameter and has no type the engine knows, ``method`` is a sink
    of some library type, and something reaches the call (the receiver or an argument carries
    a label). Otherwise does nothing."""
    if not frame.summarising or len(frame.deferred) >= MAX_DEFERRED or receiver.types:
        return
    reads = sink_methods(frame.catalog).get(method)
    if reads is None or not _from_parameter(receiver, 1):
        return
    reads_receiver, positions, keywords = reads
    read = [*(args if -1 in positions else (args[p] for p in positions if p < len(args))),
            *(v for k, v in kwargs.items() if k in keywords), *star, *([receiver] if reads_receiver else [])]
    if not any(v.tainted() for v in read):
        return  # nothing a sink of that name reads carries a label (``text.split(",")``)
    frame.deferred.append(Deferred(receiver=receiver, method=method, args=tuple(args), kwargs=tuple(kwargs.items()),
                                   star=tuple(star), node=node, site=site, hops=hops))


def apply(frame: Frame, deferred: tuple[Deferred, ...], passed: Callable[[Value], Value]) -> None:
    """Checks a callee's deferred calls at a call of it in ``frame``: each receiver read from
    what the call passed; a library type's sinks of that method checked at the callee's site;
    a receiver still of a parameter (of the caller's, computing its summary) deferred again.

    Args:
        frame: The caller's frame.
        deferred: The callee's ``Summary.deferred``.
        passed: A value of the callee with its parameter labels replaced by what this call
            passed (``substitution.substitute`` for this call).
    """
    for kept in deferred:
        receiver = passed(kept.receiver)
        sinks = [sink for key in frame.method_keys(receiver, kept.method) for sink in frame.catalog.sinks.get(key, ())
                 if not sink.when_called] if receiver.types else []
        again = not receiver.types and frame.summarising and kept.hops < MAX_HOPS and _from_parameter(receiver, 0)
        if not sinks and not again:
            continue
        # Only what a sink of that name reads is read from the call (an argument no such
        # sink reads keeps only what it holds without a label: a constant, for ``when``).
        _, positions, keywords = sink_methods(frame.catalog)[kept.method]
        args = [passed(v) if -1 in positions or i in positions else _unlabelled(v) for i, v in enumerate(kept.args)]
        kwargs = {k: passed(v) if k in keywords else _unlabelled(v) for k, v in kept.kwargs}
        star = [passed(v) for v in kept.star]
        if again:  # still a parameter's, of the caller's
            defer(frame, receiver, kept.method, args, kwargs, star, kept.node, kept.site, kept.hops + 1)
        for sink in sinks:
            frame.check_sink(sink, receiver, args, kwargs, star, kept.node, kept.site)
