"""Regular expressions whose matching can take exponential or polynomial time (catastrophic
backtracking, CWE-1333 "inefficient regular expression complexity", the ReDoS of many CVEs).

Python's ``re`` is a backtracking matcher: when a repeated part can match the same text in
more than one way, a failing match tries every way, 2^n of them for n characters. The classic
shapes (Kirrage, Rathnayake and Thielecke, "Static analysis for regular expression denial-of-
service attacks", NSS 2013; OWASP's ReDoS page) are an unbounded repetition whose body is
itself ambiguous:

* the body is, but for parts that may match nothing, one repetition of something that is not
  empty: ``(a+)+``, ``(\\w+\\s?)*``, ``([a-z0-9]+[-.]?)+``;
* two repetitions in the body, next to each other but for parts that may match nothing, can
  take the same characters: ``(\\w+\\s*\\w+)*``, ``(a+a)+``;
* two alternatives of the body can match the same text: each one character class (or a
  repetition of one) sharing a character, ``(\\d+|\\w+)*``, or both empty, ``(a|a)+``
  (``re`` merges ``(\\w|\\d)`` into one class, which is not ambiguous);
* one alternative of the body, repeated alone, is ambiguous (``(\\d+|\\d+\\.\\d+)*``: the
  repetition may take ``\\d+`` every time, which is ``(\\d+)*``);
* the body is one character class and an optional part that can match what repetitions of
  that class match (``(a(?:[ a]+a)?)*``);
* the body is a choice of literal words that can cut a text two ways (``(?:m|mm|cm)+``, what
  ``"|".join(words)`` builds: ``words``, Sardinas-Patterson), or a part followed by an optional
  repeat of itself (``(a|aa)+``, which ``re`` parses ``a(?:|a)``);

and something after it can fail (an anchor, a required part, ``fullmatch``), so the matcher
backtracks into it (``exponential``).

Matching takes time polynomial in the text's length (``polynomial``: quadratic or worse, the
"super-linear" regular expressions of Davis et al., "The impact of regular expression denial of
service (ReDoS) in practice", FSE 2018, and CodeQL's ``py/polynomial-redos``) when a text can be
split between two unbounded repetitions in linearly many ways and something after them can fail:

* two repetitions of one character class each, sharing a character, with nothing between them
  but parts that may match nothing or that match that character too: ``\\s*(.*?)\\s*$``,
  ``\\d+ +.+? +x``, ``[^>]*[^>]*>``;
* where the match may start anywhere (``search``, ``findall``, ``sub``...: the matcher tries
  every start), a repetition of one character class that the match can begin with: ``\\s+$``
  tries each of n spaces as a start, and from each backtracks over the rest of them.
 Possessive repetitions and atomic groups never backtrack. The analysis
reads the pattern with the running Python's own parser (``re._parser``, the parser ``re``
compiles with) and compares character classes on a fixed sample alphabet (ASCII and a few
characters beyond), which is exact for the classes that matter here.
"""

from __future__ import annotations

import contextvars
from typing import Any

from . import words
from .regex_parse import ALPHABET as _ALPHABET, FLAGS as _FLAGS, WORD as _WORD, c as _c, p as _p
from .regex_parse import can_fail as _can_fail, chars as _chars, first as _first, flat as _flat
from .regex_parse import MAX_PATTERN as _MAX_PATTERN, item_chars as _item_chars, nullable as _nullable, repeats as _repeats
from .regex_runs import fails_after_run, run_item



def exponential(pattern: str | bytes, whole_match: bool = False, flags: int = 0) -> str | None:
    """Tells whether matching ``pattern`` can backtrack exponentially.

    Args:
        pattern: The regular expression, as passed to ``re``.
        whole_match: True for ``fullmatch`` (the end of the text must be reached, so the
            match can fail after any part).
        flags: The ``re`` flags it is compiled with (``re.VERBOSE`` changes how it reads).

    Returns:
        The part of the pattern at fault, as the pattern writes it (``"(\\w+\\s?)*"``), or
        None when no shape above is found (or the pattern is not valid, too long, or not a
        text).
    """
    parsed = _parsed(pattern, flags)
    if parsed is None:
        return None
    token, steps = _FLAGS.set(parsed[1]), _STEPS.set([MAX_STEPS])
    try:
        found = _find(parsed[0], whole_match)
    except _TooComplex:
        return None  # too many words to cut a text into: not analysed
    finally:
        _FLAGS.reset(token)
        _STEPS.reset(steps)
    return _shown(pattern, found) if found is not None else None


