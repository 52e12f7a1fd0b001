"""What a validating regular expression lets through.

A value checked with ``re.fullmatch(r"[A-Za-z0-9_-]+", name)`` can only contain the characters
of that class. ``alphabet`` computes that character set for the simple patterns validation code
uses (literals, classes, ``\\d``/``\\w``, quantifiers, groups, alternation) and gives up (None) on
anything that can match an arbitrary character (``.``, negated classes, ``\\S``...), so a caller
never mistakes a loose pattern for a tight one.
"""

from __future__ import annotations

import ast
import string
from typing import TYPE_CHECKING

from .model_records import RECEIVER_PATTERN, Guard
from .regex_parse import MAX_PATTERN, p as re_parser
from .values import EMPTY

if TYPE_CHECKING:
    from .interp import Frame

_DIGITS = frozenset(string.digits)
# \w also matches non-ASCII letters; none of them is a metacharacter of a shell, SQL or Python.
_WORD = frozenset(string.ascii_letters + string.digits + "_")
_SPACE = frozenset(" \t\n\r\f\v")
_CLASS_ESCAPES = {"d": _DIGITS, "w": _WORD, "s": _SPACE}
_ANCHOR_ESCAPES = frozenset("AZbB")
_LOOSE_ESCAPES = frozenset("DWS")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}


SAFE_CHARACTERS = frozenset(string.ascii_letters + string.digits + "_-")
"""Characters no sink kind gives a meaning to (a shell, SQL, a path, a URL, markup)."""

HOST_KINDS = frozenset({"ssrf", "redirect"})
"""Sink kinds a value may reach as a URL's host, which letters or digits alone can still name
(``"http://" + name``, ``"http://%d/"``: a number is an address)."""


def alphabet_kinds(chars: frozenset[str], safe: frozenset[str], every: frozenset[str]) -> frozenset[str]:
    """The sink kinds a text made only of ``chars`` is safe for: ``safe`` (the check's own) for
    letters, digits, ``_`` and ``-``; every kind but paths and URLs when ``.`` may occur too
    (``..`` climbs a folder); none for any other character (a quote, a slash, ``;``).

    Args:
        chars: The characters the text may hold (empty: nothing is known).
        safe: The kinds to give a text of ``SAFE_CHARACTERS`` alone.
        every: All the kinds the models define.
    """
    if not chars:
        return frozenset()
    if chars <= SAFE_CHARACTERS:
        return safe
    if chars <= SAFE_CHARACTERS | {"."}:
        return every - {"path", "redirect", "ssrf"}
    return frozenset()


def alphabet(pattern: str) -> frozenset[str] | None:
    """Returns the set of characters a match of ``pattern`` can contain.

    Args:
        pattern: A regular expression source, as passed to ``re``.

    Returns:
        The characters, or None when the pattern can match characters this simple reading
        cannot bound (a ``.``, a negated class, ``\\S``, a lookaround, a backreference...).
    """
    chars: set[str] = set()
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            escaped = _escape(pattern, i)
            if escaped is None:
                return None
            chars |= escaped[0]
            i = escaped[1]
        elif c == "[":
            parsed = _char_class(pattern, i)
            if parsed is None:
                return None
            chars |= parsed[0]
            i = parsed[1]
        elif c == ".":
            return None
        elif c == "(":
            if pattern.startswith("(?:", i):
                i += 3
            elif pattern.startswith("(?P<", i):
                end = pattern.find(">", i)
                if end < 0:
                    return None
                i = end + 1
            elif pattern.startswith("(?", i):
                return None
            else:
                i += 1
        elif c == "{":
            end = pattern.find("}", i)
            if end < 0 or not all(ch.isdigit() or ch == "," for ch in pattern[i + 1 : end]):
                chars.add("{")
                i += 1
            else:
                i = end + 1
        elif c in "^$)|*+?":
            i += 1
        else:
            chars.add(c)
            i += 1
    return frozenset(chars)


def negated_class(pattern: str) -> frozenset[str] | None:
    """Returns the characters a pattern that is one negated class (``[^\\w.-]``, maybe repeated:
    ``+``, ``*``, ``{1,}``) does not match: what ``re.sub(pattern, "", text)`` leaves; None for
    any other pattern, or a class this reading cannot bound (as ``alphabet``)."""
    if not pattern.startswith("[^"):
        return None
    parsed = _char_class("[" + pattern[2:], 0)  # the class's members, read as a plain class
    if parsed is None:
        return None
    members, end = parsed
    rest = pattern[end + 1:]  # (the plain class is one character shorter)
    quantified = rest in ("", "+", "*", "+?", "*?") or rest.startswith("{") and rest.endswith("}") and all(
        ch.isdigit() or ch == "," for ch in rest[1:-1])
    return members if quantified else None


