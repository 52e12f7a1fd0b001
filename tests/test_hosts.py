"""Coordinators on several hosts, one PostgreSQL ledger: joining a run, leader takeover, fencing.

Each "host" is a coordinator process with its own workspace and its own copy of the repository
(at another path), started with ``--ledger postgresql://...``; the first starts the run, the
others ``--join`` it. Hosts die by SIGKILL (the coordinator and its paused worker), freeze
(SIGSTOP of the whole host, SIGCONT long after its leases expired), are cut off from the
database (a TCP link the test resets, ``netcut.Link``), or see PostgreSQL restart.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psutil
import pytest
from rich.console import Console

from netcut import Link
from pg_private import PrivateServer, private_server
from e2e import REPO_ROOT, normalized_sarif, real_library, real_repo, sarif_differences, run_cli, start_cli, stopped_child, wait_for
from fleetledger.coordinator import wall_clock_ms
from fleetledger.leases import LEADER_TASK, LEASE_END_KINDS, Lease, leader_action
from fleetledger.ledger import Record, open_storage
from fleetledger.verify import verify_records
from fleetledger.watch import Watcher, render
from fleetledger.workspace import Workspace

pytestmark = pytest.mark.slow

TTL = ("--lease-ttl", "2")


def _records(url: str) -> list[Record]:
    with open_storage(url) as storage:
        return list(storage.read())


def _run_id(url: str) -> str | None:
    with open_storage(url) as storage:
        first = storage.first_records()
    return first[0].run_id if first else None


_STARTED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _no_host_outlives_its_test() -> Iterator[None]:
    """Kills what a failed test left running (hosts and their paused workers), so that it does
    not load the machine under the next test."""
    yield
    for proc in _STARTED:
        if proc.poll() is None:
            for child in psutil.Process(proc.pid).children(recursive=True):
                child.kill()
            proc.kill()
        proc.communicate(timeout=60)  # also closes the pipes of a host that ended unread (else the next test's
        # garbage collection reports them as unraisable ResourceWarnings, failing that test)
    _STARTED.clear()


def _host(repo: Path, ws: Path, url: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    _STARTED.append(start_cli("scan", str(repo), "--workspace", str(ws), "--ledger", url, "--no-progress", *TTL, *args,
                              env=env))
    return _STARTED[-1]


def _granted(records: list[Record], pid: int) -> set[tuple[str, int]]:
    """The task leases (task, epoch) granted by the coordinator process ``pid`` (one host)."""
    sessions = {r.payload["session"]["id"] for r in records
                if r.kind in ("run.started", "run.joined") and r.payload["session"]["pid"] == pid}
    return {(r.task, r.epoch) for r in records
            if r.kind == "task.assigned" and r.task != LEADER_TASK and r.payload.get("session") in sessions}


def _finished_by(records: list[Record], pid: int) -> int:
    """Tasks finished under leases granted by the coordinator process ``pid``."""
    granted = _granted(records, pid)
    return sum(1 for r in records if r.kind == "task.finished" and (r.task, r.epoch) in granted)


def _pausing(once: Path, *, step: int) -> dict[str, str]:
    """The environment of a host whose worker pauses (SIGSTOP, once) after its ``step``-th
    investigate step: it then holds its task's lease without heartbeats."""
    return {"FLEETLEDGER_FAULT": f"scan.investigate.after_step:{step}:stop", "FLEETLEDGER_FAULT_ONCE": str(once)}


def _session(records: list[Record], pid: int) -> str:
    """The id of the coordinator session that is process ``pid``."""
    return next(r.payload["session"]["id"] for r in records
                if r.kind in ("run.started", "run.joined") and r.payload["session"]["pid"] == pid)


def _wake(proc: subprocess.Popen[str]) -> None:
    """Continues the paused worker of a host, if it has one."""
    paused = stopped_child(proc.pid)
    if paused is not None:
        paused.send_signal(signal.SIGCONT)


def _all_finish(*procs: subprocess.Popen[str]) -> None:
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err


def _assert_nothing_late(records: list[Record], held: list[tuple[str, int]]) -> None:
    """Nothing at an epoch of ``held`` (task, epoch) was appended after that lease expired."""
    for task, epoch in held:
        expiry = next(r.seq for r in records if r.kind == "lease.expired" and (r.task, r.epoch) == (task, epoch))
        late = [r for r in records if (r.task, r.epoch) == (task, epoch) and r.seq > expiry]
        assert late == [], f"{task}@{epoch}: nothing sent after its lease expired was appended"


