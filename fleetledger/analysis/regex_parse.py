"""Reading a regular expression's parse (``re._parser``, the parser ``re`` compiles with): the
characters an element matches, compared on a fixed sample alphabet (ASCII and a few characters
beyond, exact for the classes that matter to ``backtracking``), the characters a match can
begin with, whether an element may match nothing or can fail.
"""

from __future__ import annotations

import contextvars
from typing import Any

try:  # Python 3.11+
    from re import _constants as c, _parser as p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older interpreters are not supported by the product
    import sre_constants as c  # type: ignore[no-redef]
    import sre_parse as p  # type: ignore[no-redef]  # noqa: F401 (read by backtracking)

MAX_PATTERN = 2000
"""Longer patterns are not read (a parse costs time in their length, and no attack shape or
deleting idiom needs one that long)."""

ALPHABET = frozenset(range(128)) | frozenset(map(ord, "\u00a0\u00e9\u00df\u0431\u4e2d\u2028\u0660"))
WORD = frozenset(code for code in ALPHABET if chr(code).isalnum() or chr(code) == "_")

FLAGS: contextvars.ContextVar[int] = contextvars.ContextVar("flags", default=0)
"""The flags of the pattern being analysed (its own inline ones included): ``re.I`` folds the
case of its classes, ``re.M`` makes ``^`` match after each newline."""


def repeats(element: Any) -> bool:
    """A backtracking repetition that can take a varying number of a non-empty item."""
    op, av = element
    if op not in (c.MAX_REPEAT, c.MIN_REPEAT):
        return False
    low, high, body = av
    return high > 1 and high > low and not all(nullable(e) for e in body)


def item_chars(element: Any) -> frozenset[int] | None:
    """The characters a repetition's item is made of, when it is one character class."""
    op, av = element
    if op not in (c.MAX_REPEAT, c.MIN_REPEAT):
        return None
    body = flat(list(av[2]))
    if len(body) == 1:
        return chars(body[0])
    return first(body[0]) if body else None


def chars(element: Any) -> frozenset[int] | None:
    """The characters one single-character element matches (None for other elements), both
    cases of a letter under ``re.I``."""
    chars = plain_chars(element)
    if chars is None or not FLAGS.get() & c.SRE_FLAG_IGNORECASE:
        return chars
    return chars | frozenset(ord(chr(code).swapcase()[0]) for code in chars if chr(code).isalpha()
                             and len(chr(code).swapcase()) == 1 and ord(chr(code).swapcase()) in ALPHABET)


def plain_chars(element: Any) -> frozenset[int] | None:
    """The characters one single-character element matches, as written."""
    op, av = element
    if op == c.LITERAL:
        return frozenset({av})
    if op == c.NOT_LITERAL:
        return ALPHABET - {av}
    if op == c.ANY:  # a newline too under re.S (re._parser reads "." as ANY either way)
        return ALPHABET if FLAGS.get() & c.SRE_FLAG_DOTALL else ALPHABET - {10}
    if op == c.IN:
        chars: set[int] = set()
        negate = False
        for kind, value in av:
            if kind == c.NEGATE:
                negate = True
            elif kind == c.LITERAL:
                chars.add(value)
            elif kind == c.RANGE:
                chars.update(c for c in ALPHABET if value[0] <= c <= value[1])
            elif kind == c.CATEGORY:
                chars.update(category(value))
        return ALPHABET - chars if negate else frozenset(chars)
    return None


def category(category: Any) -> frozenset[int]:
    name = str(category)
    tests = {"DIGIT": str.isdecimal, "SPACE": str.isspace, "WORD": lambda s: s.isalnum() or s == "_",
             "LINEBREAK": lambda s: s in "\n\r\u2028"}
    for key, test in tests.items():
        if name.endswith(key):
            matched = frozenset(c for c in ALPHABET if test(chr(c)))
            return ALPHABET - matched if "_NOT_" in name else matched
    return ALPHABET


def first(element_or_seq: Any) -> frozenset[int]:
    """The characters a match of an element (or a sequence) can start with."""
    if isinstance(element_or_seq, list):
        out: set[int] = set()
        for element in element_or_seq:
            out |= first(element)
            if not nullable(element):
                break
        return frozenset(out)
    op, av = element_or_seq
    single = chars(element_or_seq)
    if single is not None:
        return single
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
        return first(list(av[2]))
    if op == c.SUBPATTERN:
        return first(list(av[-1]))
    if op == getattr(c, "ATOMIC_GROUP", None):
        return first(list(av))
    if op == c.BRANCH:
        return frozenset().union(*(first(list(a)) for a in av[1]))
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return frozenset()
    return ALPHABET  # a back-reference, a conditional: anything


def nullable(element: Any) -> bool:
    """True when an element can match the empty text."""
    op, av = element
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return True
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
        return av[0] == 0 or all(nullable(e) for e in av[2])
    if op == c.SUBPATTERN:
        return all(nullable(e) for e in av[-1])
    if op == getattr(c, "ATOMIC_GROUP", None):
        return all(nullable(e) for e in av)
    if op == c.BRANCH:
        return any(all(nullable(e) for e in a) for a in av[1])
    if op in (c.GROUPREF, getattr(c, "GROUPREF_EXISTS", None)):
        return True
    return False


def can_fail(element: Any) -> bool:
    """True when an element can fail to match where it is tried (it needs some text, or it is
    an anchor or a lookaround other than the start's)."""
    op, av = element
    if op == c.AT:
        return av not in (c.AT_BEGINNING, c.AT_BEGINNING_STRING)
    if op in (c.ASSERT, c.ASSERT_NOT):
        return True
    return not nullable(element)


def flat(seq: list[Any]) -> list[Any]:
    """The sequence with plain groups opened: ``(?:a(b+))c`` is ``a b+ c``."""
    out: list[Any] = []
    for op, av in seq:
        if op == c.SUBPATTERN:
            out.extend(flat(list(av[-1])))
        else:
            out.append((op, av))
    return out
