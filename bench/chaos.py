"""The chaos harness: kill real processes at every named fault point and at random times,
recover with fresh processes (possibly crashing again during recovery), and compare the final
ledger-derived outputs with an uninterrupted run.

    python bench/chaos.py [--workload synthetic|fleet10|scan|all] [--jobs 2] [--limit N]
                          [--shard K/N] [--out results.jsonl] [--random N] [--seed S]
                          [--family kill,enospc,nul,code] [--variants N]
                          [--sample N [--sample-seed S]] [--only ID,...]
    python bench/chaos.py --sum results*.jsonl

Each scenario is one line of JSON in ``--out`` (appended and flushed as it ends), so a run can
be stopped at any moment and continued with the same command: finished scenarios are skipped.
Shards (``--shard K/N``) split the scenario list for several machines or sessions; ``--sum``
adds up any number of result files. It prints:

    scenarios run, faults that fired (each scenario proves its crash: the process that acted
    leaves a once file; a scenario whose fault never fired is counted apart, and so is a crash
    during recovery that never happened), process deaths injected, lost records (not reported by salvage), duplicated
    effects (counted at the effect's target, not from our ledger), divergent final outputs,
    ledgers failing verify, runs not finished, wrong exits (a traceback, a changed-code run not
    refused, damage neither refused nor harmless), run-state files contradicting the ledger, and
    records lost to damage that salvage reported.

Families of scenarios (``--family``, default all):

* ``kill``: SIGKILL at every (fault point, occurrence), each also with a second kill during
  recovery (at one of its first ``RECOVERY_EVENTS`` events), plus ``--random`` kills at random *events*: K drawn uniformly over the reference
  run's events (every fault point reached, by any process), armed as ``*:K:kill`` with a
  counter shared by every process (``faults``), so kills land in the middle of work, not
  during start-up, and each replays from its K;
* ``enospc``: the disk fills at every (fault point, occurrence) and stays full in that process
  (``enospc+``: every write point, ledger, run-state file, heads, reports, effects): the run must
  end HALTED with exit 75 (or finish, where the write was retried), never with a traceback, and
  the run-state file must agree with the ledger at the sequence number it names; then space
  is freed and the same command finishes;
* ``nul``: a kill, then 4 KiB of NUL bytes over a page of the ledger file or of its WAL (a
  seeded choice); the next command must refuse the damaged ledger (exit 65, or 1 for a ledger
  behind its signed head) or find the damage harmless; ``fleetledger salvage`` then keeps what
  it can and reports the rest; every record lost must be one salvage reported, except the
  records of the WAL's last transaction when the block covers one of its frames: nothing can
  tell that from a commit torn by the crash (they are counted apart, and the run redoes them);
* ``code``: a kill, then the code changes (a copy of the package with one file edited): the
  same command must refuse (exit 2) and append nothing; ``--upgrade`` then finishes the run,
  with outputs equal to an uninterrupted run's and no effect repeated.

Every scenario is reproducible from its id: ``--only ID`` runs it again (with the same
``--workload`` and ``--seed``), and each problem is printed with that command. ``--sample N``
runs a random sample of the scenarios (seeded by ``--sample-seed``, drawn when not given and
printed): the CI subset, over every family, point and random kill.

Processes: each harness thread keeps a fork server (``bench/forkserver.py``) that imported the
code once; a scenario's runs are forks of it, and their workers forks of the coordinator
(``FLEETLEDGER_FORK_WORKERS=1``, ``fleetledger.forked``), so a scenario costs about a fifth of
the CPU of exec'd processes. Each child re-arms the fault points from its own environment and
dies by its own SIGKILL; every run of a scenario is a new child that sees only the files.
``EXEC_PERCENT`` of the scenarios (by a hash of their id) and every changed-code run start their
processes by exec, as a user's are; ``--no-fork`` execs everything.

Workloads: ``synthetic`` (4 tasks x 5 steps, 2 workers, one effect per task into a target
that does not deduplicate), ``fleet10`` (10 tasks x 3 steps, 10 workers, effects), ``scan``
(the scan job on the embedded demo repository, 2 workers; its export is an effect).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import copy
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fleetledger.jobs.base import task_name  # noqa: E402
from fleetledger.jobs.synthetic import deliveries  # noqa: E402
from fleetledger.ledger import open_storage  # noqa: E402
from fleetledger.ledger.damage import FRAME_HEADER, scan_wal  # noqa: E402
from fleetledger.replay import fold  # noqa: E402
from fleetledger.verify import verify_records  # noqa: E402
from fleetledger.forked import FORK_ENV  # noqa: E402
from forkserver import ForkServer  # noqa: E402  (bench/, the script's folder)

DEMO = ROOT / "fleetledger" / "demo_repo"
FAMILIES = ("kill", "enospc", "nul", "code")
PAGE = 4096
CHANGED_FILE = {"synthetic": "jobs/synthetic.py", "fleet10": "jobs/synthetic.py", "scan": "models/offline.py"}
"""The file a ``code`` scenario edits, per workload: the job's code, or the scan's analyst."""
RECOVERY_EVENTS = 10
"""A crash during recovery is a kill at one of the recovery's first this many events (any
point, any process, counted across them): every recovery reaches that many, so the second
crash fires (a kill at a named point fired in about half of the scenarios: the recovery of a
run killed late never passes the points of adopting leases)."""


LEDGER_RETRY = "0.3"
"""Seconds a failing ledger write is retried before the run halts (``--ledger-retry``; the
product's default is 10): a full disk that stays full is met the same way (retried with
backoff, then halted), in a thirtieth of the time."""


@dataclass(frozen=True)
class Workload:
    name: str
    argv: tuple[str, ...]
    has_target: bool
    preload: tuple[str, ...] = ()
    """Modules the fork server imports besides its own list: what the workers import for their
    first task."""


WORKLOADS = {
    "synthetic": Workload("synthetic", ("-m", "fleetledger.jobs.synthetic", "{ws}", "--tasks", "4", "--steps", "5",
                                        "--workers", "2", "--target", "{target}", "--lease-ttl", "5",
                                        "--ledger-retry", LEDGER_RETRY), True),
    "fleet10": Workload("fleet10", ("-m", "fleetledger.jobs.synthetic", "{ws}", "--name", "fleet10", "--tasks", "10",
                                    "--steps", "3", "--workers", "10", "--target", "{target}", "--lease-ttl", "5",
                                    "--ledger-retry", LEDGER_RETRY), True),
    "scan": Workload("scan", ("-m", "fleetledger.cli", "scan", str(DEMO), "--workspace", "{ws}", "--workers", "2",
                              "--no-progress", "--lease-ttl", "5", "--ledger-retry", LEDGER_RETRY), False,
                     ("fleetledger.jobs.scan.detect", "fleetledger.jobs.scan.export", "fleetledger.analysis.engine")),
}


def _argv(workload: Workload, ws: Path, target: Path) -> list[str]:
    return [sys.executable, *(a.format(ws=ws, target=target) for a in workload.argv)]


def _run(workload: Workload, ws: Path, target: Path, *, fault: str | None = None, once: Path | None = None,
         counter: Path | None = None, log: Path | None = None, timeout_s: float = 300,
         code_root: Path = ROOT, extra: tuple[str, ...] = (), argv: list[str] | None = None,
         stderr: Path | None = None, forked: bool = False) -> int:
    """Runs the workload's command (or ``argv``) once; returns its exit status (minus the
    signal's number when a signal ended it; -999 when it was killed after ``timeout_s``).
    ``forked``: in a fork of this thread's fork server, its workers forked too
    (``bench/forkserver.py``), unless the run needs another copy of the code, which only exec
    can run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETLEDGER_FAULT") and k != FORK_ENV}
    env["FLEETLEDGER_SANDBOX"] = "none"  # the fault files and counters live on the host
    if fault:
        env["FLEETLEDGER_FAULT"] = fault
    if once:
        env["FLEETLEDGER_FAULT_ONCE"] = str(once)
    if log:
        env["FLEETLEDGER_FAULT_LOG"] = str(log)
    if counter:
        env["FLEETLEDGER_FAULT_COUNTER"] = str(counter)
    command = argv or _argv(workload, ws, target)
    if forked and code_root == ROOT and command[1] == "-m":
        env[FORK_ENV] = "1"
        return _fork_server(workload).run([*command[2:], *extra], env=env, cwd=code_root, stderr=stderr,
                                          timeout_s=timeout_s)
    sink = open(stderr, "w") if stderr else subprocess.DEVNULL
    proc = subprocess.Popen(command + list(extra), env=env, stdout=subprocess.DEVNULL,
                            stderr=sink, cwd=str(code_root))
    if stderr:
        sink.close()
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return -999


