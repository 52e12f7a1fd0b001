"""The run-state file: atomic replace, and rebuilt from the ledger when torn (case S1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fleetledger import errors, runstate
from fleetledger.ledger import NewRecord, open_storage
from fleetledger.replay import fold

RUN = "scan-abc"


def _view(tmp_path: Path, *, halted: bool = False):
    with open_storage(f"sqlite:///{tmp_path / 'l.sqlite3'}") as store:
        records = [NewRecord(run_id=RUN, actor="coordinator", kind="run.started", key=RUN,
                             payload={"job": {"kind": "scan", "target": "/src", "argv": ["fleetledger", "scan", "/src"]},
                                      "sprints": ["detect", "export"]}),
                   NewRecord(run_id=RUN, actor="coordinator", kind="sprint.started", key="detect")]
        if halted:
            records.append(NewRecord(run_id=RUN, actor="coordinator", kind="run.halted", why="quota", payload={"kind": "quota"}))
        store.append(records, now_ms=1_700_000_000_000)
        return fold(store.read(RUN))


def test_projection_has_the_documented_shape(tmp_path: Path) -> None:
    state = runstate.project(_view(tmp_path, halted=True), "sqlite:///x")
    data = state.data
    assert data["state"] == "HALTED" and data["halt"]["reason"] == "quota"
    assert data["sprints"] == {"total": 2, "completed": 0, "current": "detect",
                               "list": [{"id": "detect", "status": "in_progress"}, {"id": "export", "status": "pending"}]}
    assert data["timestamps"]["last_activity"].endswith("Z") and data["ledger"] == {"url": "sqlite:///x", "seq": 3}
    path = tmp_path / runstate.STATE_FILE
    runstate.write(path, state)
    assert runstate.read(path) == state


@pytest.mark.parametrize("content, problem", [
    (b"", "empty"),
    (b'{"schema": 1, "plan_id": "scan-abc", "sta', "not JSON"),
    (b'{"schema": 1, "state": "RUNNING"}', "wrong shape"),
    (b'[1, 2, 3]', "wrong shape"),
    (b'\xff\xfe\x00garbage', "not JSON"),
])
def test_corrupt_file_is_set_aside_and_rebuilt(tmp_path: Path, content: bytes, problem: str) -> None:
    view = _view(tmp_path)
    path = tmp_path / runstate.STATE_FILE
    path.write_bytes(content)
    with pytest.raises(errors.StateFileError) as info:
        runstate.read(path)
    assert info.value.problem == problem
    state, note = runstate.reconcile(path, view, "sqlite:///x", now_ms=5)
    assert note is not None and "set aside" in note
    assert state.state == "RUNNING" and runstate.read(path) == state
    kept = [p for p in tmp_path.iterdir() if p.name.startswith(runstate.STATE_FILE + ".bad-")]
    assert len(kept) == 1 and kept[0].read_bytes() == content, "the bad file is kept, never overwritten"


def test_file_of_another_run_or_ahead_of_the_ledger_is_set_aside(tmp_path: Path) -> None:
    view = _view(tmp_path)
    path = tmp_path / runstate.STATE_FILE
    ahead = runstate.project(view, "sqlite:///x").data
    ahead["ledger"]["seq"] = 999
    path.write_text(json.dumps(ahead))
    _, note = runstate.reconcile(path, view, "sqlite:///x", now_ms=6)
    assert note and "disagreed" in note
    assert runstate.read(path).seq == view.last_seq


def test_stale_file_is_rewritten_without_setting_aside(tmp_path: Path) -> None:
    view = _view(tmp_path)
    path = tmp_path / runstate.STATE_FILE
    stale = runstate.project(view, "sqlite:///x").data
    stale["ledger"]["seq"] = 1
    path.write_text(json.dumps(stale))
    _, note = runstate.reconcile(path, view, "sqlite:///x", now_ms=7)
    assert note is None and runstate.read(path).seq == view.last_seq
    assert [p.name for p in tmp_path.iterdir() if ".bad-" in p.name] == []


WRITER = """
import sys
from pathlib import Path
from fleetledger import runstate
path = Path(sys.argv[1])
old = runstate.read(path)
data = dict(old.data)
data["state"] = "HALTED"
data["halt"] = {"reason": "new"}
runstate.write(path, runstate.RunState(data=data))
"""


@pytest.mark.parametrize("point", ["runstate.after_write", "runstate.after_fsync", "runstate.after_rename"])
def test_crash_at_each_point_of_the_write_leaves_old_or_new_whole(tmp_path: Path, point: str) -> None:
    view = _view(tmp_path)
    path = tmp_path / runstate.STATE_FILE
    runstate.write(path, runstate.project(view, "sqlite:///x"))
    env = {**os.environ, "FLEETLEDGER_FAULT": f"{point}:1:kill"}
    proc = subprocess.run([sys.executable, "-c", WRITER, str(path)], env=env, timeout=60)
    assert proc.returncode == -9, "the writer was killed at the crash point"
    state = runstate.read(path)
    assert state is not None
    assert state.state == ("HALTED" if point == "runstate.after_rename" else "RUNNING")
    state2, _ = runstate.reconcile(path, view, "sqlite:///x", now_ms=8)
    assert state2.state == "RUNNING", "the ledger wins over whatever the file says"
