"""Crash-only, proven with real processes: fencing of a paused worker, disk faults, effects
exactly once, many writers on one SQLite ledger, interrupted adoption, a torn WAL tail.
Cases 01 (C2), 02 (L2, L3) and 05 (S2) of ../shared/cases."""

from __future__ import annotations

import http.server
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from fleetledger import faults, runstate
from fleetledger.coordinator import Coordinator, HostContext, RunOptions
from fleetledger.jobs.base import Job, JobOutcome
from fleetledger.jobs.synthetic import deliveries, step_value
from fleetledger.ledger import NewRecord, open_storage
from fleetledger.reader import RunReader
from fleetledger.replay import fold
from fleetledger.verify import verify_records
from fleetledger.workspace import Workspace

from e2e import kill_cli, records, run_synthetic, start_synthetic, stopped_child, wait_for

pytestmark = pytest.mark.slow


def _steps(ws: Path) -> dict[str, str]:
    return {r.key.split("@")[0]: r.payload["result"]["value"] for r in records(ws) if r.kind == "step.done"}


def _expected(tasks: int, steps: int) -> dict[str, str]:
    return {f"t{t:04d}/s{n}": step_value(f"t{t:04d}", n) for t in range(tasks) for n in range(steps)}


def test_paused_worker_is_fenced_after_another_finished_its_task(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    args = ("--tasks", "4", "--steps", "4", "--work-us", "300000", "--workers", "2", "--lease-ttl", "1",
            "--heartbeat", "0.2")
    proc = start_synthetic(ws, *args, env={"FLEETLEDGER_FAULT": "synthetic.in_step:1:stop",
                                           "FLEETLEDGER_FAULT_ONCE": str(tmp_path / "once")})
    wait_for(lambda: stopped_child(proc.pid) is not None, what="a worker paused in its task", proc=proc)
    paused = stopped_child(proc.pid)
    held = [r for r in records(ws) if r.kind == "task.assigned" and r.payload["pid"] == paused.pid][-1]
    wait_for(lambda: any(r.kind == "task.finished" and r.task == held.task and r.epoch > held.epoch for r in records(ws)),
             what="another worker to finish the paused worker's task", proc=proc)
    paused.send_signal(signal.SIGCONT)
    wait_for(lambda: any(r.kind == "decision" and "fenced" in r.why and r.payload.get("epoch") == held.epoch
                         for r in records(ws)), what="the woken worker to be refused", proc=proc)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    history = records(ws)
    assert verify_records(history).ok, "no record from a stale epoch was accepted"
    late = [r for r in history if r.task == held.task and r.epoch == held.epoch and r.seq > next(
        e.seq for e in history if e.kind == "lease.expired" and e.task == held.task)]
    assert late == [], "nothing the paused worker sent after its lease expired was appended"
    assert _steps(ws) == _expected(4, 4)


@pytest.mark.parametrize("errno_name", ["eio", "enospc"])
def test_failing_disk_once_at_every_operation_is_retried_and_loses_nothing(tmp_path: Path, errno_name: str) -> None:
    """SQLite's testing method: fail operation N once, then N+1, ... until the run completes."""
    n = 1
    while True:
        ws = tmp_path / f"ws{n}"
        done = run_synthetic(ws, "--tasks", "2", "--steps", "3", "--workers", "2",
                             env={"FLEETLEDGER_FAULT": f"ledger.before_commit:{n}:{errno_name}"})
        assert done.returncode == 0, f"operation {n}: {done.stdout}{done.stderr}"
        history = records(ws)
        assert verify_records(history).ok and _steps(ws) == _expected(2, 3)
        with sqlite3.connect(ws / "ledger.sqlite3") as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        commits = len({r.ts_ms for r in history})
        n += 1
        if n > commits + 1:
            break
    assert n > 5, "the fault was injected at many different operations"


def test_failing_disk_forever_stops_with_a_clear_error_and_a_clean_rerun_finishes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    args = ("--tasks", "2", "--steps", "3", "--workers", "2", "--ledger-retry", "0.5")
    bad = run_synthetic(ws, *args, env={"FLEETLEDGER_FAULT": "ledger.before_commit:6:eio+"})
    assert bad.returncode != 0
    assert "injected Input/output error" in bad.stderr and "recover" in bad.stderr
    before = records(ws)
    assert verify_records(before).ok
    assert runstate.read(ws / runstate.STATE_FILE).state == "RUNNING", "the ledger could not say HALTED; it stays RUNNING"
    good = run_synthetic(ws, *args)
    assert good.returncode == 0, good.stderr
    after = records(ws)
    assert [r.hash for r in after[: len(before)]] == [r.hash for r in before], "nothing recorded was lost"
    assert _steps(ws) == _expected(2, 3)


def test_disk_full_while_running_halts_when_it_lasts(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    args = ("--tasks", "2", "--steps", "3", "--workers", "2", "--ledger-retry", "0.5")
    env = {"FLEETLEDGER_FAULT": "ledger.before_commit:6:enospc", "FLEETLEDGER_FAULT_ONCE": str(tmp_path / "once")}
    done = run_synthetic(ws, *args, env=env)
    assert done.returncode == 0, "a short disk-full is retried"
    assert verify_records(records(ws)).ok


@pytest.mark.parametrize("point", ["effect.after_intent", "effect.before_done"])
def test_crash_around_an_effect_then_resume_delivers_it_exactly_once(tmp_path: Path, point: str) -> None:
    ws, target = tmp_path / "ws", tmp_path / "tickets"
    args = ("--tasks", "3", "--steps", "2", "--target", str(target))
    crashed = run_synthetic(ws, *args, env={"FLEETLEDGER_FAULT": f"{point}:2:kill"})
    assert crashed.returncode == -signal.SIGKILL
    intents = [r.key for r in records(ws) if r.kind == "effect.intent"]
    done = [r.key for r in records(ws) if r.kind == "effect.done"]
    assert len(intents) == len(done) + 1, "the crash left one effect uncertain"
    resumed = run_synthetic(ws, *args)
    assert resumed.returncode == 0, resumed.stderr
    assert deliveries(target) == {f"publish:t{t:04d}": 1 for t in range(3)}, "counted at the target: each effect once"
    history = records(ws)
    assert Counter(r.key for r in history if r.kind == "effect.done") == Counter(f"publish:t{t:04d}" for t in range(3))
    if point == "effect.before_done":
        assert any(r.kind == "effect.done" and r.why.startswith("reconciled") for r in history)
    assert verify_records(history).ok


class _TicketAPI(http.server.ThreadingHTTPServer):
    """A ticket API on a real socket that takes an Idempotency-Key; it can commit a create and
    then drop the connection before answering (case L3)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _TicketHandler)
        # Non-blocking accept: a client that connects and resets before serve_forever accepts
        # would otherwise leave accept() blocked for good, and shutdown() waiting on it.
        self.socket.setblocking(False)
        self.tickets: dict[str, int] = {}
        self.creates = 0
        self.drop_next = True
        self.lock = threading.Lock()


class _TicketHandler(http.server.BaseHTTPRequestHandler):
    server: _TicketAPI

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        key = self.headers["Idempotency-Key"]
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with self.server.lock:
            if key not in self.server.tickets:
                self.server.creates += 1
                self.server.tickets[key] = self.server.creates
            ticket = self.server.tickets[key]
            drop, self.server.drop_next = self.server.drop_next, False
        if drop:
            self.close_connection = True
            self.connection.shutdown(2)
            return
        body = json.dumps({"id": ticket}).encode()
        self.send_response(201)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _OneEffectJob(Job):
    """A job whose only sprint performs one effect on the coordinator (``perform(host)``)."""

    sprints = ("publish",)
    host_sprints = frozenset({"publish"})
    worker_module = "fleetledger.jobs.synthetic"

    def __init__(self, kind: str, perform: Callable[[HostContext], object]) -> None:
        self.kind = kind
        self._perform = perform

    def describe(self) -> dict:
        return {"kind": self.kind, "target": "", "argv": [], "identity": {"kind": self.kind}, "options": {}}

    def plan(self, sprint: str, run: RunReader) -> list:
        return []

    def run_host_sprint(self, sprint: str, host: HostContext) -> None:
        self._perform(host)

    def outcome(self, run: RunReader, workspace: str) -> JobOutcome:
        return JobOutcome(summary=f"{self.kind} done")


def test_l3_ambiguous_failure_is_retried_with_the_same_key_and_the_api_sees_one_create(tmp_path: Path) -> None:
    api = _TicketAPI()
    threading.Thread(target=api.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{api.server_address[1]}/tickets"

    def open_ticket(key: str) -> dict:
        request = urllib.request.Request(url, data=b'{"title": "finding"}', method="POST",
                                         headers={"Idempotency-Key": key, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return {"ticket": json.loads(response.read())["id"]}

    job = _OneEffectJob("tickets", lambda host: host.effect("ticket:finding-1", open_ticket, idempotent=True,
                                                            kind="ticket"))
    try:
        result = Coordinator(job, Workspace.at(tmp_path / "ws"), RunOptions(workers=1)).run()
    finally:
        api.shutdown()
        api.server_close()
    assert result.exit_code == 0, result.message
    assert api.creates == 1, "the API saw one create"
    history = records(tmp_path / "ws")
    intents = [r for r in history if r.kind == "effect.intent"]
    failed = [r for r in history if r.kind == "effect.failed"]
    done = [r for r in history if r.kind == "effect.done"]
    assert len(intents) == 1 and len(failed) == 1 and len(done) == 1
    assert done[0].key == intents[0].key == "ticket:finding-1" and done[0].payload == {"ticket": 1}


def test_uncertain_effect_without_reconcile_halts_and_names_it(tmp_path: Path) -> None:
    sent: list[str] = []

    job = _OneEffectJob("post", lambda host: host.effect("post:weekly-report", lambda key: sent.append(key) or {"sent": True},
                                                         kind="post"))

    ws = Workspace.at(tmp_path / "ws")
    faults.arm("effect.before_done:1:eio")
    try:
        with pytest.raises(OSError):
            Coordinator(job, ws, RunOptions(workers=1)).run()
    finally:
        faults.arm(None)
    assert sent == ["post:weekly-report"]
    again = Coordinator(job, ws, RunOptions(workers=1)).run()
    assert again.exit_code == 75 and again.state == "HALTED"
    assert "post:weekly-report" in again.message and "only a person" in again.message
    assert sent == ["post:weekly-report"], "an uncertain, non-idempotent effect is never repeated by itself"
    state = runstate.read(ws.state_path)
    assert state.state == "HALTED" and "post:weekly-report" in state.data["halt"]["reason"]


WRITER = """
import sys
from fleetledger.ledger import NewRecord, open_storage
store = open_storage(sys.argv[1])
me = sys.argv[2]
for batch in range(20):
    store.append([NewRecord(run_id="many", actor=me, kind="model.call", key=f"{me}/{batch}/{i}", payload={"i": i})
                  for i in range(10)], now_ms=batch)
"""


def test_l2_sixteen_writers_one_ledger_a_long_reader_and_a_writer_killed_mid_transaction(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.sqlite3'}"
    open_storage(url).close()
    reader = sqlite3.connect(tmp_path / "l.sqlite3")
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM records").fetchone()  # holds a read snapshot throughout
    env = {**os.environ}
    procs = []
    for n in range(16):
        extra = {"FLEETLEDGER_FAULT": "ledger.before_commit:7:kill"} if n == 5 else {}
        procs.append(subprocess.Popen([sys.executable, "-c", WRITER, url, f"p{n:02d}"], env={**env, **extra}))
    codes = [p.wait(timeout=240) for p in procs]
    assert codes.count(-signal.SIGKILL) == 1 and codes.count(0) == 15, codes
    reader.rollback()
    reader.close()
    restart = subprocess.run([sys.executable, "-c", WRITER, url, "p05"], timeout=240)
    assert restart.returncode == 0, "a clean restart of the killed writer"
    with open_storage(url) as store:
        history = list(store.read())
    assert [r.seq for r in history] == list(range(1, len(history) + 1)), "contiguous sequence numbers"
    assert len(history) == 16 * 20 * 10, "no lost and no duplicated records"
    assert len({r.key for r in history}) == len(history)
    assert verify_records(history).ok


def test_c2_adoption_survives_a_ledger_locked_for_two_seconds(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    args = ("--tasks", "20", "--steps", "3", "--workers", "20", "--work-us", "3000000")
    proc = start_synthetic(ws, *args)
    wait_for(lambda: ws.joinpath("ledger.sqlite3").exists() and
             sum(1 for r in records(ws) if r.kind == "task.assigned") >= 20, what="20 leased tasks", proc=proc)
    kill_cli(proc)
    assert len(fold(records(ws)).leases()) == 20
    locker = sqlite3.connect(ws / "ledger.sqlite3", isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")  # the ledger is unwritable while this holds the write lock
    resume = start_synthetic(ws, "--tasks", "20", "--steps", "3", "--workers", "4")  # no slow work now
    time.sleep(2)  # the 2 s outage the case prescribes, not a synchronisation
    locker.execute("ROLLBACK")
    locker.close()
    _, err = resume.communicate(timeout=240)
    assert resume.returncode == 0, err
    history = records(ws)
    adopted = [r for r in history if r.kind == "lease.expired" and "gone" in r.why]
    assert len(adopted) == 20 and len({r.ts_ms for r in adopted}) == 1, "all 20 adopted in one commit"
    assert fold(history).leases() == [], "no task stays leased to a dead worker"
    assert _steps(ws) == _expected(20, 3)


def test_c2_adoption_that_cannot_write_exits_non_zero_and_a_second_resume_finishes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    args = ("--tasks", "6", "--steps", "3", "--workers", "6", "--work-us", "3000000")
    proc = start_synthetic(ws, *args)
    wait_for(lambda: ws.joinpath("ledger.sqlite3").exists() and
             sum(1 for r in records(ws) if r.kind == "task.assigned") >= 6, what="6 leased tasks", proc=proc)
    kill_cli(proc)
    before = records(ws)
    # Every commit after run.resumed fails for longer than the retry window: adoption cannot be
    # recorded, and neither can HALTED, so the process says so and exits non-zero.
    failing = run_synthetic(ws, *args, "--ledger-retry", "0.3", env={"FLEETLEDGER_FAULT": "ledger.before_commit:2:eio+"})
    assert failing.returncode != 0
    assert "could not even be marked HALTED" in failing.stderr and "recover" in failing.stderr
    partial = records(ws)
    assert [r.hash for r in partial[: len(before)]] == [r.hash for r in before]
    assert not any(r.kind == "lease.expired" and r.seq > before[-1].seq for r in partial), "adoption is all or nothing"
    second = run_synthetic(ws, "--tasks", "6", "--steps", "3", "--workers", "3")
    assert second.returncode == 0, second.stderr
    history = records(ws)
    assert sum(1 for r in history if r.kind == "lease.expired" and "gone" in r.why) == 6
    assert fold(history).leases() == [] and _steps(ws) == _expected(6, 3)


def test_s2_torn_wal_tail_is_set_aside_and_appends_stay_contiguous(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.sqlite3'}"
    code = ("import sys\nfrom fleetledger.ledger import NewRecord, open_storage\n"
            "s = open_storage(sys.argv[1])\n"
            "for i in range(5):\n"
            "    s.append([NewRecord(run_id='r', actor='coordinator', kind='decision', why=str(i), payload={'pad': 'x' * 3000})], now_ms=i)\n"
            "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    subprocess.run([sys.executable, "-c", code, url], timeout=60)
    wal = tmp_path / "l.sqlite3-wal"
    assert wal.stat().st_size > 0, "the records are still in the WAL (no checkpoint ran)"
    with open(wal, "r+b") as handle:
        handle.truncate(wal.stat().st_size - 1000)  # cut the last commit in the middle
    with open_storage(url) as store:
        survivors = list(store.read())
        assert 1 <= len(survivors) < 5, "the torn last commit is dropped, the ones before it kept"
        for i in range(3):
            store.append([NewRecord(run_id="r", actor="coordinator", kind="decision", why=f"after {i}")], now_ms=10 + i)
        history = list(store.read())
        assert store.execute_raw("PRAGMA integrity_check")[0][0] == "ok"
    assert [r.seq for r in history] == list(range(1, len(history) + 1))
    assert [r.why for r in history[-3:]] == ["after 0", "after 1", "after 2"]
    assert verify_records(history).ok


@pytest.mark.parametrize("fault, redone", [("synthetic.after_step:3:kill", "s3"), ("synthetic.in_step:4:kill", "s3")])
def test_c4_a_worker_that_forgets_everything_continues_at_the_next_step(tmp_path: Path, fault: str, redone: str) -> None:
    """Case C4's core: a worker that loses its memory right after step 3's result, or in the
    middle of step 4, is replaced; the next intent is step 4 (``s3``), rebuilt from the ledger,
    and nobody is asked anything."""
    ws = tmp_path / "ws"
    done = run_synthetic(ws, "--tasks", "1", "--steps", "6", "--workers", "1",
                         env={"FLEETLEDGER_FAULT": fault, "FLEETLEDGER_FAULT_ONCE": str(tmp_path / "once")})
    assert done.returncode == 0, done.stderr
    history = records(ws)
    died = next(r.seq for r in history if r.kind == "worker.exited")
    intents_after = [r.payload["name"] for r in history if r.kind == "step.intent" and r.seq > died]
    assert intents_after == [f"s{n}" for n in range(3, 6)] and intents_after[0] == redone
    assert not any(r.kind == "run.halted" for r in history)
    assert _steps(ws) == _expected(1, 6)


class _AckLostOnFinish:
    """A ledger whose commit of ``run.finished`` is stored but never acknowledged: every append
    carrying it commits (a retry finds it there), then raises, as a connection that drops
    after the commit does for longer than the retry window."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def append(self, batch, *, now_ms):  # type: ignore[no-untyped-def]
        outcomes = self._inner.append(batch, now_ms=now_ms)
        if any(r.kind == "run.finished" for r in batch):
            from fleetledger.errors import LedgerError
            raise LedgerError("the connection dropped before the commit was acknowledged")
        return outcomes


def test_a_finished_run_whose_commit_was_not_acknowledged_is_never_halted(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The ledger failing for good right after storing ``run.finished`` (its acknowledgement
    lost): the session ends with an error, but it appends nothing after ``run.finished`` (a
    ``run.halted`` there left the run HALTED, then RUNNING after the resume, though it finished),
    and the next start finds it finished."""
    import fleetledger.coordinator as coordinator_module

    job = _OneEffectJob("note", lambda host: host.effect("note:1", lambda key: {"noted": key}, idempotent=True,
                                                         kind="note"))
    ws = Workspace.at(tmp_path / "ws")
    real = coordinator_module.open_storage
    monkeypatch.setattr(coordinator_module, "open_storage", lambda url: _AckLostOnFinish(real(url)))
    from fleetledger.errors import LedgerError
    with pytest.raises(LedgerError, match="finished, but the ledger failed"):
        Coordinator(job, ws, RunOptions(workers=1, ledger_retry_s=0.2)).run()
    monkeypatch.setattr(coordinator_module, "open_storage", real)
    kinds = [r.kind for r in records(ws.root)]
    assert kinds[-1] == "run.finished", kinds[kinds.index("run.finished"):]
    again = Coordinator(job, ws, RunOptions(workers=1)).run()
    assert again.exit_code == 0 and again.already_done, again.message
    assert fold(records(ws.root)).state == "JACKED_OUT"