_local = threading.local()
_servers: list[ForkServer] = []
_servers_lock = threading.Lock()
PROGRESS_EVERY = 1000
"""A progress line (scenarios done, rate) every this many scenarios."""
FORKING = True
"""False (``--no-fork``): every process is started by exec."""
EXEC_PERCENT = 2
"""The share of scenarios (by a hash of their id, so a scenario always runs the same way) whose
processes are started by exec, as a user's are, rather than forked from the fork server."""


def _fork_server(workload: Workload) -> ForkServer:
    """This thread's fork server for the workload, started at its first use."""
    server = getattr(_local, workload.name, None)
    if server is None:
        server = ForkServer(workload.preload)
        setattr(_local, workload.name, server)
        with _servers_lock:
            _servers.append(server)
    return server


def runs_forked(scenario_id: str) -> bool:
    """Whether the scenario's processes are forked (all but ``EXEC_PERCENT`` percent of them)."""
    return int(hashlib.sha256(scenario_id.encode()).hexdigest(), 16) % 100 >= EXEC_PERCENT


def _records(ws: Path) -> list[Any]:
    if not (ws / "ledger.sqlite3").exists():
        return []
    with open_storage(f"sqlite:///{ws / 'ledger.sqlite3'}") as store:
        return list(store.read())


