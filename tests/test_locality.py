"""Which pending task an idle worker takes next (``run.locality``): its own next task while it is
pending, else the start of the longest pending run, or its middle when a worker is running into it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fleetledger.run.locality import next_tasks


def test_two_workers_start_at_the_plan_and_at_its_middle_then_each_goes_on_from_its_own() -> None:
    assert next_tasks(["w1", "w2"], range(10), {}) == [0, 5]
    assert next_tasks(["w2"], [2, 3, 4, 6, 7, 8, 9], {"w1": 1, "w2": 5}) == [6]
    assert next_tasks(["w1"], [2, 3, 4, 7, 8, 9], {"w1": 1, "w2": 6}) == [2]


def test_a_worker_whose_range_is_done_takes_half_of_the_longest_one_left() -> None:
    # w2 finished its range (up to 9); w1 is at 1 with 2..8 pending: w2 takes the second half.
    assert next_tasks(["w2"], range(2, 9), {"w1": 1, "w2": 9}) == [5]
    # A run nobody runs into is started at its beginning.
    assert next_tasks(["w2"], [*range(2, 4), *range(6, 12)], {"w1": 1, "w2": 4}) == [6]


def test_a_lone_pending_task_goes_to_the_first_idle_worker() -> None:
    assert next_tasks(["w1", "w2"], [7], {"w1": 3}) == [7]
    assert next_tasks(["w1"], [], {}) == []


@settings(max_examples=200, deadline=None)
@given(pending=st.sets(st.integers(0, 60)), workers=st.integers(1, 6),
       last=st.dictionaries(st.sampled_from(["w0", "w1", "w2", "w3", "w4", "w5"]), st.integers(0, 60)))
def test_every_idle_worker_gets_a_distinct_pending_task_while_any_is_left(pending: set[int], workers: int,
                                                                         last: dict[str, int]) -> None:
    idle = [f"w{i}" for i in range(workers)]
    chosen = next_tasks(idle, sorted(pending), last)
    assert len(chosen) == min(workers, len(pending))
    assert len(set(chosen)) == len(chosen) and set(chosen) <= pending
