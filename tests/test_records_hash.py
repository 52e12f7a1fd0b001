"""The hash chain's text is fixed: the fast paths of ``records`` (the header written directly,
the C encoder built once, ``Record`` built from a row) give the bytes the reference encoder gives,
so every ledger written before them still verifies."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from fleetledger.ledger.records import GENESIS_HASH, NewRecord, Record, canonical_json, expected_hash, record_hash, seal

REFERENCE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)

# Computed by the implementation before the fast paths (a JSONEncoder per call, the header
# encoded as a list): these hashes are in ledgers on disk and must never change.
GOLDEN = [
    (dict(prev_hash=GENESIS_HASH, seq=1, run_id="r1", ts_ms=1700000000000, actor="coordinator", kind="run.started",
          key="r1", task=None, epoch=None, why="", payload_json='{"job":{"kind":"scan"}}', policy_hash=""),
     "04c3830d0251e0104ac11bb9d0efae87906b1f9316ca2ac755dadbf6b5e8a02c"),
    (dict(prev_hash="ab" * 32, seq=42, run_id="r1", ts_ms=5, actor="w03", kind="step.done", key="t/é\\x00@0123",
          task="t\u2028", epoch=7, why='said "no"\\ ✓', payload_json='{"a":"\\u00e9"}', policy_hash="ph"),
     "a4c66c684f70c146784c464bfe5efe91104391916b7aeb541ba6d2da554bea28"),
    (dict(prev_hash="cd" * 32, seq=10**15, run_id="r\ud800", ts_ms=0, actor="😀", kind="decision", key=None, task="t",
          epoch=True, why="x", payload_json="[]", policy_hash=""),
     "8393bc6a8553f8bd52c8fbb7de682e197e650b40d7724daae8ebedd805f21921"),
]


def test_golden_hashes_do_not_change() -> None:
    for fields, digest in GOLDEN:
        assert record_hash(**fields) == digest


TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(seq=st.integers(1, 2**62), run_id=TEXT.filter(bool), ts_ms=st.integers(0, 2**50), actor=TEXT, kind=TEXT,
       key=st.none() | TEXT, task=st.none() | TEXT, epoch=st.none() | st.integers(0, 2**40) | st.booleans(), why=TEXT,
       policy_hash=TEXT, payload=JSON)
def test_fast_header_and_payload_text_equal_the_reference_encoder(seq, run_id, ts_ms, actor, kind, key, task, epoch,
                                                                   why, policy_hash, payload) -> None:
    header = REFERENCE.encode([seq, run_id, ts_ms, actor, kind, key, task, epoch, why, policy_hash])
    text = REFERENCE.encode(payload)
    assert canonical_json(payload) == text
    import hashlib
    reference = hashlib.sha256(GENESIS_HASH.encode() + b"\n" + header.encode("utf-8", "surrogatepass") + b"\n"
                               + text.encode("utf-8")).hexdigest()
    assert record_hash(prev_hash=GENESIS_HASH, seq=seq, run_id=run_id, ts_ms=ts_ms, actor=actor, kind=kind, key=key,
                       task=task, epoch=epoch, why=why, payload_json=text, policy_hash=policy_hash) == reference


def test_canonical_json_refuses_what_json_cannot_say() -> None:
    for bad, error in ((float("nan"), ValueError), ({"a": {1, 2}}, TypeError), (b"x", TypeError)):
        try:
            canonical_json(bad)
        except error:
            continue
        raise AssertionError(f"{bad!r} was encoded")
    cycle: list[object] = []
    cycle.append(cycle)
    try:
        canonical_json(cycle)
    except ValueError:
        pass
    else:
        raise AssertionError("a cycle was encoded")


def test_record_is_immutable_and_built_from_a_row_in_column_order() -> None:
    sealed = seal(NewRecord(run_id="r", actor="w01", kind="step.done", key="k", task="t", epoch=1,
                            payload={"b": 1, "a": [None]}), seq=3, ts_ms=9, prev_hash=GENESIS_HASH)
    assert sealed.payload_json == '{"a":[null],"b":1}' and sealed.payload == {"a": [None], "b": 1}
    assert Record._make(tuple(sealed)) == sealed and expected_hash(sealed) == sealed.hash
    assert Record(**sealed._asdict()) == sealed
    try:
        sealed.why = "changed"  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("a stored record was changed in place")