def _records_untouched(ws: Path, scratch: Path) -> list[Any]:
    """The records of the ledger as a crash left it, read from a copy: opening the ledger itself
    would checkpoint its WAL into the main file when the connection closes, and recovery (or
    the damage of a ``nul`` scenario) must meet the files exactly as the crash left them."""
    scratch.mkdir()
    for path in ws.glob("ledger.sqlite3*"):
        shutil.copyfile(path, scratch / path.name)
    return _records(scratch)


def outputs(workload: Workload, ws: Path, target: Path) -> dict[str, Any]:
    """The final outputs of a run, as derived from its ledger (and, for the scan, its reports).

    The ledger may hold more than one run: a run after a salvage that kept nothing of the last
    one, or a finished scan started again under changed code. The outputs are the last run's
    (the row counts the runs, ``runs``)."""
    records = _records(ws)
    if records:
        last = records[-1].run_id
        records = [r for r in records if r.run_id == last]
    view = fold(records) if records else None
    if workload.name == "scan":
        path = ws / "findings.sarif"
        sarif = json.loads(path.read_text()) if path.exists() else None
        if sarif is not None:
            for run in sarif["runs"]:
                run.get("properties", {}).pop("runId", None)
                # The code versions that contributed: one more after an upgrade (a ``code`` scenario), by design.
                run.get("properties", {}).pop("code", None)
                for inv in run.get("invocations", []):
                    inv.pop("startTimeUtc", None)
        return {"state": view.state if view else None, "sarif": sarif}
    # Step results of the tasks in the plan, by the task's planned name and the step's name
    # (an upgrade plans a task again as ``<id>@<seq>`` and sets the old one's results aside).
    steps = {f"{task_name(r.task)}/{r.key.split('/', 1)[1].rsplit('@', 1)[0]}": r.payload["result"]
             for r in records if r.kind == "step.done" and view is not None and view.tasks[r.task].status != "superseded"}
    tickets = sorted(deliveries(target)) if workload.has_target else []
    done = sorted(k for k, e in (view.effects.items() if view else ()) if e.get("done") is not None)
    return {"state": view.state if view else None, "steps": steps, "tickets": tickets, "effects_done": done}


