"""Methods of constant texts folded as Python computes them: ``sep.join(parts)`` of constant
parts is a constant (a pattern built by joining constants is analysed as one), and
``template.format(...)`` keeps its template's literal pieces (a template with no field is its
own text: its arguments are never read), ``s.replace(c, new)`` leaves no ``c`` in its
result, and ``s.encode(codec)`` / ``b.decode(codec)`` of a constant with constant arguments is
the constant Python computes (a pattern written as text and compiled as bytes).
"""

from __future__ import annotations

import string
from dataclasses import replace

from .interp_operators import MAX_CONST_LEN
from .sequences import positions
from .texts import MAX_TEXT_LEN, brace_pieces, texts_of
from .values import Value, constant, join, taint_only

def formatted(value: Value, template: str, known: tuple[list[Value], dict[str, Value]] | None = None) -> Value:
    """The result of ``template.format(...)`` with the template's literal pieces as the texts
    it holds (and its start and end, where no field is there).

    Args:
        value: what the call's arguments make of it, whatever the template.
        template: the constant text whose ``format`` is called.
        known: the call's positional and keyword arguments, when it has no ``*`` or ``**``
            part. When they are all constants and every field only places one of them (no
            format spec, no attribute or index read, no conversion but ``!s``/``!r``), the
            result is Python's own (``"{hex}:{hex}".format(hex=HEX)``: a pattern built so is
            analysed as one).
    Returns:
        The value of the call's result.
    """
    found = brace_pieces(template)
    if found is None:
        return value
    pieces, starts, ends, fields = found
    if not fields:  # no field reads an argument: the template's own text
        return constant(template.replace("{{", "{").replace("}}", "}"))
    computed = _computed_format(template, known) if known is not None else None
    if computed is not None:
        return computed
    if not pieces:
        return value
    return replace(value, prefix=pieces[0][:MAX_TEXT_LEN] if starts else None,
                   suffix=pieces[-1][-MAX_TEXT_LEN:] if ends else None, texts=texts_of(*map(constant, pieces)))


def _computed_format(template: str, known: tuple[list[Value], dict[str, Value]]) -> Value | None:
    """``template.format(*args, **kwargs)`` computed by Python when every argument is a
    constant text or number and every field only places one (its length is then bounded by
    the template's and the arguments'); else None."""
    args, kwargs = known
    if not all(v.is_const and isinstance(v.const, (str, int)) for v in (*args, *kwargs.values())):
        return None
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return None
    for _, name, spec, conversion in fields:
        if name is not None and (spec or conversion not in (None, "s", "r") or not (name == "" or name.isdigit() or name.isidentifier())):
            return None
    if len(fields) * max((len(str(v.const)) for v in (*args, *kwargs.values())), default=0) > MAX_CONST_LEN:
        return None  # (a field read many times must not build a huge text)
    try:
        text = template.format(*(v.const for v in args), **{k: v.const for k, v in kwargs.items()})
    except (IndexError, KeyError, ValueError):
        return None
    return constant(text) if len(text) <= MAX_CONST_LEN else None


def constant_method(receiver: Value, method: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """A method of a constant text folded: ``sep.join(parts)`` (``joined_constant``), and
    ``encode``/``decode`` converting a ``str``/``bytes`` constant with constant arguments, as
    Python computes them; None for any other call, or where Python raises (an unknown codec,
    a character the codec cannot write: the scanned code names the codec, so whatever a codec
    raises is caught)."""
    if method == "join" and len(args) == 1 and not kwargs:
        return joined_constant(receiver, args[0])
    kind = {"encode": str, "decode": bytes}.get(method)
    if kind is None or not (receiver.is_const and isinstance(receiver.const, kind)):
        return None
    if not all(v.is_const and isinstance(v.const, str) for v in (*args, *kwargs.values())):
        return None
    try:
        text = getattr(receiver.const, method)(*(v.const for v in args), **{k: v.const for k, v in kwargs.items()})
    except Exception:  # noqa: BLE001 - see the docstring
        return None
    return constant(text) if len(text) <= MAX_CONST_LEN else None


def joined_constant(separator: Value, parts: Value) -> Value | None:
    """``separator.join(parts)`` folded, when the separator is a constant text and ``parts`` a
    list or tuple known item by item: a constant when every item is a constant text (and the
    result short enough to keep), else the items' data with the constant start their leading
    constant items make (``" ".join(["curl", "-s", url])`` starts with ``"curl -s "``); None
    when the parts are not so known."""
    if not (separator.is_const and isinstance(separator.const, str)) or parts.labels:
        return None
    found = positions(parts)
    if found is None:
        return None
    known, rest = found
    leading: list[str] = []
    for part in known:
        if not (part.is_const and isinstance(part.const, str)):
            break
        leading.append(part.const)
    if rest is None and len(leading) == len(known):
        text = separator.const.join(leading)
        return constant(text) if len(text) <= MAX_CONST_LEN else None
    others = [taint_only(part.flatten()) for part in known[len(leading):] + ([rest] if rest is not None else [])]
    start = separator.const.join(leading) + separator.const if leading else ""
    return replace(join(*others), prefix=start[:MAX_TEXT_LEN] or None)
