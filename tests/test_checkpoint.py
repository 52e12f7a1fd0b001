"""Checkpoints: the fold state in the ledger, so that readers and resumes fold only what follows it.

Proved here: the coordinator writes them (every ``--checkpoint-every`` records and at sprint
ends); a resume after ``kill -9`` starts from the latest one and says so in ``run.resumed``; a
view loaded from a checkpoint equals the fold from the first record; a checkpoint that cannot be
used is ignored; and ``verify`` catches one that does not match the records before it.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from e2e import records, run_synthetic
from fleetledger.ledger import NewRecord, Storage, open_storage
from fleetledger.reader import checkpoint_payload, load
from fleetledger.replay import CHECKPOINT_FORMAT, fold
from fleetledger.verify import verify_records

pytestmark = pytest.mark.slow

RUN = "synthetic-1"


def test_a_killed_run_resumes_from_its_latest_checkpoint_and_folds_only_what_follows(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    args = ("--tasks", "6", "--steps", "5", "--workers", "2", "--checkpoint-every", "10")
    # Killed before its 8th commit (a run of this size makes more than 20 whatever the grouping).
    crashed = run_synthetic(ws, *args, env={"FLEETLEDGER_FAULT": "ledger.before_commit:8:kill"})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    before = records(ws)
    checkpoints = [r for r in before if r.kind == "checkpoint"]
    assert checkpoints, "checkpoints were written while the run was live"
    by_seq = {r.seq: r for r in before}
    assert all(b.seq - a.seq >= 10 or by_seq[b.seq - 1].kind == "sprint.finished"
               for a, b in zip(checkpoints, checkpoints[1:])), "every 10 records, or at a sprint's end"

    done = run_synthetic(ws, *args)
    assert done.returncode == 0, done.stderr
    after = records(ws)
    assert [r.hash for r in after[: len(before)]] == [r.hash for r in before], "nothing recorded was lost"
    (resumed,) = [r for r in after if r.kind == "run.resumed"]
    fold_from = resumed.payload["fold"]
    assert fold_from["checkpoint_seq"] == checkpoints[-1].seq
    assert fold_from["records"] == resumed.seq - checkpoints[-1].seq, \
        "the resume folded the checkpoint and the records after it, not the whole ledger"
    assert sum(r.kind == "step.done" for r in after) == 6 * 5
    assert any(r.kind == "checkpoint" and r.seq > resumed.seq for r in after), "the resumed session writes them too"
    report = verify_records(after)
    assert report.ok, report.problems

    with open_storage(f"sqlite:///{ws / 'ledger.sqlite3'}") as storage:
        loaded = load(storage, after[0].run_id)
        full = load(storage, after[0].run_id, trust_checkpoints=False)
    assert loaded.checkpoint_seq == max(r.seq for r in after if r.kind == "checkpoint")
    assert loaded.folded < full.folded == len(after)
    assert loaded.view.to_json() == full.view.to_json() == fold(after).to_json()


def _history(storage: Storage, n: int = 3) -> None:
    def r(kind: str, **kw) -> NewRecord:
        return NewRecord(run_id=RUN, actor="coordinator", kind=kind, **kw)

    storage.append([r("run.started", key=RUN, payload={"job": {"kind": "synthetic"}, "sprints": ["a"]})], now_ms=1_000)
    for i in range(n):
        storage.append([r("task.planned", task=f"t{i}", key=f"t{i}", payload={"sprint": "a", "inputs": {"i": i}})],
                       now_ms=1_000 + i)


def test_load_starts_at_the_latest_usable_checkpoint_and_ignores_one_it_cannot_use(storage: Storage) -> None:
    _history(storage, 2)
    view = load(storage, RUN).view
    storage.append([NewRecord(run_id=RUN, actor="coordinator", kind="checkpoint", why="fold",
                              payload=checkpoint_payload(view))], now_ms=2_000)
    storage.append([NewRecord(run_id=RUN, actor="coordinator", kind="task.planned", task="t9", key="t9",
                              payload={"sprint": "a", "inputs": {}})], now_ms=2_001)
    loaded = load(storage, RUN)
    assert (loaded.checkpoint_seq, loaded.folded) == (4, 2)
    assert loaded.view.to_json() == fold(storage.read(RUN)).to_json()

    unknown = {"format": CHECKPOINT_FORMAT + 1, "view": checkpoint_payload(loaded.view)["view"]}
    storage.append([NewRecord(run_id=RUN, actor="coordinator", kind="checkpoint", why="from a newer release",
                              payload=unknown)], now_ms=3_000)
    ignored = load(storage, RUN)
    assert ignored.checkpoint_seq is None and ignored.folded == 6, "an unusable checkpoint means a fold from zero"
    assert ignored.view.to_json() == fold(storage.read(RUN)).to_json()
    report = verify_records(storage.read(RUN))
    assert report.ok, report.problems  # regression: one of another format was reported as not matching


def test_verify_catches_a_checkpoint_that_does_not_match_the_records_before_it(storage: Storage) -> None:
    _history(storage, 2)
    forged = load(storage, RUN).view.to_json()
    forged["tasks"][1][2] = "finished"  # [id, sprint, status, ...]: t1 looks finished
    storage.append([NewRecord(run_id=RUN, actor="coordinator", kind="checkpoint", why="fold",
                              payload={"format": CHECKPOINT_FORMAT, "view": forged})], now_ms=2_000)
    report = verify_records(storage.read(RUN))
    assert not report.ok
    assert any("checkpoint does not match" in p and "seq 4" in p for p in report.problems), report.problems