def polynomial(pattern: str | bytes, *, flags: int = 0, anywhere: bool = False,
               whole_match: bool = False) -> str | None:
    """Tells whether matching ``pattern`` can take time quadratic (or worse) in the text's
    length, but not exponential (``exponential`` reports those).

    Args:
        pattern: The regular expression, as passed to ``re``.
        flags: The ``re`` flags it is compiled with.
        anywhere: True when the matcher tries every start in the text (``search``,
            ``findall``, ``finditer``, ``sub``, ``subn``, ``split``); False for ``match`` and
            ``fullmatch``, which start at the text's start.
        whole_match: True for ``fullmatch``.

    Returns:
        The pattern (cut to 80 characters) when one of the module doc's polynomial shapes is
        found, else None (also for a pattern that is not valid, too long, or not a text).
    """
    parsed = _parsed(pattern, flags)
    if parsed is None or _find(parsed[0], whole_match) is not None:
        return None
    seq, read_flags = parsed
    text = pattern.decode("latin-1") if isinstance(pattern, bytes) else pattern
    token, steps = _FLAGS.set(read_flags), _STEPS.set([MAX_STEPS])
    try:
        if _pair(seq, whole_match) or (anywhere and _leading(seq, whole_match)):
            return _shown(text, None)
    except _TooComplex:
        return None  # alternatives in sequence multiply the ways to read it: not analysed
    finally:
        _FLAGS.reset(token)
        _STEPS.reset(steps)
    return None


MAX_STEPS = 2_000
"""Sequences ``polynomial`` reads, at most, per pattern: each alternative is read with what
follows it, so ``(?:ab|cd)(?:ab|cd)...`` would take 2^n readings (a hostile repository's
pattern must not stall the scan)."""

_STEPS: contextvars.ContextVar[list[int]] = contextvars.ContextVar("steps", default=[MAX_STEPS])


class _TooComplex(Exception):
    """The pattern needs more than ``MAX_STEPS`` readings."""


def _step() -> None:
    remaining = _STEPS.get()
    remaining[0] -= 1
    if remaining[0] < 0:
        raise _TooComplex




def _parsed(pattern: str | bytes, flags: int) -> tuple[list[Any], int] | None:
    """The pattern's parse (``re._parser``) and its flags, or None when it cannot be read or is
    too long."""
    if isinstance(pattern, bytes):
        pattern = pattern.decode("latin-1")
    if not isinstance(pattern, str) or len(pattern) > _MAX_PATTERN or not isinstance(flags, int):
        return None
    try:
        parsed = _p.parse(pattern, flags)
    except Exception:
        return None
    return list(parsed.data), parsed.state.flags


def _pair(seq: list[Any], fails_after: bool) -> bool:
    """True when two repetitions of ``seq`` (or of a part nested in it) can share a run of
    one character between them, and something after the second can fail."""
    _step()
    seq = _flat(seq)
    for index, (op, av) in enumerate(seq):
        rest = seq[index + 1:]
        after = fails_after or any(_can_fail(element) for element in rest)
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and (_pair(list(av[2]), after or av[1] > 1) or (
                av[1] == 1 and _pair(list(av[2]) + rest, fails_after))):  # an optional part, read on
            return True
        if op == _c.BRANCH and any(_pair(list(alternative) + rest, fails_after) for alternative in av[1]):
            return True
        run = run_item(seq[index])
        if run is not None and _shared(run, rest, fails_after):
            return True
    return False


