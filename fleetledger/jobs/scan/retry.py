"""Which failed model steps a later session tries again, and how often (issue 14).

Within one coordinator session a step is given up after ``steps.MAX_STEP_FAILURES`` failures
(its task is retried meanwhile). A later session (a resume, or the same command run again)
plans the step again in a new *round* when the kind of its last failure may clear, until the
step has failed ``rounds_for(kind) * MAX_STEP_FAILURES`` times in all. The count is of its
``step.failed`` records in the ledger, over every session, so the bound holds across crashes.

The table is data; a kind that is not in it (a worker that died in the step, a bug in step
code) is not tried again by a later session: it failed the same way twice already.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...models.failures import SIZE_CODES
from ...steps import MAX_STEP_FAILURES

ROUNDS: Mapping[str, int] = {
    "TransientModelError": 3,  # server errors, overload, timeouts, dropped connections: these pass
    "RateLimited": 3,  # still limited after every wait of the session
    "RequestRejected": 2,  # a bad request: tried once more (a gateway may reject for a passing reason), never again
    "MalformedAnswer": 1,  # already asked malformed_attempts times per try: deterministic enough
}
"""Sessions (rounds) in which a step whose last failure was of this kind is tried, at most."""


def rounds_for(kind: str | None, code: str | None = None) -> int:
    """Returns the rounds a step whose last failure was ``kind`` (a class name of
    ``models.failures``) with ``code`` may have; 1 means it is not tried again later. A bad
    request that names the prompt's own size (``failures.SIZE_CODES``) will fail again: 1."""
    if kind == "RequestRejected" and code in SIZE_CODES:
        return 1
    return ROUNDS.get(kind or "", 1)


def may_retry(failures: int, kind: str | None, code: str | None = None) -> bool:
    """True when a later session tries a step that failed ``failures`` times in all, the last
    time with ``kind``/``code``, again (idempotent, read-only)."""
    return failures < rounds_for(kind, code) * MAX_STEP_FAILURES