def _assert_sound(records: list[Record]) -> None:
    report = verify_records(records)
    assert report.ok, report.problems  # no record of a stale epoch, no idempotency key completed twice
    finished = collections.Counter(r.task for r in records if r.kind == "task.finished")
    assert finished and max(finished.values()) == 1, "no task completed twice"
    assert sum(r.kind == "run.finished" for r in records) == 1


def _baseline(root: Path, copy: Callable[[Path], Path]) -> tuple[Path, dict]:
    """A one-host scan (SQLite ledger) of a copy of the real repository that ``copy`` makes
    under ``root``: the copy's path and its SARIF."""
    repo = copy(root / "repo-a")
    done = run_cli("scan", str(repo), "--workspace", str(root / "one-host"), "--no-progress")
    assert done.returncode == 0, done.stderr
    return repo, normalized_sarif(root / "one-host" / "findings.sarif")


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A one-host scan of the real repository's library (``real_library``)."""
    return _baseline(tmp_path_factory.mktemp("hosts"), real_library)


@pytest.fixture(scope="module")
def whole_baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A one-host scan of the whole real repository: enough work left, after a host is killed,
    for it to come back and join again while the run goes on."""
    return _baseline(tmp_path_factory.mktemp("hosts-whole"), lambda where: _copy(real_repo(), where))


def _copy(repo: Path, where: Path) -> Path:
    shutil.copytree(repo, where, symlinks=True)
    return where


def test_two_hosts_the_leader_killed_mid_run_the_other_finishes_with_the_same_sarif(
        baseline: tuple[Path, dict], postgres_url: str, tmp_path: Path) -> None:
    repo_a, expected = baseline
    repo_b = _copy(repo_a, tmp_path / "repo-b")
    # Host A's worker pauses inside its third investigate step, so the run is mid-way when B joins.
    a = _host(repo_a, tmp_path / "ws-a", postgres_url, "--workers", "1",
              env=_pausing(tmp_path / "once", step=3))
    wait_for(lambda: stopped_child(a.pid) is not None, what="host A's worker to pause mid-investigate", proc=a)
    run_id = _run_id(postgres_url)
    assert run_id is not None
    b = _host(repo_b, tmp_path / "ws-b", postgres_url, "--workers", "2", "--join", run_id)
    wait_for(lambda: any(r.kind == "run.joined" for r in _records(postgres_url)), what="host B to join", proc=b)
    a.send_signal(signal.SIGSTOP)  # the leader freezes (so the run cannot end without B) ...
    wait_for(lambda: _finished_by(_records(postgres_url), b.pid) >= 2, what="host B to finish tasks", proc=b)

    paused = stopped_child(a.pid)
    assert paused is not None
    a.send_signal(signal.SIGKILL)  # ... and its host goes away: coordinator and worker
    paused.send_signal(signal.SIGKILL)
    a.communicate(timeout=60)

    _all_finish(b)
    records = _records(postgres_url)
    _assert_sound(records)
    leaders = [r for r in records if r.kind == "task.assigned" and r.task == LEADER_TASK]
    assert [r.payload["pid"] for r in leaders][:1] == [a.pid] and leaders[-1].payload["pid"] == b.pid, \
        "A led the run first; B took the leader lease over after A's expired"
    assert any(r.kind == "lease.expired" and r.task != LEADER_TASK and r.payload["cause"] == "heartbeat timeout"
               for r in records), "A's worker's lease was taken back by B after it expired"
    assert not sarif_differences(normalized_sarif(tmp_path / "ws-b" / "findings.sarif"), expected)
    assert not (tmp_path / "ws-a" / "findings.sarif").exists(), "exported once, by the host that finished the run"


def test_four_hosts_one_killed_the_rest_finish_with_the_same_sarif(
        whole_baseline: tuple[Path, dict], postgres_url: str, tmp_path: Path) -> None:
    repo_a, expected = whole_baseline
    # The first host's worker pauses holding an investigate task for 8 s (its lease), so the run
    # is still going when a host is killed.
    first = _host(repo_a, tmp_path / "ws-0", postgres_url, "--workers", "1", "--lease-ttl", "8",
                  env=_pausing(tmp_path / "once", step=2))
    wait_for(lambda: stopped_child(first.pid) is not None, what="the first host's worker to pause", proc=first)
    run_id = _run_id(postgres_url)
    assert run_id is not None
    others = [_host(_copy(repo_a, tmp_path / f"repo-{n}"), tmp_path / f"ws-{n}", postgres_url,
                    "--workers", "1", "--join", run_id) for n in (1, 2, 3)]
    victim = others[0]
    wait_for(lambda: _finished_by(_records(postgres_url), victim.pid) >= 1, what="host 1 to finish a task", proc=victim)
    victim.send_signal(signal.SIGKILL)  # a host that is not the leader dies
    victim.communicate(timeout=60)
    # It comes back: the three-state rule on its own workspace joins the run again, with its own checkout.
    back = start_cli("recover", "--workspace", str(tmp_path / "ws-1"), "--ledger", postgres_url, *TTL)
    _STARTED.append(back)
    paused = stopped_child(first.pid)
    assert paused is not None
    paused.send_signal(signal.SIGCONT)  # the first host's worker goes on (or is fenced if its lease expired)

    _all_finish(first, *others[1:], back)
    records = _records(postgres_url)
    _assert_sound(records)
    joined = [r for r in records if r.kind == "run.joined"]
    assert len(joined) == 4
    host1 = [r for r in joined if r.payload["session"]["member"].endswith(f":{tmp_path / 'ws-1'}")]
    assert [r.payload["target"] for r in host1] == [str(tmp_path / "repo-1")] * 2, \
        "host 1 joined again from its own workspace and checkout"
    exports = [p for p in tmp_path.glob("ws-*/findings.sarif")]
    assert len(exports) == 1, "planning and export happen once per run"
    assert not sarif_differences(normalized_sarif(exports[0]), expected)


def test_a_frozen_host_back_after_its_leases_expired_writes_nothing_stale(postgres_url: str, tmp_path: Path) -> None:
    repo = real_library(tmp_path / "repo-a")
    a = _host(repo, tmp_path / "ws-a", postgres_url, "--workers", "1", "--sandbox", "none",
              env=_pausing(tmp_path / "once", step=2))
    wait_for(lambda: stopped_child(a.pid) is not None, what="host A's worker to pause", proc=a)
    a_worker = stopped_child(a.pid)
    assert a_worker is not None
    run_id = _run_id(postgres_url)
    assert run_id is not None
    held = [r for r in _records(postgres_url) if r.kind == "task.assigned" and r.task != LEADER_TASK][-1]
    os.kill(a.pid, signal.SIGSTOP)  # host A freezes (a VM paused, a swap storm): coordinator and worker
    # B's one worker pauses in its first investigate step, so the run cannot end before A is back.
    b = _host(_copy(repo, tmp_path / "repo-b"), tmp_path / "ws-b", postgres_url, "--workers", "1", "--sandbox", "none",
              "--join", run_id, env=_pausing(tmp_path / "once-b", step=1))
    try:
        wait_for(lambda: any(r.kind == "lease.expired" and r.task == held.task and r.epoch == held.epoch
                             for r in _records(postgres_url)), what="host B to take back the cut-off host's lease", proc=b)
        wait_for(lambda: stopped_child(b.pid) is not None, what="host B's worker to pause", proc=b)
        a_worker.send_signal(signal.SIGCONT)
        os.kill(a.pid, signal.SIGCONT)  # A comes back: its coordinator and worker carry on with a lease B took back
    finally:
        os.kill(a.pid, signal.SIGCONT)
        _wake(b)
    _all_finish(a, b)
    records = _records(postgres_url)
    _assert_sound(records)
    _assert_nothing_late(records, [(held.task, held.epoch)])
    redone = [r for r in records if r.kind == "task.finished" and r.task == held.task]
    assert [r.epoch > held.epoch for r in redone] == [True], "the task was done once, under a later lease"


def test_a_host_cut_off_from_the_database_is_fenced_when_its_retried_writes_arrive(postgres_url: str, tmp_path: Path) -> None:
    """Host A reaches PostgreSQL through a link the test cuts (its connections reset, new ones
    refused) while its coordinator and workers keep running; B takes A's leases back once they
    expire; when the link is restored, A's retried appends arrive and the fence refuses them."""
    repo = real_library(tmp_path / "repo-a")
    parts = urlsplit(postgres_url)
    link = Link(parts.port or 5432)
    a_url = urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.port}", f":{link.port}")))
    try:
        # A's leases outlast the moments between its worker's pause and the cut (A's own
        # coordinator would take an expired one back); B joins only after the cut, so how long
        # B takes to start does not count.
        a = _host(repo, tmp_path / "ws-a", a_url, "--workers", "2", "--sandbox", "none", "--lease-ttl", "6",
                  env=_pausing(tmp_path / "once", step=1))
        wait_for(lambda: stopped_child(a.pid) is not None, what="host A to be mid-investigate", proc=a)
        run_id = _run_id(postgres_url)
        assert run_id is not None
        link.cut()
        records = _records(postgres_url)  # what A managed to record; nothing more of it arrives now
        ended = {(r.task, r.epoch) for r in records if r.kind in LEASE_END_KINDS}
        held = sorted(_granted(records, a.pid) - ended)
        assert held, "A holds a lease when it is cut off (its paused worker's, at least)"
        # B's one worker pauses in its first investigate step, so the run cannot end before A is back.
        b = _host(_copy(repo, tmp_path / "repo-b"), tmp_path / "ws-b", postgres_url, "--workers", "1", "--sandbox", "none",
                  "--join", run_id, env=_pausing(tmp_path / "once-b", step=1))
        wait_for(lambda: any(r.kind == "run.joined" for r in _records(postgres_url)), what="host B to join", proc=b)
        wait_for(lambda: {(r.task, r.epoch) for r in _records(postgres_url) if r.kind == "lease.expired"} >= set(held),
                 what="host B to take back every lease of the cut-off host", proc=b)
        _wake(a)  # A's paused worker goes on, unaware
        link.restore()
        wait_for(lambda: any(r.kind == "decision" and "fenced" in r.why and (r.payload.get("task"), r.payload.get("epoch")) in held
                             for r in _records(postgres_url)), what="A's late writes to be refused", proc=a)
        _wake(b)
        _all_finish(a, b)
    finally:
        link.close()
    records = _records(postgres_url)
    _assert_sound(records)
    _assert_nothing_late(records, held)


