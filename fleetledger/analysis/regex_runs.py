"""Runs in a regular expression's parse (``re._parser``): an unbounded repetition of one
character class (``\\s*``, ``[^>]+``, ``.*?``), and whether something after a greedy run can
fail where it stops, so that a matcher backtracks into it. Part of ``backtracking``.
"""

from __future__ import annotations

from typing import Any

from .regex_parse import ALPHABET as _ALPHABET, WORD as _WORD, c as _c
from .regex_parse import can_fail as _can_fail, chars as _chars, flat as _flat, repeats as _repeats


def fails_after_run(run: frozenset[int], rest: list[Any], fails_after: bool) -> bool:
    """True when something after a run can fail, so that the matcher backtracks into it; what
    always holds where a greedy run stops (``\\b`` after word characters, ``(?!\\d)`` after
    digits, ``(?=,|$)`` after ``[^,]+``) does not count, nor do parts that take whatever stops
    the run, to the end (``_always_matches``).

    Args:
        run: The run's characters (code points, on ``regex_parse.ALPHABET``).
        rest: The parsed elements after the run, in order (``re._parser`` items, groups opened).
        fails_after: True when something after ``rest`` (in an enclosing sequence, or
            ``fullmatch``'s end) can fail.

    Returns:
        True when a failure after the run is possible; False when every text matches there."""
    start = 0
    while start < len(rest) and _holds_after(rest[start], run):
        start += 1
    if not fails_after and _always_matches(run, rest[start:]):
        return False
    return fails_after or any(_can_fail(element) for element in rest[start:])


_END = -1  # the end of the text, among the "characters" that may come next


def _always_matches(run: frozenset[int], rest: list[Any]) -> bool:
    """True when ``rest`` matches wherever a greedy run of ``run`` characters stops, so
    nothing after the run can fail: optional parts each starting with one character class
    and ending with a run of another, then an end anchor (a URL's ``[^?#]*(?:\\?[^#]*)?(?:#.*)?$``
    under DOTALL: whatever stops the path, the query or the fragment takes, to the end). The
    characters that may come next are followed through the parts; any other shape is not
    known to always match."""
    following = (_ALPHABET - run) | {_END}
    for op, av in rest:
        if op == _c.AT and av in (_c.AT_END, _c.AT_END_STRING):
            if following != {_END}:
                return False
            continue
        if op not in (_c.MAX_REPEAT, _c.MIN_REPEAT) or av[0] != 0 or av[1] != 1:
            return False
        body = _flat(list(av[2]))
        start = _chars(body[0]) if len(body) == 2 else None
        tail = run_item(body[1]) if len(body) == 2 else None
        if start is None or tail is None:
            return False
        taken = following & start
        following = (following - start) | ((_ALPHABET - tail) | {_END} if taken else frozenset())
    return True


def _holds_after(element: Any, run: frozenset[int]) -> bool:
    """True for a zero-width element that holds wherever a run of ``run`` characters that
    took all it could stops (the next character is none of them, or the text ends)."""
    op, av = element
    if op == _c.AT:
        return av == _c.AT_BOUNDARY and bool(run) and run <= _WORD
    if op not in (_c.ASSERT, _c.ASSERT_NOT) or av[0] != 1:
        return False
    alternatives = [list(a) for a in av[1][0][1][1]] if len(av[1]) == 1 and av[1][0][0] == _c.BRANCH else [list(av[1])]
    if op == _c.ASSERT_NOT:  # (?!B): B is one class, all of it in the run
        chars = _chars(alternatives[0][0]) if len(alternatives) == 1 and len(alternatives[0]) == 1 else None
        return chars is not None and chars <= run
    allowed: set[int] = set()
    end = False
    for alternative in alternatives:  # (?=,|$): the next character is one of them, or the end
        if len(alternative) != 1:
            return False
        if alternative[0][0] == _c.AT and alternative[0][1] in (_c.AT_END, _c.AT_END_STRING):
            end = True
            continue
        chars = _chars(alternative[0])
        if chars is None:
            return False
        allowed |= chars
    return end and _ALPHABET - run <= allowed


def run_item(element: Any) -> frozenset[int] | None:
    """The characters of an unbounded (or long: 16 or more) backtracking repetition of one
    character class (``\\s*``, ``[^>]+``, ``.*?``, and a repeated choice of single characters
    ``(?:\\.|,)*``), as code points; None for any other ``re._parser`` element (a possessive
    or short repetition, a literal, a group)."""
    op, av = element
    if op not in (_c.MAX_REPEAT, _c.MIN_REPEAT) or not _repeats(element):
        return None
    low, high, body = av
    if high != _c.MAXREPEAT and high < 16:
        return None
    body = _flat(list(body))
    if len(body) == 1 and body[0][0] == _c.BRANCH:
        # a repeated choice takes, one at a time, the characters of its one-character
        # alternatives (``(?:\\.|,|&gt;)*`` takes a run of dots and commas)
        singles = [_chars(alternative[0]) for alternative in map(lambda a: _flat(list(a)), body[0][1][1])
                   if len(alternative) == 1]
        found = frozenset().union(*(chars for chars in singles if chars))
        return found or None
    return _chars(body[0]) if len(body) == 1 else None