def _shared(run: frozenset[int], rest: list[Any], fails_after: bool) -> bool:
    """True when a later repetition in ``rest`` can take characters of ``run`` (what is left of
    it after the parts between them), and something after it can fail; a choice and an optional
    part between them are read each way (``(?:(.*)@)?([^/]*)$``, ``(.*):(?:\\d+|[^/]*)$``)."""
    _step()
    for later, element in enumerate(rest):
        item = run_item(element)
        if item is not None and run & item and fails_after_run(item, rest[later + 1:], fails_after):
            return True
        op, av = element
        if op == _c.BRANCH and any(_shared(run, _flat(list(alternative)) + rest[later + 1:], fails_after)
                                   for alternative in av[1]):
            return True
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and item is None and av[1] == 1 and _shared(
                run, _flat(list(av[2])) + rest[later + 1:], fails_after):
            return True
        if op == _c.AT and av not in (_c.AT_BOUNDARY, _c.AT_NON_BOUNDARY):
            continue
        if _nullable(element) and op not in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            continue
        chars = _chars(element) if item is None else item
        run = run & chars if chars else frozenset()
        if not run:
            break
    return False


def _leading(seq: list[Any], fails_after: bool) -> bool:
    """True when a match that may start anywhere can begin (after single characters that the
    run can take too, as ``<`` in ``<[^>]*>``) with a repetition of one character class, and
    something after it can fail: each start in a run of that character backtracks over the rest
    of the run. A lookahead there is tried at each start too (``(?=.*\\d)``)."""
    _step()
    seq = _flat(seq)
    prefix: list[frozenset[int]] = []
    outside: list[frozenset[int]] = []  # a start in the run must follow a character not all in these
    for index, element in enumerate(seq):
        op, av = element
        if op == _c.AT:
            if av == _c.AT_BEGINNING and _FLAGS.get() & _c.SRE_FLAG_MULTILINE:
                prefix.append(frozenset({10}))  # a start after each newline
            elif av in (_c.AT_BEGINNING, _c.AT_BEGINNING_STRING):
                return False
            elif av == _c.AT_BOUNDARY and index + 1 < len(seq) and (run_item(seq[index + 1]) or _ALPHABET) <= _WORD:
                return False  # a word's run starts at its first character only
            continue
        run = run_item(element)
        if run is not None:
            return (all(chars & run for chars in prefix) and all(run - chars for chars in outside)
                    and fails_after_run(run, seq[index + 1:], fails_after))
        if op in (_c.ASSERT, _c.ASSERT_NOT):
            if av[0] == 1 and _leading(list(av[1]), False):
                return True
            behind = list(av[1]) if av[0] == -1 else []
            chars = _chars(behind[0]) if len(behind) == 1 else None
            if chars is not None:  # (?<=\\S): a start inside a run must follow one of these
                (prefix if op == _c.ASSERT else outside).append(chars)
            continue
        if op == _c.BRANCH:  # ^\s+|\s+$; each way through the branch is read with what follows it
            return any(_leading(list(alternative) + seq[index + 1:], fails_after) for alternative in av[1])
        chars = _chars(element)
        if chars is not None:
            prefix.append(chars)
            continue
        if not _nullable(element):
            return False
    return False


def _find(seq: list[Any], fails_after: bool) -> Any | None:
    """The first repetition in ``seq`` (or nested in it) that is ambiguous and may be made to
    backtrack: something after it, in this sequence or after it (``fails_after``), can fail."""
    for index, (op, av) in enumerate(seq):
        after = fails_after or any(_can_fail(element) for element in seq[index + 1:])
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            low, high, body = av
            body = list(body)
            if high > 1 and after and (high == _c.MAXREPEAT or high >= 16) and _ambiguous(_flat(body)):
                return (op, av)
            inner = _find(body, after or high > 1)
            if inner is not None:
                return inner
        elif op == _c.SUBPATTERN:
            inner = _find(list(av[-1]), after)
            if inner is not None:
                return inner
        elif op == _c.BRANCH:
            for alternative in av[1]:
                inner = _find(list(alternative), after)
                if inner is not None:
                    return inner
    return None