def deleted_class(pattern: str) -> frozenset[str] | None:
    """Returns the characters ``re.sub(pattern, repl, text)`` deletes wherever they are: for a
    pattern that starts with one plain class (``[\\r\\n]``, maybe repeated greedily: ``+``, ``*``)
    and goes on with what may match no text (``.*``, ``\\s*``), every member of the class. A match
    then starts at each of them the scan reaches, and the others lie inside a match (Python's
    ``re`` semantics); None for any other pattern, or a remainder ``re``'s parser cannot read."""
    if not pattern.startswith("[") or pattern.startswith("[^") or len(pattern) > MAX_PATTERN:
        return None
    parsed = _char_class(pattern, 0)
    if parsed is None:
        return None
    members, end = parsed
    rest = pattern[end:]
    rest = rest[1:] if rest[:1] in ("+", "*") and rest[1:2] != "?" else rest
    try:
        empty = re_parser.parse(rest).getwidth()[0] == 0
    except Exception:  # (re.error, RecursionError, OverflowError: a pattern Python would refuse)
        return None
    return members if empty else None


def anchored(pattern: str, method: str) -> bool:
    """Tells whether a match with ``method`` must cover the whole string.

    Args:
        pattern: The regular expression source.
        method: ``"fullmatch"``, ``"match"`` or ``"search"``.

    Returns:
        True for ``fullmatch``; for ``match``, when the pattern ends in ``$`` or ``\\Z``; for
        ``search``, when it also starts with ``^`` or ``\\A``. A top-level ``|`` outside a group
        defeats the anchors, so such patterns count as unanchored.
    """
    if method == "fullmatch":
        return True
    if _top_level_alternation(pattern):
        return False
    ends = pattern.endswith("\\Z") or (pattern.endswith("$") and not pattern.endswith("\\$"))
    if method == "match":
        return ends
    return ends and (pattern.startswith("^") or pattern.startswith("\\A"))


def _escape(pattern: str, i: int) -> tuple[frozenset[str], int] | None:
    if i + 1 >= len(pattern):
        return None
    e = pattern[i + 1]
    if e in _CLASS_ESCAPES:
        return _CLASS_ESCAPES[e], i + 2
    if e in _ANCHOR_ESCAPES:
        return frozenset(), i + 2
    if e in _LOOSE_ESCAPES or e.isdigit() or e in "xuUN":
        return None
    return frozenset(_SIMPLE_ESCAPES.get(e, e)), i + 2


def _char_class(pattern: str, start: int) -> tuple[frozenset[str], int] | None:
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        return None
    chars: set[str] = set()
    first = True
    while i < len(pattern):
        c = pattern[i]
        if c == "]" and not first:
            return frozenset(chars), i + 1
        first = False
        if c == "\\":
            escaped = _escape(pattern, i)
            if escaped is None:
                return None
            members, i = escaped
            chars |= members
            continue
        if i + 2 < len(pattern) and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            low, high = c, pattern[i + 2]
            if high == "\\" or ord(high) < ord(low) or ord(high) - ord(low) > 256:
                return None
            chars.update(chr(code) for code in range(ord(low), ord(high) + 1))
            i += 3
            continue
        chars.add(c)
        i += 1
    return None


def _top_level_alternation(pattern: str) -> bool:
    depth = 0
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            return True
        i += 1
    return False


_CHANGES_ANCHORS = 8 | 64
"""``re.MULTILINE`` and ``re.VERBOSE`` (the same bits in the third-party ``regex`` module)."""


def checked_kinds(frame: Frame, call: ast.Call, guard: Guard) -> frozenset[str]:
    """The kinds an anchored pattern's alphabet makes a matched value safe for: every kind for
    letters, digits, ``_`` and ``-``; every kind but paths and URLs when ``.`` may also occur
    (``..`` climbs a folder); none otherwise, nor when its flags may hold ``re.MULTILINE``
    (``$`` then ends the first line, not the text) or ``re.VERBOSE`` (which changes what the
    pattern's text means). The pattern of a compiled pattern's method is the receiver's."""
    if guard.pattern == RECEIVER_PATTERN:
        assert isinstance(call.func, ast.Attribute)
        compiled = frame.expr(call.func.value).items or {}
        pattern, flags = compiled.get(".pattern", EMPTY), compiled.get(".flags")
    elif guard.pattern >= len(call.args):
        return frozenset()
    else:  # re.fullmatch(pattern, string, flags=0)
        pattern = frame.expr(call.args[guard.pattern])
        flag_expr = call.args[guard.pattern + 2] if len(call.args) > guard.pattern + 2 else next(
            (k.value for k in call.keywords if k.arg == "flags"), None)
        flags = frame.expr(flag_expr) if flag_expr is not None else None
    if not pattern.is_const or not isinstance(pattern.const, str):
        return frozenset()
    if flags is not None and not (flags.is_const and isinstance(flags.const, int) and not flags.const & _CHANGES_ANCHORS):
        return frozenset()
    method = guard.target.rpartition(".")[2]
    if not anchored(pattern.const, method if method in ("fullmatch", "match", "search") else "search"):
        return frozenset()
    chars = alphabet(pattern.const)
    if chars is None:
        return frozenset()
    return alphabet_kinds(chars, guard.kinds, frozenset(frame.catalog.kinds))
