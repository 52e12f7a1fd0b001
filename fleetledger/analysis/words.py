"""Whether a set of words cuts every text in at most one way: the Sardinas-Patterson test
(A. Sardinas and G. Patterson, "A necessary and sufficient condition for the unique
decomposition of coded messages", 1953). A regular expression repeating a choice of such words
(``(?:m|mm|cm)+``) can match a text in many ways when they do not ("mm" is one word or two),
and backtracks over all of them when the match then fails.
"""

from __future__ import annotations

from collections.abc import Callable

MAX_WORDS = 500
"""Larger sets are not tested (they count as decodable)."""


def uniquely_decodable(words: set[str], step: Callable[[], None]) -> bool:
    """Tells whether no text is a concatenation of ``words`` in two ways.

    Args:
        words: The words (non-empty texts).
        step: Called once per round of dangling suffixes and per 10,000 comparisons in it; it
            raises to stop a test that takes too long (the caller's budget).

    Returns:
        True when every concatenation of the words is cut one way only (also for fewer than two
        words, or more than ``MAX_WORDS``); False when some dangling suffix (what is left when
        one word or suffix is a prefix of another) is itself a word.
    """
    if len(words) < 2 or len(words) > MAX_WORDS:
        return True

    def dangling(left: set[str], right: set[str]) -> set[str]:
        return {b[len(a):] for a in left for b in right if a != b and b.startswith(a)}

    current = dangling(words, words)
    seen: set[str] = set()
    while current - seen:
        for _ in range(1 + len(words) * len(current) // 10_000):
            step()  # one step per 10,000 comparisons the next round makes
        if current & words:
            return False
        seen |= current
        current = dangling(words, current) | dangling(current, words)
    return True