def _ambiguous(body: list[Any]) -> bool:
    """True when a repetition of ``body`` can split one text in more than one way."""
    for index, element in enumerate(body):
        if element[0] == _c.BRANCH and _overlapping_alternatives(element[1][1]):
            return True  # (\w|\d)+
        if element[0] == _c.BRANCH and _optional_repeat(body[:index], element[1][1]):
            return True  # (a|aa)+, parsed a(?:|a): "aa" is one repetition or two
        if element[0] == _c.BRANCH and all(_nullable(e) for e in body[:index] + body[index + 1:]) and any(
                _ambiguous(_flat(list(alternative))) for alternative in element[1][1]):
            return True  # (\d+|\d+\.\d+)*: repeating the first alternative alone is (E+)*
        if element[0] == _c.BRANCH and len(body) == 1 and not _uniquely_decodable(element[1][1]):
            return True  # (?:m|mm|cm)+: "mm" is one word or two
        if element[0] == _c.BRANCH and len(body) == 1 and _spelled(element[1][1]):
            return True  # ([-\w]|\w-\w)*: "a-b" is one repetition or three
        if _spelled_option(element, body[:index] + body[index + 1:]):
            return True  # (a(?:[ a]+a)?)*: "aaa" is one repetition or three
        optional = _optional_class(element)
        if optional and body[:index] and all(_empty_anywhere(e) for e in body[index + 1:]) and optional & _first(body):
            return True  # (\w\w?)+: "aa" is one repetition or two
        if not _repeats(element):
            continue
        if all(_nullable(e) for e in body[:index] + body[index + 1:]):
            return True  # (E+)+
        item = _first(_flat(list(element[1][2])))
        if item and _wraps(body, index, frozenset(item)):
            return True  # (\w[-\w]*)+: "ab" is one repetition or two
        for later in body[index + 1:] if item else ():
            if item & _first(later) and (not _nullable(later) or _repeats(later)):
                return True  # (a+ a)+, (\w+ \s* \w+)+
            if not _nullable(later):
                break
    return False


def _wraps(body: list[Any], index: int, item: frozenset[int]) -> bool:
    """A repetition at the end of the body (nothing after it but parts that may match nothing)
    whose characters the body can start with, or one at its start whose characters the body
    can end with: repeated, a text of those characters ends one repetition or starts the next
    (``(\\w[-\\w]*)+``, ``(\\w*\\w)+``)."""
    rest, before = body[index + 1:], body[:index]
    if all(_empty_anywhere(e) for e in rest) and before and item & _first(body):
        return True
    if all(_empty_anywhere(e) for e in before) and rest:
        last: set[int] = set()
        for element in reversed(_flat(rest)):  # the characters the body can end with
            chars = _item_chars(element) if element[0] in (_c.MAX_REPEAT, _c.MIN_REPEAT) else _chars(element)
            if chars is None:
                return False
            last |= chars
            if not _empty_anywhere(element):
                break
        return bool(item & last)
    return False


def _spelled_option(element: Any, others: list[Any]) -> bool:
    """An optional part (``(?:[ a]+a)?``) of a body whose one other required part is one
    character class (``a``), when the option can match a text that repetitions of that class
    match too (``_spelled_by``): repeated, such a text after the class is one repetition with
    the option, or one per character without it (RFC 7230's ``field-content`` as written in
    ``(VCHAR([ \t VCHAR]+VCHAR)?)*``)."""
    op, av = element
    if op not in (_c.MAX_REPEAT, _c.MIN_REPEAT) or av[0] != 0 or av[1] != 1:
        return False
    needed = [e for e in others if not _nullable(e)]
    single = _chars(needed[0]) if len(needed) == 1 else None
    return single is not None and _spelled_by(_flat(list(av[2])), single)


def _optional_class(element: Any) -> frozenset[int] | None:
    """The characters an optional part (``\\w?``, ``(?:[a-z0-9_]*[a-z0-9])?``) can match as
    a text of one character, else None."""
    op, av = element
    if op not in (_c.MAX_REPEAT, _c.MIN_REPEAT) or av[0] != 0 or av[1] != 1:
        return None
    body = _flat(list(av[2]))
    found: set[int] = set()
    for index, part in enumerate(body):
        if not all(_empty_anywhere(other) for other in body[:index] + body[index + 1:]):
            continue
        chars = _chars(part)
        if chars is None and part[0] in (_c.MAX_REPEAT, _c.MIN_REPEAT) and part[1][0] <= 1:
            chars = _item_chars(part)
        found |= chars or set()
    return frozenset(found) or None


