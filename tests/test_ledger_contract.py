"""The ledger storage contract: every backend must pass these tests unchanged."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetledger import errors
from fleetledger.ledger import Appended, Duplicate, NewRecord, Refused, Storage, open_storage
from fleetledger.ledger.records import GENESIS_HASH, expected_hash
from fleetledger.verify import verify_records

RUN = "run-1"


def rec(kind: str, **fields) -> NewRecord:
    return NewRecord(run_id=fields.pop("run_id", RUN), actor=fields.pop("actor", "coordinator"), kind=kind, **fields)


def appended(outcomes) -> list:
    return [o.record for o in outcomes if isinstance(o, Appended)]


def test_append_numbers_chains_and_reads_back(storage: Storage) -> None:
    out = storage.append([rec("run.started", key=RUN, payload={"job": {}}),
                          rec("decision", why="because", payload={"n": 1})], now_ms=1_000)
    records = appended(out)
    assert [r.seq for r in records] == [1, 2]
    assert records[0].prev_hash == GENESIS_HASH
    assert records[1].prev_hash == records[0].hash
    assert all(expected_hash(r) == r.hash for r in records)
    back = list(storage.read(RUN))
    assert back == records
    assert back[1].payload == {"n": 1} and back[1].why == "because" and back[1].ts_ms == 1_000


def test_chains_are_per_run_and_seq_is_global(storage: Storage) -> None:
    storage.append([rec("decision", run_id="a"), rec("decision", run_id="b"), rec("decision", run_id="a")], now_ms=1)
    a = list(storage.read("a"))
    b = list(storage.read("b"))
    assert [r.seq for r in a] == [1, 3] and [r.seq for r in b] == [2]
    assert a[1].prev_hash == a[0].hash and b[0].prev_hash == GENESIS_HASH
    assert [r[0] for r in storage.runs()] == ["a", "b"]
    assert list(r.seq for r in storage.read(after_seq=1)) == [2, 3]


def test_equal_result_is_a_noop_and_different_result_is_refused(storage: Storage) -> None:
    first = storage.append([rec("step.done", key="k", payload={"v": 1})], now_ms=1)
    again = storage.append([rec("step.done", key="k", payload={"v": 1})], now_ms=2)
    other = storage.append([rec("step.done", key="k", payload={"v": 2})], now_ms=3)
    assert isinstance(first[0], Appended)
    assert again == [Duplicate(seq=1)]
    assert isinstance(other[0], Refused) and isinstance(other[0].error, errors.ConflictingResultError)
    assert len(list(storage.read(RUN))) == 1


def test_duplicates_inside_one_batch(storage: Storage) -> None:
    out = storage.append([rec("step.done", key="k", payload={"v": 1}), rec("step.done", key="k", payload={"v": 1}),
                          rec("step.done", key="k", payload={"v": 9})], now_ms=1)
    assert isinstance(out[0], Appended) and out[1] == Duplicate(seq=1) and isinstance(out[2], Refused)


def test_non_unique_kinds_may_repeat(storage: Storage) -> None:
    out = storage.append([rec("step.intent", key="k"), rec("step.intent", key="k")], now_ms=1)
    assert all(isinstance(o, Appended) for o in out)


def _lease_setup(storage: Storage) -> None:
    storage.append([rec("task.planned", key="t", task="t", payload={"sprint": "s"}),
                    rec("task.assigned", task="t", epoch=1, payload={"worker": "w1", "expires_ms": 9})], now_ms=1)


def test_stale_epoch_is_refused(storage: Storage) -> None:
    _lease_setup(storage)
    storage.append([rec("lease.expired", task="t", epoch=1),
                    rec("task.assigned", task="t", epoch=2, payload={"worker": "w2", "expires_ms": 9})], now_ms=2)
    late = storage.append([rec("step.done", actor="w1", key="k", task="t", epoch=1, payload={}),
                           rec("task.finished", actor="w1", key="t", task="t", epoch=1)], now_ms=3)
    assert all(isinstance(o, Refused) and isinstance(o.error, errors.StaleEpochError) for o in late)
    current = storage.append([rec("task.finished", actor="w2", key="t", task="t", epoch=2)], now_ms=4)
    assert isinstance(current[0], Appended)
    after_finish = storage.append([rec("step.done", actor="w2", key="k2", task="t", epoch=2, payload={})], now_ms=5)
    assert isinstance(after_finish[0], Refused), "a lease ends when its task finishes"


def test_assigning_a_held_task_is_refused(storage: Storage) -> None:
    _lease_setup(storage)
    out = storage.append([rec("task.assigned", task="t", epoch=2, payload={"worker": "w2", "expires_ms": 9})], now_ms=2)
    assert isinstance(out[0], Refused) and isinstance(out[0].error, errors.LeaseHeldError)
    skip = storage.append([rec("lease.expired", task="t", epoch=1),
                           rec("task.assigned", task="t", epoch=5, payload={"worker": "w2", "expires_ms": 9})], now_ms=3)
    assert isinstance(skip[0], Appended) and isinstance(skip[1], Refused), "epochs grow by exactly one"


def test_a_finished_task_is_assigned_again_only_after_it_is_reopened(storage: Storage, ledger_url: str) -> None:
    """Regression: a coordinator that decided from a view older than the finish (another host's
    worker finished the task meanwhile) leased the finished task at the next epoch; its lease
    then expired and the task was handed to a worker again, whose result conflicted with the
    stored one and halted the run (tests/test_hosts.py, four hosts)."""
    _lease_setup(storage)
    storage.append([rec("task.finished", actor="w1", key="t", task="t", epoch=1, payload={"r": 1})], now_ms=2)
    again = rec("task.assigned", task="t", epoch=2, payload={"worker": "coordinator", "expires_ms": 9})
    with open_storage(ledger_url) as cold:  # a writer that has cached nothing answers from the stored records
        for writer in (storage, cold):
            (out,) = writer.append([again], now_ms=3)
            assert isinstance(out, Refused) and isinstance(out.error, errors.StaleEpochError)
            assert "finished at epoch 1" in str(out.error)
    storage.append([rec("task.reopened", task="t", why="the policy now allows a step it denied")], now_ms=4)
    with open_storage(ledger_url) as cold:
        (stale,) = cold.append([rec("task.assigned", task="t", epoch=1, payload={"worker": "w2", "expires_ms": 9})],
                               now_ms=5)
        assert isinstance(stale, Refused), "a reopened task keeps its epochs: the next is 2"
        (out,) = cold.append([again], now_ms=5)
        assert isinstance(out, Appended)
    report = verify_records(list(storage.read(RUN)))
    assert report.ok, report.problems


def test_only_one_completion_is_accepted(storage: Storage) -> None:
    _lease_setup(storage)
    a = storage.append([rec("task.finished", actor="w1", key="t", task="t", epoch=1, payload={"r": 1})], now_ms=2)
    b = storage.append([rec("task.finished", actor="w1", key="t", task="t", epoch=1, payload={"r": 1})], now_ms=3)
    assert isinstance(a[0], Appended) and isinstance(b[0], Refused)


def test_unknown_kind_and_missing_key_are_rejected_at_construction() -> None:
    with pytest.raises(ValueError, match="unknown record kind"):
        rec("step.dun")
    with pytest.raises(ValueError, match="idempotency key"):
        rec("step.done")


def test_refused_record_does_not_stop_the_batch(storage: Storage) -> None:
    _lease_setup(storage)
    out = storage.append([rec("step.done", actor="w9", key="x", task="t", epoch=7, payload={}),
                          rec("decision", why="still recorded")], now_ms=2)
    assert isinstance(out[0], Refused) and isinstance(out[1], Appended)


def test_verify_passes_on_a_clean_ledger(storage: Storage) -> None:
    _lease_setup(storage)
    storage.append([rec("step.intent", actor="w1", key="k", task="t", epoch=1),
                    rec("step.done", actor="w1", key="k", task="t", epoch=1, payload={"v": 1}),
                    rec("task.finished", actor="w1", key="t", task="t", epoch=1)], now_ms=2)
    report = verify_records(storage.read())
    assert report.ok, report.problems
    assert report.records == 5


def test_verify_finds_a_result_without_intent(storage: Storage) -> None:
    storage.append([rec("step.done", key="k", payload={})], now_ms=1)
    report = verify_records(storage.read())
    assert any("no step.intent" in p for p in report.problems)


@settings(max_examples=25, deadline=None)
@given(payloads=st.lists(st.dictionaries(st.text(max_size=8), st.one_of(
    st.integers(-2**53, 2**53), st.text(max_size=20), st.booleans(), st.none(),
    st.lists(st.integers(0, 9), max_size=3))), min_size=1, max_size=6))
def test_payloads_round_trip_and_chain(tmp_path_factory: pytest.TempPathFactory, payloads: list[dict]) -> None:
    from fleetledger.ledger import open_storage

    path = tmp_path_factory.mktemp("prop") / "l.sqlite3"
    with open_storage(f"sqlite:///{path}") as store:
        store.append([rec("decision", payload=p) for p in payloads], now_ms=5)
        back = list(store.read(RUN))
        assert [r.payload for r in back] == payloads
        assert verify_records(store.read()).ok


def test_nul_and_non_utf8_names_are_stored_escaped(storage: Storage) -> None:
    """Regression: PostgreSQL text cannot hold NUL, and a file name that is not UTF-8 reaches
    keys and reasons as lone surrogates; both are stored as escapes, the payload keeps them."""
    name = "caf\udce9\x00.py"
    key = f"t/detect:{name}@1"
    out = storage.append([rec("step.intent", key=key, why=f"detect {name}", payload={"name": f"detect:{name}"}),
                          rec("step.done", key=key, payload={"name": f"detect:{name}"})], now_ms=1)
    intent, done = appended(out)
    assert done.key == "t/detect:caf\\xe9\\x00.py@1" and intent.why == "detect caf\\xe9\\x00.py"
    back = list(storage.read(RUN))
    assert back[1].payload == {"name": f"detect:{name}"} and verify_records(storage.read()).ok


def test_kind_records_are_every_runs_records_of_a_kind_newest_first_filtered_by_text(storage: Storage) -> None:
    storage.append([rec("step.done", run_id="a", key="k1", payload={"salt": "s1"}),
                    rec("step.done", run_id="b", key="k1", payload={"salt": "s2"}),
                    rec("decision", run_id="a", payload={"salt": "s1"}),
                    rec("step.done", run_id="a", key="k2", payload={"salt": "s1", "name": "caf\u00e9"})], now_ms=1)
    assert [r.seq for r in storage.kind_records("step.done")] == [4, 2, 1]
    assert [r.seq for r in storage.kind_records("step.done", containing='"salt":"s1"')] == [4, 1]
    assert [r.seq for r in storage.kind_records("step.done", containing="caf\\u00e9")] == [4]
    assert list(storage.kind_records("policy.denied")) == []


def test_a_payload_given_as_its_canonical_text_is_stored_and_hashed_as_the_payload(storage: Storage) -> None:
    """A caller that has a payload's canonical JSON (a copy of a stored result) hands it over
    instead of having it encoded again: the stored record is the one the payload would give."""
    from fleetledger.ledger.records import canonical_json

    payload = {"name": "detect:a.py", "result": {"b": [1, "\u00e9"], "a": None}}
    given_text = storage.append([rec("decision", payload=payload, payload_json=canonical_json(payload))], now_ms=1)
    encoded = storage.append([rec("decision", payload=payload)], now_ms=1)
    (a,), (b,) = appended(given_text), appended(encoded)
    assert a.payload_json == b.payload_json and a.payload == payload and expected_hash(a) == a.hash
    assert verify_records(storage.read()).ok
