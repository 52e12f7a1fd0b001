"""What the taint engine knows of a string's constant parts (``Value.prefix``, ``suffix`` and
``texts``): the text every value starts with, ends with, or holds somewhere, and how joining
values and building strings keeps them. They tell where a URL points (a fixed host) and what a
path names (a ``.py`` file, a file under a ``templates`` folder)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .values import Value

MAX_TEXTS = 8
"""Constant texts kept per string value (``Value.texts``), each at most ``MAX_TEXT_LEN`` long."""
MAX_TEXT_LEN = 120


def common_prefix(a: str | None, b: str | None) -> str | None:
    """The longest text both ``a`` and ``b`` start with, or None (None when either is None)."""
    if a is None or b is None:
        return None
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n] if n else None


def common_suffix(a: str | None, b: str | None) -> str | None:
    """The longest text both ``a`` and ``b`` end with, or None (None when either is None)."""
    if a is None or b is None:
        return None
    n = 0
    for x, y in zip(reversed(a), reversed(b)):
        if x != y:
            break
        n += 1
    return a[len(a) - n:] if n else None


def known_texts(value: Value) -> frozenset[str]:
    """Constant texts every string ``value`` can be holds: its constant, prefix, suffix and
    ``texts`` (bounded by ``MAX_TEXTS`` and ``MAX_TEXT_LEN``)."""
    extra = {t[:MAX_TEXT_LEN] for t in (value.prefix, value.suffix,
                                         value.const if isinstance(value.const, str) else None) if t}
    if not extra:
        return value.texts
    return _bounded_texts(value.texts | extra)


def holds_text(value: Value, text: str) -> bool:
    """True when every string ``value`` can be holds ``text``."""
    return any(text in known for known in known_texts(value))


def texts_of(*parts: Value) -> frozenset[str]:
    """The texts a string made by putting ``parts`` together holds: each part's."""
    return _bounded_texts(frozenset().union(*(known_texts(part) for part in parts)))


def _bounded_texts(texts: frozenset[str]) -> frozenset[str]:
    """At most ``MAX_TEXTS`` of ``texts``: the longest (they say the most), then the first in order."""
    if len(texts) <= MAX_TEXTS:
        return texts
    return frozenset(sorted(texts, key=lambda t: (-len(t), t))[:MAX_TEXTS])


def joined_text(values: list[Value]) -> str | None:
    """The text the values make when all are constant strings, else None."""
    texts = [v.const for v in values if v.is_const and isinstance(v.const, str)]
    return "".join(texts) if len(texts) == len(values) else None


def tail_of(parts: list[Value]) -> str | None:
    """The constant text every string built from ``parts`` in order ends with, or None."""
    tail = ""
    for part in reversed(parts):
        if part.is_const and isinstance(part.const, str):
            tail = part.const + tail
            continue
        return (part.suffix or "") + tail or None
    return tail or None


_CONVERSION = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[diouxXeEfFgGcrsa]")


def format_pieces(template: str) -> list[str]:
    """The literal pieces of a ``%`` format, between its conversions."""
    return [piece.replace("\0\0", "%") for piece in _CONVERSION.split(template.replace("%%", "\0\0")) if piece]


def conversions(template: str) -> list[str] | None:
    """The conversion letters of a ``%`` format's fields, in the order they read their values
    (``"%s=%r"`` is ``["s", "r"]``; ``%%`` is no field); None when a field reads a value by key
    (``%(name)s``) or a width or precision from the values (``%*d``)."""
    found: list[str] = []
    for match in _CONVERSION.finditer(template.replace("%%", "\0\0")):
        text = match.group(0)
        if text.startswith("%(") or "*" in text:
            return None
        found.append(text[-1])
    return found


def brace_pieces(template: str) -> tuple[list[str], bool, bool, int] | None:
    """The literal pieces of a ``str.format`` template (Python's format string syntax, read by
    ``string.Formatter``), whether the result starts and ends with the first and last of
    them, and the number of its replacement fields; None when the template is not valid."""
    import string

    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return None
    pieces = [literal for literal, _, _, _ in parsed if literal]
    starts = bool(parsed) and bool(parsed[0][0])
    ends = bool(parsed) and parsed[-1][1] is None
    return pieces, starts, ends, sum(1 for _, field, _, _ in parsed if field is not None)


def format_tail(template: str) -> str | None:
    """The constant text a ``%`` format's result ends with: what follows its last conversion
    (``%%`` is a literal ``%``), or None when nothing does."""
    ends = [m.end() for m in _CONVERSION.finditer(template.replace("%%", "\0\0"))]
    tail = template[ends[-1]:] if ends else ""
    return tail.replace("%%", "%") or None


def folder_texts(part: Value) -> Value:
    """A part of a path that a later part follows (``os.path.join``'s arguments but the last),
    as the texts the joined path holds: the part's own, with its constant end closed by the
    separator the join puts after it (``"templates"`` -> ``"templates/"``). A later part that
    is absolute would discard it: that path is one an attacker chose, a path traversal the
    path sinks report."""
    end = part.const if part.is_const and isinstance(part.const, str) else part.suffix
    if not end or end.endswith(("/", "\\")):
        return part
    return replace(part, texts=part.texts | {end[-MAX_TEXT_LEN + 1:] + "/"})