def _empty_anywhere(element: Any) -> bool:
    """True when an element can match nothing in the middle of a text: a repetition that may
    take none, not an anchor or a lookaround (``(;|$)`` after ``[^;]*`` is a separator or the
    end, never nothing between two repetitions)."""
    op, av = element
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
        return av[0] == 0
    if op == _c.SUBPATTERN:
        return all(_empty_anywhere(e) for e in av[-1])
    if op == _c.BRANCH:
        return any(all(_empty_anywhere(e) for e in alternative) for alternative in av[1])
    return False


def _optional_repeat(head: list[Any], alternatives: list[Any]) -> bool:
    """``head`` followed by a choice that may be empty or match what ``head`` matches again
    (``a(?:|a)``, how ``re`` parses ``a|aa``): repeated, ``head head`` is one repetition or
    two. Each element of ``head`` and of the alternative must be one character class."""
    if not head or not any(all(_nullable(e) for e in alternative) for alternative in alternatives):
        return False
    heads = [_chars(e) for e in head]
    if any(chars is None for chars in heads):
        return False
    for alternative in alternatives:
        flat = _flat(list(alternative))
        if len(flat) == len(heads) and all(
                (chars := _chars(e)) is not None and chars & known for e, known in zip(flat, heads)):
            return True
    return False


def _uniquely_decodable(alternatives: list[Any]) -> bool:
    """False when the alternatives are literal words that can cut a text two ways
    (``words.uniquely_decodable``); True when they can not, or are not all literal words
    (other checks read those)."""
    found: set[str] = set()
    for alternative in alternatives:
        flat = _flat(list(alternative))
        if not flat or any(op != _c.LITERAL for op, _ in flat):
            return True
        found.add("".join(chr(av) for _, av in flat))
    return words.uniquely_decodable(found, _step)


def _overlapping_alternatives(alternatives: list[Any]) -> bool:
    """Two alternatives that can match the same text: both empty (``(a|a)`` is parsed as
    ``a(?:|)``), or each one character class or a repetition of one, sharing a character."""
    if sum(all(_nullable(e) for e in alternative) for alternative in alternatives) >= 2:
        return True
    sets = []
    for alternative in alternatives:
        flat = _flat(list(alternative))
        if len(flat) != 1:
            continue
        element = flat[0]
        chars = _chars(element) if element[0] not in (_c.MAX_REPEAT, _c.MIN_REPEAT) else _item_chars(element)
        if chars:
            sets.append(chars)
    return any(a & b for i, a in enumerate(sets) for b in sets[i + 1:])


def _spelled(alternatives: list[Any]) -> bool:
    """True when, of the alternatives of a repeated choice, one can match a text that
    repetitions of another, one character class, match too (``_spelled_by``)."""
    singles = [chars for alternative in alternatives if len(flat := _flat(list(alternative))) == 1
               and (chars := _chars(flat[0])) is not None]
    return any(_spelled_by(_flat(list(alternative)), single) for alternative in alternatives for single in singles)


def _spelled_by(sequence: list[Any], single: frozenset[int]) -> bool:
    """True when a sequence of two or more character classes (or repetitions of one; parts
    that may match nothing aside) can match a text that repetitions of the one-character
    alternative ``single`` match too: ``\\w-\\w`` beside ``[-\\w]`` in ``([-\\w]|\\w-\\w)*``."""
    needed = [e for e in sequence if not _nullable(e)]
    if len(needed) < 2 and not (needed and _repeats(needed[0])):
        return False
    for element in needed:
        chars = _item_chars(element) if element[0] in (_c.MAX_REPEAT, _c.MIN_REPEAT) else _chars(element)
        if not chars or not chars & single:
            return False
    return True


def _shown(pattern: str | bytes, found: Any) -> str:
    """A short text naming the repetition at fault (the pattern itself, cut)."""
    if isinstance(pattern, bytes):
        pattern = pattern.decode("latin-1")
    return pattern if len(pattern) <= 80 else pattern[:77] + "..."


"""The word characters (``\\w``) of the sample alphabet."""
