"""Values written as their ``repr``: ``repr(x)``, ``ascii(x)``, ``f"{x!r}"``, ``"%r" % x`` and a
logging call's ``%r`` field (``log.info("path %r", path)``) hold no line break.

Python's ``repr`` of a text (``str``, ``bytes``, and the built-in containers of them) writes every
carriage return, line feed and other non-printable character as an escape (``'a\\r\\nb'``), and
``ascii`` also every character beyond ASCII; so what a value holds can start no new log line
(CWE-117, flask-cors's fix of its request-path log injection) and no new header line (CWE-113).
It is still the value's data for every other kind: ``repr`` quotes, it does not escape markup
or SQL. Python's ``%`` format conversions (``printf``-style formatting, the library reference's
"printf-style String Formatting") read their values in order, ``%r`` and ``%a`` by ``repr`` and
``ascii``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from .patterns import HOST_KINDS
from .purity import CONST_TYPE_NAMES
from .sequences import leading_items
from .texts import conversions
from .values import Value, clean, join

REPR_KINDS = frozenset({"log", "header"})
"""The kinds a value's ``repr`` cannot carry: no line break is left in it."""

_BY = "written as its repr (no line break is left)"
_REPR_CONVERSIONS = frozenset({"r", "a"})
_REPR_CODES = frozenset({ord("r"), ord("a")})
_INTEGER_CONVERSIONS = frozenset("diouxX")
_INTEGER_SPECS = frozenset("bdoxXn")
_AS_NUMBER = "written by a % integer field (a number)"


def as_repr(value: Value) -> Value:
    """``value`` written by ``repr`` or ``ascii``: clean for ``REPR_KINDS``, unless it may be an
    object of a class (the analysed code's or a library's), whose ``__repr__`` may write its
    data as it is (``f"Upload({self.filename})"``, a Django model's ``<Tag: name>``)."""
    if any(not t.startswith(("=", "bound:")) and t not in CONST_TYPE_NAMES for t in value.types):
        return value
    return clean(value, REPR_KINDS, _BY)


def converted(value: Value, conversion: int, spec: ast.expr | None = None, kinds: Iterable[str] = ()) -> Value:
    """An f-string field's value: its repr for ``f"{x!r}"`` (``conversion`` is ``ord("r")``; -1
    for none); a number for an integer presentation type (``f"{x:05d}"``: ``spec``, a constant
    ending in ``b``, ``d``, ``o``, ``x``, ``X`` or ``n``, for which Python raises on anything but a
    number), clean for ``kinds`` but a URL's host (as ``formatted``'s ``%d``)."""
    if conversion in _REPR_CODES:
        return as_repr(value)
    text = spec.values[0].value if isinstance(spec, ast.JoinedStr) and len(spec.values) == 1 and isinstance(
        spec.values[0], ast.Constant) and isinstance(spec.values[0].value, str) else ""
    if conversion == -1 and text[-1:] in _INTEGER_SPECS and kinds:
        return clean(value, frozenset(kinds) - HOST_KINDS, _AS_NUMBER)
    return value


def formatted(template: str, right: Value, number_kinds: frozenset[str] = frozenset()) -> Value:
    """The right operand of ``template % right`` with the values ``%r``/``%a`` fields write as
    their repr, and those integer fields (``%d``, ``%i``, ``%u``, ``%x``, ``%X``, ``%o``) write as
    a number (Python raises ``TypeError`` for anything but a number): clean for
    ``number_kinds`` but ``HOST_KINDS``. One value for a template of one field, else a tuple
    built here whose items match the fields one to one. Otherwise (``%(key)r``, a ``*`` width,
    a tuple of unknown length) ``right`` unchanged."""
    fields = conversions(template)
    if not fields or not (_REPR_CONVERSIONS | _INTEGER_CONVERSIONS).intersection(fields):
        return right

    def written(item: Value, field: str) -> Value:
        if field in _INTEGER_CONVERSIONS:
            return clean(item, number_kinds - HOST_KINDS, _AS_NUMBER) if number_kinds else item
        return as_repr(item) if field in _REPR_CONVERSIONS else item

    if right.items is None:
        return written(right, fields[0]) if len(fields) == 1 else right
    found = leading_items(right)
    if found is None or found[1] is not None or len(found[0]) != len(fields):
        return right
    return join(*(written(item, field) for item, field in zip(found[0], fields)))


def logged(args: list[Value]) -> list[Value]:
    """A call's arguments as a ``logging`` call writes them: a constant ``%`` template first,
    then the values of its fields (``log.info("path %r", path)``), which ``%r``/``%a`` write as
    their repr. The arguments unchanged when the first is no such template or the number of
    values is not the number of fields."""
    if not args or not args[0].is_const or not isinstance(args[0].const, str):
        return args
    fields = conversions(args[0].const)
    if not fields or len(fields) != len(args) - 1 or not _REPR_CONVERSIONS.intersection(fields):
        return args
    return [args[0], *(as_repr(value) if field in _REPR_CONVERSIONS else value
                       for value, field in zip(args[1:], fields))]