def reference(workload: Workload, base: Path) -> tuple[dict[str, Any], dict[str, int], int]:
    """Runs the workload uninterrupted, logging every fault point it passes.

    Returns:
        (outputs, {point: highest occurrence count in one process}, events: every point
        reached by every process, which ``*:K`` kills are drawn from).
    """
    ws, target, log = base / "ref-ws", base / "ref-target", base / "points.log"
    code = _run(workload, ws, target, log=log, forked=FORKING)  # counted as most scenarios run
    if code != 0:
        raise SystemExit(f"the uninterrupted {workload.name} run failed (exit {code})")
    counts: dict[tuple[str, str], int] = {}
    for line in log.read_text().splitlines():
        pid, name = line.split(" ", 1)
        counts[(pid, name)] = counts.get((pid, name), 0) + 1
    points: dict[str, int] = {}
    for (_, name), n in counts.items():
        points[name] = max(points.get(name, 0), n)
    return outputs(workload, ws, target), points, sum(counts.values())


def listing_reference(out: Path, points: dict[str, int], events: int) -> tuple[dict[str, int], int]:
    """The fault-point counts that a result file's scenarios are listed from.

    The first run that writes ``out`` saves its reference counts beside it
    (``<out stem>.reference.json``); a later run with the same ``out`` lists its scenarios from
    the saved counts, not from its own reference run. Two uninterrupted runs pass a point a
    slightly different number of times, so without this a resumed run would draw other random
    kills (``W:event:SEED:I:K``) and run almost everything again.

    Args:
        out: the result file (JSON lines).
        points, events: this run's reference counts (see ``reference``).
    Returns:
        (points, events) to list scenarios from: the saved ones if ``out`` has them.
    """
    saved = out.with_name(out.stem + ".reference.json")
    if saved.exists():
        data = json.loads(saved.read_text())
        print(f"{out.name}: scenarios listed from the reference counts saved in {saved.name}", flush=True)
        return {str(k): int(v) for k, v in data["points"].items()}, int(data["events"])
    tmp = saved.with_name(saved.name + ".tmp")
    tmp.write_text(json.dumps({"points": points, "events": events}, sort_keys=True))
    os.replace(tmp, saved)
    return points, events