def test_a_host_whose_checkout_differs_is_refused_before_it_takes_any_task(postgres_url: str, tmp_path: Path) -> None:
    repo = real_library(tmp_path / "repo-a")
    a = _host(repo, tmp_path / "ws-a", postgres_url, "--workers", "1", "--sandbox", "none",
              env=_pausing(tmp_path / "once", step=1))
    wait_for(lambda: stopped_child(a.pid) is not None, what="host A's worker to pause", proc=a)
    other = _copy(repo, tmp_path / "repo-b")
    (other / "src" / "flask" / "app.py").write_text("print('another checkout')\n")
    (other / "extra.py").write_text("import os\n")
    joined = run_cli("scan", str(other), "--workspace", str(tmp_path / "ws-b"), "--ledger", postgres_url,
                     "--no-progress", "--join", _run_id(postgres_url) or "?")
    assert joined.returncode != 0
    assert "checkout differs" in joined.stderr and "src/flask/app.py" in joined.stderr and "extra.py" in joined.stderr
    records = _records(postgres_url)
    refusal = [r for r in records if r.kind == "decision" and "refused to work on run" in r.why]
    assert len(refusal) == 1
    session = next(r for r in records if r.kind == "run.joined")
    assert not any(r.kind == "task.assigned" and r.payload.get("session") == session.payload["session"]["id"]
                   for r in records), "the refused host took no task"


