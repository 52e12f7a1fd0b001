"""``fleetledger status --watch``: the live view, from another process, of a run that lives, dies,
is resumed, halts and finishes; it folds only what was appended since its last refresh."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fleetledger.coordinator import wall_clock_ms
from fleetledger.ledger import Record, Storage, open_storage
from fleetledger.replay import fold
from fleetledger.watch import Watcher
from fleetledger.workspace import Workspace

from e2e import cli_argv, records, run_cli, start_cli, stopped_child, wait_for

pytestmark = pytest.mark.slow

TERMINAL = {"TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1", "FORCE_COLOR": "1", "NO_COLOR": "1", "TERM": "xterm",
            "COLUMNS": "220"}
"""Makes rich draw live frames into a pipe, so a test sees each refresh as it happens."""


class ReadSpy:
    """A ledger that notes every ``read(run_id, after_seq)`` and how many records it returned."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.reads: list[tuple[str | None, int, int]] = []

    def read(self, run_id: str | None = None, *, after_seq: int = 0) -> Iterator[Record]:
        got = list(self.storage.read(run_id, after_seq=after_seq))
        self.reads.append((run_id, after_seq, len(got)))
        return iter(got)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.storage, name)


def start_watch(ws: Path, *args: str) -> subprocess.Popen[bytes]:
    """Starts ``fleetledger status --watch`` drawing into a pipe as if it were a terminal, with
    Ctrl-C's signal delivered as a terminal's foreground job gets it. Regression: started from
    a background job (``.ci/test &``), the test process ignores SIGINT, the watch inherited
    that, and Python then raises no KeyboardInterrupt: the Ctrl-C test waited 60 s and failed."""
    return subprocess.Popen(cli_argv("status", "--watch", "--interval", "0.05", "--workspace", str(ws), *args),
                            env={**os.environ, **TERMINAL}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def read_until(proc: subprocess.Popen[bytes], needle: str, timeout_s: float = 60) -> str:
    """Reads the watch's output until ``needle`` appears on it (an event, not a sleep)."""
    out = b""
    deadline = time.monotonic() + timeout_s
    while needle.encode() not in out:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            raise AssertionError(f"the watch did not show {needle!r} in {timeout_s} s: {out[-3000:]!r}")
        chunk = os.read(proc.stdout.fileno(), 1 << 16)
        if not chunk:
            raise AssertionError(f"the watch ended before showing {needle!r}: {out[-3000:]!r} {proc.stderr.read()!r}")
        out += chunk
    return out.decode(errors="replace")


def finish(proc: subprocess.Popen[bytes], timeout_s: float = 60) -> tuple[int, str]:
    """Waits for the watch to end; returns its exit code and the rest of its output."""
    out, err = proc.communicate(timeout=timeout_s)
    return proc.returncode, out.decode(errors="replace") + err.decode(errors="replace")


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("finished") / "ws"
    done = run_cli("scan", "--demo", "--workspace", str(ws), "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    return ws


def test_live_run_then_dead_worker_folded_incrementally_and_watched_to_the_end(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = start_cli("scan", "--demo", "--workspace", str(ws), "--workers", "2", "--no-progress",
                     env={"FLEETLEDGER_FAULT": "scan.investigate.after_step:2:stop",
                          "FLEETLEDGER_FAULT_ONCE": str(tmp_path / "once")})
    wait_for(lambda: stopped_child(proc.pid) is not None, what="a worker to pause inside investigate", proc=proc)
    victim = stopped_child(proc.pid)
    with open_storage(f"sqlite:///{ws / 'ledger.sqlite3'}") as storage:
        spy = ReadSpy(storage)
        watcher = Watcher(Workspace.at(ws), spy)
        first = watcher.poll()
        checkpoint = storage.latest_checkpoint(watcher.view.run_id)
        assert checkpoint is not None, "the detect sprint ended with a checkpoint"
        snap = watcher.snapshot(wall_clock_ms())
        assert snap.view.state == "RUNNING" and snap.live_pid == proc.pid
        victim_id = next(wid for wid, w in snap.view.workers.items() if w["pid"] == victim.pid)
        row = next(w for w in snap.workers if w.id == victim_id)
        assert row.task.startswith("investigate-") and row.epoch == 1 and row.lease_expires_in_s > 0
        assert row.heartbeat_age_s is not None and row.exited is None

        watch = start_watch(ws, "--until-stopped")
        shown = read_until(watch, f"coordinator live (pid {proc.pid})")
        assert victim_id in shown and row.task in shown and "investigate" in shown
        victim.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        code, rest = finish(watch)
        assert code == 0, rest
        assert "JACKED_OUT" in rest and "worker.exited" in rest and "lease.expired" in rest
        assert "findings so far" in rest and "revalidated" in rest

        second = watcher.poll()
        assert watcher.poll() == 0
    everything = records(ws)
    run_id = everything[0].run_id
    before = checkpoint.seq - 1
    assert before + first + second == len(everything)
    assert spy.reads[:2] == [(run_id, before, first), (run_id, before + first, second)], \
        "the first poll starts at the latest checkpoint; each poll reads only the records after the last it folded"
    assert watcher.view.to_json() == fold(everything).to_json()
    kinds = [kind for _, kind, _ in watcher.events]
    assert {"worker.exited", "lease.expired", "run.finished"} <= set(kinds)


def test_a_dead_run_shows_interrupted_and_the_watch_follows_its_recovery(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    crashed = run_cli("scan", "--demo", "--workspace", str(ws), "--no-progress",
                      env={"FLEETLEDGER_FAULT": "ledger.after_commit:8:kill"})
    assert crashed.returncode == -signal.SIGKILL
    watch = start_watch(ws, "--until-stopped")
    shown = read_until(watch, "no coordinator: interrupted")
    assert "RUNNING" in shown and "not running (no coordinator)" in shown
    recovered = run_cli("recover", "--workspace", str(ws), "--no-progress")
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    code, rest = finish(watch)
    assert code == 0 and "JACKED_OUT" in rest and "run.resumed" in rest


def test_ctrl_c_ends_the_watch(finished: Path) -> None:
    watch = start_watch(finished)
    read_until(watch, "JACKED_OUT")
    watch.send_signal(signal.SIGINT)
    code, rest = finish(watch)
    assert code == 0 and "Traceback" not in rest


def test_a_halted_run_shows_why_and_until_stopped_ends_at_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    halted = run_cli("scan", "--demo", "--workspace", str(ws), "--model-quota", "2", "--no-progress")
    assert halted.returncode == 75, halted.stdout + halted.stderr
    shown = run_cli("status", "--watch", "--until-stopped", "--workspace", str(ws), env={"COLUMNS": "220"})
    assert shown.returncode == 0, shown.stderr
    assert "HALTED" in shown.stdout and "quota" in shown.stdout and "run.halted" in shown.stdout


def test_watch_and_json_do_not_combine(finished: Path) -> None:
    done = run_cli("status", "--watch", "--json", "--workspace", str(finished))
    assert done.returncode == 2 and "--json and --watch" in done.stderr
