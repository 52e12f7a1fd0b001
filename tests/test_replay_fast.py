"""The replay's fast paths give what the plain ones give: an intent's name read without
decoding its JSON, and a run read by the table's order or through its index."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from fleetledger.ledger import NewRecord, open_storage
from fleetledger.ledger.records import canonical_json
from fleetledger.replay import fold
from fleetledger.replay_rules import intent_name


@settings(max_examples=400, deadline=None)
@given(name=st.text(), extra=st.none() | st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))
def test_intent_name_equals_decoding_the_payload(name: str, extra: dict[str, int] | None) -> None:
    payload = {**(extra or {}), "name": name}
    text = canonical_json(payload)
    assert intent_name(text) == json.loads(text).get("name", "")


def test_intent_name_of_odd_payloads() -> None:
    assert intent_name("{}") == ""
    assert intent_name('{"name":"a\\"b"}') == 'a"b'
    assert intent_name('{"name":"a\\\\"}') == "a\\"
    assert intent_name('{"name":"x","z":1}') == "x"


def _record(run: str, i: int) -> NewRecord:
    return NewRecord(run_id=run, actor="coordinator", kind="decision", why=f"{run}-{i}", payload={"i": i})


def test_a_run_reads_the_same_whether_it_fills_its_span_or_not(tmp_path) -> None:
    with open_storage(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as store:
        # run "a" alone (dense: read by the table's order), then "a" and "b" interleaved with
        # "b" one record in five (sparse: read through the index), then "a" alone again.
        store.append([_record("a", i) for i in range(20)], now_ms=1)
        store.append([_record("b" if i % 5 == 0 else "a", i) for i in range(40)], now_ms=2)
        store.append([_record("a", i) for i in range(10)], now_ms=3)
        every = list(store.read())
        for run in ("a", "b"):
            for after in (0, 5, 25, 40, 69, 70, 1000):
                expected = [r for r in every if r.run_id == run and r.seq > after]
                assert list(store.read(run, after_seq=after)) == expected
            assert fold(store.read(run)).records == sum(1 for r in every if r.run_id == run)
        assert list(store.read("nobody")) == []
