"""The exponential-backtracking (ReDoS) analysis of regular expressions: the shapes it reports
(each one takes seconds in Python's own ``re`` on a text of 25 characters that almost matches)
and the look-alikes it leaves alone (linear, or merged into one class by ``re``)."""

from __future__ import annotations

import pytest

from fleetledger.analysis.backtracking import exponential

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
    # CVE-2020-8492, urllib.request's AbstractBasicAuthHandler before the fix
    r"(?:.*,)*[ \t]*([^ \t]+)[ \t]+realm=([\"']?)([^\"']*)\2",
]
LINEAR = [
    r"^(\w+\.)*\w+$",
    r"^[a-z]+$",
    r"(\s*,\s*\w+)*$",
    r"^(a|ab)+$",
    r"\d{4}-\d{2}-\d{2}",
    r"^(\w+\s?)*",
    r"(?:[a-z]+,)*[a-z]+$",
    r"^(?:\w++\s?)*$",
    r"^(?>\w+\s?)*$",
    r"<[^>]*>",
    r"(\w+)=(\w+)(&\w+=\w+)*$",
    r"^(a{2})+$",
    r"(\w|\d)+$",
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
