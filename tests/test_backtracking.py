"""The backtracking (ReDoS) analysis of regular expressions: the exponential shapes it reports
(each one takes seconds in Python's own ``re`` on a text of 25 characters that almost matches),
the polynomial ones, and the look-alikes it leaves alone (linear, or merged into one class by
``re``)."""

from __future__ import annotations

import re

import pytest

from fleetledger.analysis.backtracking import exponential, polynomial

EXPONENTIAL = [
    r"^(\w+\s?)*$",
    r"^([a-z0-9]+[-.]?)+@example\.com$",
    r"(a+)+b",
    r"^(a|a)+$",
    r"^(\d+|\w+)*$",
    r"^(\d+\.?\d*)+$",
    r"^(\w+\s*\w+)*$",
    r"(a+a)+$",
    r"^(a{1,3})+$",
    r"^(?:\w[-\w]*)+$",  # a repetition ending the body with what the body starts with
    r"^(\w*\w)+$",
    r"^(\w\w?)+$",  # an optional part at the end that can take what the body starts with
    r"^([a-z](?:[a-z0-9_]*[a-z0-9])?)+$",
    r"^(?:[-\w]|\w-\w)+$",  # an alternative spelled by another's repetitions (the ways grow as Fibonacci's numbers)
    r"^(\d+|\d+\.\d+)*$",  # one alternative, repeated alone, is (E+)*
    r'^("[^"]*"|[^,]+)*,',
    r"^(?:\w+|\s)+$",
    r"^(a(?:[ a]+a)?)*$",  # an option spelled by the class before it: "aaa" is one repetition or three
    r"^(\w(?:[-\w]{2,}\w)?)+$",
    # an RFC 7230 header field as a server wrote it (field-content repeated)
    "^([\\x21-\\x7e\\x80-\\xff]([ \t\\x21-\\x7e\\x80-\\xff]+[\\x21-\\x7e\\x80-\\xff]){,1}){0,}$",
    # CVE-2020-8492, urllib.request's AbstractBasicAuthHandler before the fix
    r"(?:.*,)*[ \t]*([^ \t]+)[ \t]+realm=([\"']?)([^\"']*)\2",
]
LINEAR = [
    r"^(\w+\.)*\w+$",
    r"^[a-z]+$",
    r"(\s*,\s*\w+)*$",
    r"^(a|ab)+$",
    r"^(?:[a-z][0-9]*)+$",
    r"^(ab?)+$",
    r"^([a-z](?:[0-9]*[0-9])?)+$",
    r"^(?:\w|-\w)+$",
    r"^\s*([-\w]+\s*:[^:;]*(;\s*|$))*$",  # bleach's style check: a separator or the end between repetitions
    r"\d{4}-\d{2}-\d{2}",
    r"^(\w+\s?)*",
    r"(?:[a-z]+,)*[a-z]+$",
    r"^(?:\w++\s?)*$",
    r"^(?>\w+\s?)*$",
    r"<[^>]*>",
    r"(\w+)=(\w+)(&\w+=\w+)*$",
    r"^(a{2})+$",
    r"(\w|\d)+$",
    r"^(a(?:b+a)?)*$",  # the option starts with what the class cannot match: one way to read a text
    r"^(a(?:[ b]+a)?)*$",
    # CVE-2020-8492, the fixed pattern
    r"(?:^|,)[ \t]*([^ \t]+)[ \t]+realm=([\"']?)([^\"']*)\2",
    "not a (valid pattern",
]


@pytest.mark.parametrize("pattern", EXPONENTIAL)
def test_a_shape_that_backtracks_exponentially_is_reported(pattern: str) -> None:
    assert exponential(pattern) is not None


@pytest.mark.parametrize("pattern", LINEAR)
def test_a_look_alike_that_cannot_is_not(pattern: str) -> None:
    assert exponential(pattern) is None


def test_fullmatch_can_fail_at_the_end_where_match_cannot() -> None:
    assert exponential(r"(\w+\s?)*") is None
    assert exponential(r"(\w+\s?)*", whole_match=True) is not None