def test_postgresql_restarted_mid_run_the_hosts_reconnect_and_lose_nothing(tmp_path: Path) -> None:
    with private_server() as server:  # not the shared server: tests on other xdist workers use it
        _restarted_mid_run(server, tmp_path)


def _restarted_mid_run(server: PrivateServer, tmp_path: Path) -> None:
    postgres_url = server.url
    repo = real_library(tmp_path / "repo-a")
    a = _host(repo, tmp_path / "ws-a", postgres_url, "--workers", "1", "--sandbox", "none",
              env=_pausing(tmp_path / "once", step=2))
    wait_for(lambda: stopped_child(a.pid) is not None, what="host A's worker to pause", proc=a)
    run_id = _run_id(postgres_url)
    assert run_id is not None
    b = _host(_copy(repo, tmp_path / "repo-b"), tmp_path / "ws-b", postgres_url, "--workers", "2", "--join", run_id)
    wait_for(lambda: bool(_granted(_records(postgres_url), b.pid)), what="host B to take a task", proc=b)
    before = _records(postgres_url)  # mid-investigate: A's worker is paused, B has just started
    server.restart()
    assert not any(r.kind == "run.finished" for r in before)
    _wake(a)
    _all_finish(a, b)
    records = _records(postgres_url)
    assert [r.hash for r in records[: len(before)]] == [r.hash for r in before], "nothing recorded was lost"
    _assert_sound(records)


