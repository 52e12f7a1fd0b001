"""A wall-clock budget for one unit of work in a worker (a file's detection, a candidate's
judgement).

``within_time_budget`` arms ``SIGALRM`` for the work and raises ``TimeBudgetExceeded`` in it when
the time is up; it applies only in the main thread of a POSIX process (elsewhere the work runs
without a limit). A timer already running (e.g. pytest-timeout's) is suspended meanwhile and
re-armed after, so it fires late by at most the time spent here.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")


class TimeBudgetExceeded(BaseException):
    """Raised by SIGALRM inside the work. A BaseException so that a library's ``except
    Exception`` (bandit's per-check handler) cannot swallow it."""


def within_time_budget(timeout_s: float, work: Callable[[], _T]) -> _T:
    """Runs ``work`` with at most ``timeout_s`` seconds of wall-clock time.

    Args:
        timeout_s: The budget in seconds.
        work: The work.

    Returns:
        What ``work`` returns.

    Raises:
        TimeBudgetExceeded: the budget ran out (only in the main thread of a POSIX process).
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return work()

    def expire(signum: int, frame: object) -> None:
        raise TimeBudgetExceeded

    started_s = time.monotonic()
    previous_handler = signal.signal(signal.SIGALRM, expire)
    previous_delay_s, previous_interval_s = 0.0, 0.0
    try:
        previous_delay_s, previous_interval_s = signal.setitimer(signal.ITIMER_REAL, timeout_s)
        try:
            return work()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous_handler is None else previous_handler)
        if previous_delay_s:
            remaining_s = previous_delay_s - (time.monotonic() - started_s)
            signal.setitimer(signal.ITIMER_REAL, max(remaining_s, 1e-6), previous_interval_s)
