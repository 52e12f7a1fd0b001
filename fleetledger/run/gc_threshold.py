"""The cyclic garbage collector's threshold while a coordinator runs."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


YOUNG_COLLECTION_THRESHOLD = 10_000
"""Allocations between two collections of the youngest generation while a coordinator runs
(Python's default: 700). A coordinator allocates a few dozen short-lived, acyclic objects per
worker message (decoded JSON, records, outcomes), which reference counting frees; at the
default, the cyclic collector ran every ~30 records and took about 7% of the coordinator's CPU in
``bench/peers``' fan-out, for nothing to collect. Older generations keep their defaults."""


@contextlib.contextmanager
def young_objects_collected_less() -> Iterator[None]:
    """Raises the youngest generation's collection threshold to ``YOUNG_COLLECTION_THRESHOLD``
    (never lowers it) for the block, and restores the caller's thresholds after it (the
    coordinator may run inside a program that set its own)."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], YOUNG_COLLECTION_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)