def _two_hosts_mid_run(postgres_url: str, tmp_path: Path) -> tuple[subprocess.Popen[str], subprocess.Popen[str]]:
    """A (the leader, its one worker paused mid-investigate) and B (joined, its one worker
    paused in its first task). A's 6 s leases keep it the leader on a loaded machine."""
    repo = real_library(tmp_path / "repo-a")
    a = _host(repo, tmp_path / "ws-a", postgres_url, "--workers", "1", "--sandbox", "none", "--lease-ttl", "6",
              env=_pausing(tmp_path / "once", step=2))
    wait_for(lambda: stopped_child(a.pid) is not None, what="host A's worker to pause", proc=a)
    b = _host(_copy(repo, tmp_path / "repo-b"), tmp_path / "ws-b", postgres_url, "--workers", "1", "--sandbox", "none",
              "--lease-ttl", "60", "--join", _run_id(postgres_url) or "?", env=_pausing(tmp_path / "once-b", step=1))
    wait_for(lambda: stopped_child(b.pid) is not None, what="host B's worker to be mid-task", proc=b)
    return a, b


def test_ctrl_c_on_a_host_that_does_not_lead_makes_it_leave_and_the_run_goes_on(postgres_url: str, tmp_path: Path) -> None:
    a, b = _two_hosts_mid_run(postgres_url, tmp_path)
    b_session = _session(_records(postgres_url), b.pid)
    shown = run_cli("status", "--json", "--workspace", str(tmp_path / "ws-b"), "--ledger", postgres_url)
    assert shown.returncode == 0, shown.stderr
    status = json.loads(shown.stdout)
    assert status["state"] == "RUNNING" and status["live_pid"] == b.pid
    assert status["leader"]["pid"] == a.pid and status["leader"]["expires_in_s"] > 0, "status names the leading host"
    with open_storage(postgres_url) as storage:
        watcher = Watcher(Workspace.at(tmp_path / "ws-b"), storage)
        watcher.poll()
        console = Console(record=True, width=240)
        console.print(render(watcher.snapshot(wall_clock_ms())))
    assert f"1 host(s) joined; leader: coordinator {status['leader']['session']}" in console.export_text()
    b.send_signal(signal.SIGINT)
    _, err = b.communicate(timeout=120)
    assert b.returncode == 75, err
    records = _records(postgres_url)
    assert any(r.kind == "decision" and "left the run" in r.why for r in records)
    released = [r for r in records if r.kind == "lease.released" and r.payload.get("cause") == "coordinator left"]
    assert released, "B handed back the lease its worker held"
    assert not any(r.kind == "run.halted" for r in records), "the run goes on"
    _wake(a)
    _all_finish(a)
    records = _records(postgres_url)
    _assert_sound(records)
    assert all(any(f.kind == "task.finished" and f.task == r.task for f in records) for r in released)
    assert not any(r.kind == "task.assigned" and r.payload.get("session") == b_session and r.seq > released[-1].seq
                   for r in records)