def scenarios(workload: Workload, points: dict[str, int], *, random_count: int, seed: int,
              max_occurrences: int, families: tuple[str, ...] = FAMILIES, variants: int = 20,
              events: int = 0) -> list[dict[str, Any]]:
    """The scenarios of ``families`` (see the module's docstring), deterministic for a seed:
    every (point, occurrence) kill with and without a second crash during recovery plus
    ``random_count`` kills at random events (K of ``events``); every (point, occurrence) full disk; ``variants``
    damaged ledgers and ``variants`` code changes, each after a kill drawn from the kills."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    kills = [(point, n) for point in sorted(points) for n in range(1, min(points[point], max_occurrences) + 1)]
    if "kill" in families:
        for point, n in kills:
            base = {"id": f"{workload.name}:{point}:{n}", "family": "kill", "fault": f"{point}:{n}:kill"}
            out.append(base)
            again = rng.randint(1, RECOVERY_EVENTS)
            out.append({**base, "id": base["id"] + f"+event{again}", "recovery_fault": f"*:{again}:kill",
                        "recovery_counter": True})
        for i in range(random_count if events else 0):
            k = rng.randint(1, events)
            out.append({"id": f"{workload.name}:event:{seed}:{i}:{k}", "family": "kill", "fault": f"*:{k}:kill",
                        "counter": True})
    if "enospc" in families:
        out += [{"id": f"{workload.name}:enospc:{point}:{n}", "family": "enospc", "fault": f"{point}:{n}:enospc+"}
                for point, n in kills]
    for family in ("nul", "code"):
        if family not in families:
            continue
        picks = random.Random(f"{seed}:{family}")
        seen = set()
        for _ in range(variants):
            point, n = picks.choice(kills)
            scenario = f"{workload.name}:{family}:{point}:{n}"
            if family == "nul":  # the id says all of it, so it replays whatever the reference run counted
                scenario += f":{picks.choice(['ledger.sqlite3', 'ledger.sqlite3-wal'])}:{picks.random():.4f}"
            if scenario not in seen:
                seen.add(scenario)
                out.append(spec_from_id(scenario))
    return out


def spec_from_id(scenario: str) -> dict[str, Any] | None:
    """The scenario an id names: every id says all of it (``W:event:SEED:I:K``,
    ``W:POINT:N[+eventK]``, ``W:enospc:POINT:N``, ``W:nul:POINT:N:FILE:AT``, ``W:code:POINT:N``);
    None for an id that names none. So a scenario replays even when the reference run now
    counts other events."""
    workload, _, rest = scenario.partition(":")
    if rest.startswith("event:"):
        k = rest.rsplit(":", 1)[1]
        return {"id": scenario, "family": "kill", "fault": f"*:{k}:kill", "counter": True} if k.isdigit() else None
    if rest.startswith("enospc:"):
        point, _, n = rest.removeprefix("enospc:").rpartition(":")
        return {"id": scenario, "family": "enospc", "fault": f"{point}:{n}:enospc+"} if n.isdigit() else None
    family, _, fields = rest.partition(":")
    if family in ("nul", "code"):
        parts = fields.rsplit(":", 3 if family == "nul" else 1)  # a point's name may hold a colon
        if len(parts) != (4 if family == "nul" else 2) or not parts[1].isdigit():
            return None
        spec = {"id": scenario, "family": family, "fault": f"{parts[0]}:{parts[1]}:kill"}
        if family == "nul":
            try:
                spec.update(file=parts[2], at=float(parts[3]))
            except ValueError:
                return None
            if parts[2] not in ("ledger.sqlite3", "ledger.sqlite3-wal") or not 0 <= spec["at"] < 1:
                return None
        return spec
    if not workload:
        return None
    kill, _, again = rest.partition("+")
    point, _, n = kill.rpartition(":")
    if not n.isdigit() or (again and not again.removeprefix("event").isdigit()):
        return None
    spec = {"id": scenario, "family": "kill", "fault": f"{point}:{n}:kill"}
    return {**spec, "recovery_fault": f"*:{again.removeprefix('event')}:kill", "recovery_counter": True} if again else spec


def _fold_at(records: list[Any], seq: int) -> Any:
    upto = [r for r in records if r.seq <= seq]
    return fold(upto) if upto else None


def state_contradicts(ws: Path) -> int:
    """1 when the run-state file names a ledger sequence number and the ledger, folded up to it,
    says another state (the file is a projection of the ledger at that number), else 0."""
    path = ws / "sprint-plan-state.json"
    if not path.exists():
        return 0
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return 1
    view = _fold_at(_records(ws), int(data["ledger"]["seq"]))
    return int(view is not None and view.state != data["state"])


def damage(ws: Path, name: str, at: float) -> tuple[str, bool]:
    """Writes 4 KiB of NUL bytes over one page-sized block of ``ws/name`` (``at`` in [0, 1)
    picks it). Returns what it did, and whether the block covers a frame of the WAL's last
    transaction: the WAL's checksums chain from frame to frame, so nothing after a damaged frame
    can be verified, and damage there cannot be told from a commit torn by the crash (SQLite and
    ``damage.scan_wal`` both take it for one); its records are counted apart."""
    path = ws / name
    size = path.stat().st_size if path.exists() else 0
    if size < PAGE:
        return "none", False
    block = int(at * (size // PAGE))
    torn_like = False
    if name.endswith("-wal"):
        frames = scan_wal(path).frames
        commits = [f.index for f in frames if f.intact and f.commit]
        if commits:
            first = frames[commits[-2] + 1] if len(commits) > 1 else frames[0]
            last = frames[commits[-1]]
            torn_like = block * PAGE < last.offset + FRAME_HEADER + len(last.data) and first.offset < (block + 1) * PAGE
    with open(path, "r+b") as f:
        f.seek(block * PAGE)
        f.write(b"\0" * PAGE)
        f.flush()
        os.fsync(f.fileno())
    return f"{name}@{block * PAGE}", torn_like


def changed_code(workload: Workload, base: Path) -> Path:
    """A copy of the package with the workload's ``CHANGED_FILE`` edited; returns its root."""
    root = base / "changed"
    shutil.copytree(ROOT / "fleetledger", root / "fleetledger",
                    ignore=shutil.ignore_patterns("__pycache__", "demo_repo"))
    path = root / "fleetledger" / CHANGED_FILE[workload.name]
    path.write_text(path.read_text() + "\n# changed between the crash and the resume\n")
    return root