# Each takes time quadratic in the length of a text that almost matches (doubling the text
# multiplies the time by about 4 in Python's own re); "anywhere" is True for search-like calls.
POLYNOMIAL = [
    (r"^(.*?)((?:\.|,|\)|&gt;)*)$", False),  # a repeated choice takes its one-character alternatives (jinja2's urlize)
    (r"\s+$", True),
    (r"^\s+|\s+$", True),
    (r"\s*,\s*", True),
    (r"\d+x", True),
    (r"^(\w+)\s*=\s*(.*)$", False),
    (r"^\s*(.*?)\s*$", False),
    (r"^ *(\d+) +(.+?) +(\w+)$", False),
    (r"\w+\s*\w+x", False),
    (r"^(?:a|\s*)\s*x", False),
    # CVE-2022-40897, setuptools' package_index before the fix
    (r"""<([^>]*\srel\s*=\s*['"]?([^'">]+)[^>]*)>""", True),
    (r"<[^>]*>", True),  # each "<" of "<<<<..." starts a run to the end
    (r"<script.*?</script>", True),
    (r"(?=.*\d)(?=.*[a-z]).{8,}", True),  # a lookahead runs to the end from each start
    (r"(?:,|)[ \t]*[^ \t]+[ \t]+x", True),  # the empty alternative lets a run start anywhere
    (r"(?i)[a-z]+[A-Z]+$", False),  # under re.I both classes hold every letter
    (r"(?<!x)\s+$", True),  # a space is no "x": every start in a run of spaces
    (r"({%.*?%}|{{.*?}}|{#.*?#})", True),  # Django's template lexer on "{%{%{%..."
    (r"^(?:(.*)@)?([^/?#]*)$", False),  # an optional part read on: "@@@@...@/" splits at each "@"
    (r"^(.*):(?:\d+|[^/]*)$", False),  # a choice after the run: one of its alternatives takes ":" too
    (r"^([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#(.*))?$", False),  # "." stops at a newline: "a...a#\nx" fails
]
NOT_POLYNOMIAL = [
    (r"^(?:a|bc)*$", False),  # one repetition: each text read one way
    (r"\s+$", False),  # match: one start only, and one run
    (r"^\s+$", True),  # anchored at the start: one start only
    (r"\s+", True),  # nothing after the run can fail
    (r"^[0-9]+$", True),
    (r"^\s*=\s*x", False),  # the required "=" parts the runs
    (r"^[a-z]+@[a-z]+\.com$", False),
    (r"^\d+ +\w+$", False),
    (r"^\s*+\s*x", False),  # possessive
    (r"^(?>\s*)\s*x", False),  # atomic
    (r"^\s{0,10}\s*x", False),  # a short bounded repetition
    (r"^(a+)+$", False),  # exponential: reported by exponential() alone
    ("not a (valid pattern", True),
    (r"[a-z]+[A-Z]+$", False),  # without re.I the classes share nothing
    (r"\b\w+\b", True),  # a word's run starts at its first letter only; \b holds where it stops
    (r"\b\w+@x", True),
    (r"\d+(?!\d)", True),  # holds where a run of digits stops
    (r"[^,]+(?=,|$)", True),
    (r"a\d+x", True),  # "a" cannot be part of the run: one start per run
    (r"(?<=\S)\s+(?=\S)", True),  # a start must follow a non-space: one per run of spaces
    (r"^(?:(\w+)@)?(\w*)$", False),  # "@" is no word character: one way to split
    (r"^(.*)@(?:\d+|[a-z]+)$", False),  # no alternative takes "@"
    # every way to start is the text's start or a "," the run cannot take (mechanize 0.4.6's
    # WWW-Authenticate pattern): a choice is read whole, not skipped as if it could match nothing
    (r"(?:^|,)[ \t]*([^ \t,]+)[ \t]+realm=([\"']?)([^\"']*)\2", True),
    # a URL's parts under re.S: whatever stops the path, the query or the fragment takes to the end
    (r"(?s)^([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#(.*))?$", False),
]


@pytest.mark.parametrize(("pattern", "anywhere"), POLYNOMIAL)
def test_a_shape_whose_matching_time_is_polynomial_is_reported(pattern: str, anywhere: bool) -> None:
    assert polynomial(pattern, anywhere=anywhere) is not None


@pytest.mark.parametrize(("pattern", "anywhere"), NOT_POLYNOMIAL)
def test_a_look_alike_whose_matching_time_is_linear_is_not(pattern: str, anywhere: bool) -> None:
    assert polynomial(pattern, anywhere=anywhere) is None


def test_a_pattern_is_read_with_its_flags() -> None:
    spaced = r"^x +  +y"  # two runs of spaces; with re.VERBOSE, spaces are layout: x++y
    assert polynomial(spaced) is not None
    assert polynomial(spaced, flags=re.VERBOSE) is None


def test_fullmatch_can_fail_at_the_end_for_polynomial_shapes_too() -> None:
    assert polynomial(r"\w+\s*\w+") is None
    assert polynomial(r"\w+\s*\w+", whole_match=True) is not None


def test_under_multiline_a_start_anchor_holds_after_each_newline() -> None:
    assert polynomial(r"^\s*\w+\s*=", anywhere=True) is None
    assert polynomial(r"^\s*\w+\s*=", anywhere=True, flags=re.MULTILINE) is not None


def test_alternatives_in_sequence_are_read_a_bounded_number_of_times() -> None:
    # Each alternative is read with what follows it: 40 two-way alternatives in a row would be
    # 2^40 readings (before the bound, this call did not return). The pattern is left
    # unanalysed instead, as one too long is.
    assert polynomial("(?:ab|cd)" * 40 + "x", anywhere=True) is None
    assert polynomial("(?:ab|cd)" * 3 + r"\s*\s*x") is not None  # a few are read to the end


def test_words_that_cut_a_text_two_ways_are_found_within_the_callers_budget() -> None:
    """Sardinas-Patterson: "mm" is one word or two; a prefix code cuts every text one way.
    The caller's step budget stops a test that grows (a hostile repository's word list)."""
    from fleetledger.analysis import words

    assert words.uniquely_decodable({"m", "mm", "cm"}, lambda: None) is False
    assert words.uniquely_decodable({"0", "10", "110"}, lambda: None) is True
    calls: list[int] = []

    def budget() -> None:
        calls.append(1)
        if len(calls) > 2:
            raise TimeoutError

    many = {"0" + "1" * n for n in range(200)}  # a code whose test takes rounds of 200 x 200 comparisons
    with pytest.raises(TimeoutError):
        words.uniquely_decodable(many, budget)
    assert len(calls) == 3