def test_ctrl_c_on_the_leader_halts_the_run_and_resume_on_a_joined_host_finishes_it(postgres_url: str, tmp_path: Path) -> None:
    a, b = _two_hosts_mid_run(postgres_url, tmp_path)
    a.send_signal(signal.SIGINT)
    _, err = a.communicate(timeout=120)
    assert a.returncode == 75, err
    _wake(b)
    _, err = b.communicate(timeout=120)
    assert b.returncode == 75, err
    records = _records(postgres_url)
    (halt,) = [r for r in records if r.kind == "run.halted"]
    assert halt.payload["kind"] == "interrupted"
    assert any(r.kind == "lease.expired" and r.task == LEADER_TASK and r.payload["cause"] == "halt" for r in records), \
        "the halting leader handed its leader lease back"
    _wake(a)  # A's paused worker; it was stopped with the host
    # `fleetledger resume` on the host that joined: an explicit resume of the run, with its own checkout.
    resumed = run_cli("resume", "--workspace", str(tmp_path / "ws-b"), "--ledger", postgres_url, "--sandbox", "none",
                      *TTL, timeout_s=300)
    assert resumed.returncode == 0, resumed.stderr
    records = _records(postgres_url)
    _assert_sound(records)
    again = [r for r in records if r.kind in ("run.resumed", "run.joined") and r.seq > halt.seq]
    assert [r.kind for r in again] == ["run.resumed", "run.joined"] and again[0].payload["target"] == str(tmp_path / "repo-b")


def test_an_agent_session_on_a_joined_host_is_told_to_recover_there(postgres_url: str, tmp_path: Path) -> None:
    a, b = _two_hosts_mid_run(postgres_url, tmp_path)
    for child in psutil.Process(b.pid).children(recursive=True):
        child.kill()
    b.kill()  # host B's coordinator dies; the run goes on on A
    b.communicate(timeout=60)

    def advice(env: dict[str, str]) -> str:
        done = run_cli("hook", "session-start", "--workspace", str(tmp_path / "ws-b"), env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]

    blind = advice({"FLEETLEDGER_LEDGER": ""})
    assert "FLEETLEDGER_LEDGER is not set" in blind and "fleetledger_test" in blind and "fleetledger:fleetledger@" not in blind, \
        "it names the shared ledger (never its password) and asks for it"
    told = advice({"FLEETLEDGER_LEDGER": postgres_url})
    assert "is RUNNING" in told and f"fleetledger recover --workspace {tmp_path / 'ws-b'}" in told
    assert str(tmp_path / "repo-a") not in told.split("Where it stands")[0], "not the first host's command"
    _wake(a)


@pytest.mark.parametrize("case", ["sqlite", "missing", "finished"])
def test_join_errors_say_what_to_do(case: str, postgres_url: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("import subprocess\nsubprocess.call('ls', shell=True)\n")
    ledger = f"sqlite:///{tmp_path / 'ledger.sqlite3'}" if case == "sqlite" else postgres_url
    run_id = "scan-nothere"
    if case == "finished":
        done = run_cli("scan", str(repo), "--workspace", str(tmp_path / "ws-a"), "--ledger", postgres_url, "--no-progress")
        assert done.returncode == 0, done.stderr
        run_id = _run_id(postgres_url) or "?"
        late = run_cli("scan", str(repo), "--workspace", str(tmp_path / "ws-b"), "--ledger", postgres_url,
                       "--no-progress", "--join", run_id)
        assert late.returncode == 0 and "not joined: it finished" in late.stdout + late.stderr
        return
    joined = run_cli("scan", str(repo), "--workspace", str(tmp_path / "ws-b"), "--ledger", ledger,
                     "--no-progress", "--join", run_id)
    assert joined.returncode != 0
    expected = {"sqlite": "--join needs the ledger the run is in, shared between hosts",
                "missing": f"no run {run_id} in"}[case]
    assert expected in joined.stderr


def _lease(session: str, renewed_ms: int, expires_ms: int) -> Lease:
    return Lease(task=LEADER_TASK, worker=f"coordinator-{session}", epoch=1, expires_ms=expires_ms,
                 renewed_ms=renewed_ms, session=session, ttl_ms=expires_ms - renewed_ms)


@pytest.mark.parametrize(("leader", "now_ms", "expected"), [
    (None, 0, "claim"),
    (_lease("me", 0, 3_000), 999, None),
    (_lease("me", 0, 3_000), 1_000, "renew"),
    (_lease("other", 0, 3_000), 2_999, None),
    (_lease("other", 0, 3_000), 3_000, "expire"),
])
def test_leader_action(leader: Lease | None, now_ms: int, expected: str | None) -> None:
    assert leader_action(leader, session="me", now_ms=now_ms, ttl_ms=3_000) == expected