def _finish(workload: Workload, ws: Path, target: Path, **kwargs: Any) -> int:
    """Runs the same command until it ends other than by SIGKILL (at most 4 times)."""
    for _ in range(4):
        code = _run(workload, ws, target, **kwargs)
        if code != -signal.SIGKILL:
            break
    return code


def run_scenario(workload: Workload, spec: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """Runs one scenario in a fresh temporary folder and checks its final outputs."""
    family = spec.get("family", "kill")
    fork = FORKING and runs_forked(spec["id"])
    with tempfile.TemporaryDirectory(prefix="chaos-") as tmp:
        base = Path(tmp)
        ws, target = base / "ws", base / "target"
        deaths = wrong_exit = contradicts = reported = 0
        torn_like = False
        code = _run(workload, ws, target, fault=spec.get("fault"), once=base / "once1",
                    counter=base / "counter1" if spec.get("counter") else None, forked=fork)
        fired = {"fired": int((base / "once1").exists())} if spec.get("fault") else {}
        deaths += code == -signal.SIGKILL
        first_exit = code
        if family == "enospc":
            wrong_exit += code not in (0, 75)
            contradicts += state_contradicts(ws)
        snapshot = [(r.seq, r.hash) for r in _records_untouched(ws, base / "snapshot")]
        kept_upto = None
        finish: dict[str, Any] = {"forked": fork}
        if spec.get("recovery_fault") and first_exit != 0:  # a run that finished has nothing to recover
            code = _run(workload, ws, target, fault=spec["recovery_fault"], once=base / "once2",
                        counter=base / "counter2" if spec.get("recovery_counter") else None, forked=fork)
            deaths += code == -signal.SIGKILL
            fired["recovery_fired"] = int((base / "once2").exists())
        if family == "nul":
            did, torn_like = damage(ws, spec["file"], spec["at"])
            code = _run(workload, ws, target, stderr=base / "after-damage.err", forked=fork)
            err = (base / "after-damage.err").read_text(errors="replace")
            if code in (65, 1) and "Traceback" not in err:
                salvaged = _run(workload, ws, target, forked=fork, stderr=base / "salvage.err",
                                argv=[sys.executable, "-m", "fleetledger.cli", "salvage", "--workspace", str(ws)])
                report = ws / "salvage.json"
                wrong_exit += salvaged != 0 or not report.exists()
                kept_upto = json.loads(report.read_text())["kept"][1] if report.exists() else 0
            elif code not in (0, -signal.SIGKILL):
                wrong_exit += 1
            spec = {**spec, "damage": did}
        if family == "code":
            kinds = {r.kind for r in _records_untouched(ws, base / "before-code")}
            started, finished = bool(kinds & {"run.started", "run.resumed"}), "run.finished" in kinds
            root = changed_code(workload, base)
            finish = {"code_root": root}  # another copy of the code: exec
            code = _run(workload, ws, target, code_root=root)
            if started and not finished:
                wrong_exit += code != 2 or len(_records_untouched(ws, base / "after-refusal")) != len(snapshot)
                extra = ("--upgrade",)
                argv = None
                if workload.name == "scan":  # the scan's upgrade is `resume --upgrade`
                    argv = [sys.executable, "-m", "fleetledger.cli", "resume", "--workspace", str(ws), "--workers", "2",
                            "--no-progress", "--lease-ttl", "5", "--ledger-retry", LEDGER_RETRY, "--upgrade"]
                    extra = ()
                code = _run(workload, ws, target, code_root=root, extra=extra, argv=argv)
                deaths += code == -signal.SIGKILL
        code = _finish(workload, ws, target, **finish)
        final = _records(ws)
        deaths += sum(1 for r in final if r.kind == "worker.exited" and "SIGKILL" in r.why)
        present = {(r.seq, r.hash) for r in final}
        missing = [seq for seq, h in snapshot if (seq, h) not in present]
        reported = sum(1 for seq in missing if kept_upto is not None and seq > kept_upto)
        torn = len(missing) - reported if family == "nul" and torn_like and kept_upto is None else 0
        got = outputs(workload, ws, target)
        dup = sum(n - 1 for n in deliveries(target).values() if n > 1) if workload.has_target else 0
        return {"id": spec["id"], "family": family, "first_exit": first_exit, "exit": code, "deaths": deaths, "lost": len(missing) - reported - torn,
                "reported_lost": reported, "torn_like_lost": torn, "duplicated_effects": dup, "divergent": int(got != expected),
                **({"diverged": sorted(k for k in expected if got.get(k) != expected[k])} if got != expected else {}),
                "verify_failed": int(not verify_records(final).ok), "wrong_exit": wrong_exit,
                "state_contradicts": contradicts, "records": len(final), "runs": len({r.run_id for r in final}),
                # A crash (or a full disk) is recovered by resuming the run, never by starting another.
                "restarted": max(0, len({r.run_id for r in final}) - 1) if family in ("kill", "enospc") else 0, **fired,
                **({"damage": spec["damage"]} if "damage" in spec else {})}


COUNTS = ("deaths", "lost", "duplicated_effects", "divergent", "verify_failed", "wrong_exit", "state_contradicts",
          "reported_lost", "torn_like_lost", "restarted")


def summarise(paths: list[Path]) -> dict[str, int]:
    totals = {"scenarios": 0, "unfinished": 0, "faults": 0, "fired": 0, "recovery_faults": 0, "recovery_fired": 0,
              **{key: 0 for key in COUNTS}}
    for path in paths:
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            totals["scenarios"] += 1
            for key in COUNTS:
                totals[key] += row.get(key, 0)
            totals["unfinished"] += row["exit"] != 0
            for key, armed in (("fired", "faults"), ("recovery_fired", "recovery_faults")):
                if key in row:
                    totals[armed] += 1
                    totals[key] += row[key]
    return totals


def _print(totals: dict[str, int]) -> None:
    print(f"scenarios run: {totals['scenarios']}; process deaths injected: {totals['deaths']}; "
          f"lost records: {totals['lost']}; duplicated effects: {totals['duplicated_effects']}; "
          f"divergent final outputs: {totals['divergent']}; ledgers failing verify: {totals['verify_failed']}; "
          f"runs not finished: {totals['unfinished']}; wrong exits: {totals['wrong_exit']}; "
          f"run-state files contradicting the ledger: {totals['state_contradicts']}; "
          f"crashes recovered by a new run instead of a resume: {totals['restarted']}; "
          f"records lost to damage and reported by salvage: {totals['reported_lost']}; "
          f"records of a last WAL transaction with a damaged frame (taken for a torn write): "
          f"{totals['torn_like_lost']}; faults that fired: {totals['fired']} of {totals['faults']}; "
          f"crashes during recovery that fired: {totals['recovery_fired']} of {totals['recovery_faults']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", default="synthetic", choices=[*WORKLOADS, "all"])
    parser.add_argument("--jobs", type=int, default=2, help="Scenarios run at once.")
    parser.add_argument("--limit", type=int, default=None, help="Run at most this many scenarios (a CI subset).")
    parser.add_argument("--shard", default="0/1", help="K/N: run the scenarios whose index mod N is K.")
    parser.add_argument("--out", default=None, help="Result file (JSON lines); default bench/results/chaos-<workload>.jsonl.")
    parser.add_argument("--random", type=int, default=20, help="Kills at random events per workload.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-occurrences", type=int, default=40, help="Highest occurrence of a point to kill at.")
    parser.add_argument("--sample", type=int, default=None,
                        help="Run a random sample of this many scenarios (a CI subset over every kind).")
    parser.add_argument("--sample-seed", type=int, default=None, help="The sample's seed (default: drawn and printed).")
    parser.add_argument("--only", default=None, help="Comma-separated scenario ids: run these (again) only.")
    parser.add_argument("--family", default=",".join(FAMILIES), help="Comma-separated families of scenarios.")
    parser.add_argument("--variants", type=int, default=20, help="Damaged-ledger and changed-code scenarios each.")
    parser.add_argument("--sum", nargs="*", default=None, help="Only add up these result files.")
    parser.add_argument("--no-fork", action="store_true",
                        help="Start every process by exec (default: all but a few percent of the scenarios fork "
                             "their processes from a fork server that imported the code once).")
    args = parser.parse_args()
    if args.sum is not None:
        _print(summarise([Path(p) for p in args.sum]))
        return 0
    global FORKING
    FORKING = not args.no_fork
    try:
        return _main(args, parser)
    finally:
        with _servers_lock:
            for server in _servers:
                server.close()


def _main(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    shard, shards = (int(x) for x in args.shard.split("/"))
    families = tuple(f for f in args.family.split(",") if f)
    if not set(families) <= set(FAMILIES):
        parser.error(f"--family takes {', '.join(FAMILIES)}")
    names = list(WORKLOADS) if args.workload == "all" else [args.workload]
    totals_paths = []
    for name in names:
        workload = WORKLOADS[name]
        out = Path(args.out) if args.out else ROOT / "bench" / "results" / f"chaos-{name}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        done = {json.loads(line)["id"] for line in out.read_text().splitlines() if line.strip()} if out.exists() else set()
        with tempfile.TemporaryDirectory(prefix="chaos-ref-") as tmp:
            expected, points, events = reference(workload, Path(tmp))
        points, events = listing_reference(out, points, events)
        specs = [s for i, s in enumerate(scenarios(workload, points, random_count=args.random, seed=args.seed,
                                                   max_occurrences=args.max_occurrences, families=families,
                                                   variants=args.variants, events=events)) if i % shards == shard]
        if args.only:
            by_id = {s["id"]: s for s in specs}
            todo = [by_id.get(i) or spec_from_id(i) for i in args.only.split(",") if i.startswith(f"{name}:")]
            missing = [i for i, s in zip(args.only.split(","), todo) if s is None]
            if missing:
                parser.error(f"--only: no scenario {', '.join(missing)} with --seed {args.seed} (run it with the "
                             "--seed, --random and --variants it was listed under)")
        else:
            todo = [s for s in specs if s["id"] not in done]
        if args.sample and len(todo) > args.sample:
            sample_seed = args.sample_seed if args.sample_seed is not None else random.SystemRandom().randrange(10**9)
            print(f"{name}: sample of {args.sample} drawn with --sample-seed {sample_seed}", flush=True)
            order = {id(s): i for i, s in enumerate(specs)}  # specs.index per pick took minutes for 100k
            todo = sorted(random.Random(sample_seed).sample(todo, args.sample),
                          key=lambda s: order.get(id(s), len(order)))
        todo = todo[: args.limit]
        print(f"{name}: {len(points)} fault points, {len(specs)} scenarios in shard {shard}/{shards}, "
              f"{len(specs) - len([s for s in specs if s['id'] not in done])} done before, running {len(todo)}",
              flush=True)
        started = time.monotonic()
        with open(out, "a", encoding="utf-8") as sink, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(run_scenario, workload, copy.deepcopy(s), expected) for s in todo]
            for count, future in enumerate(concurrent.futures.as_completed(futures), 1):
                row = future.result()
                if count % PROGRESS_EVERY == 0:
                    elapsed = time.monotonic() - started
                    print(f"  {name}: {count} of {len(todo)} in {elapsed:.0f} s ({count / elapsed:.1f}/s)", flush=True)
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                if (row["lost"] or row["duplicated_effects"] or row["divergent"] or row["verify_failed"] or row["exit"]
                        or row["wrong_exit"] or row["state_contradicts"] or row["restarted"]):
                    print(f"  PROBLEM {row}\n    replay: python bench/chaos.py --workload {name} --seed {args.seed} "
                          f"--family {row['family']} --only {row['id']} --out /tmp/replay.jsonl", flush=True)
        elapsed = time.monotonic() - started
        print(f"{name}: {len(todo)} scenarios in {elapsed:.0f} s ({len(todo) / max(elapsed, 1e-9):.1f}/s, --jobs "
              f"{args.jobs}; {'all by exec' if not FORKING else f'{100 - EXEC_PERCENT}% forked'})", flush=True)
        totals_paths.append(out)
    totals = summarise(totals_paths)
    _print(totals)
    bad = (totals["lost"] + totals["duplicated_effects"] + totals["divergent"] + totals["verify_failed"]
           + totals["unfinished"] + totals["wrong_exit"] + totals["state_contradicts"] + totals["restarted"])
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
