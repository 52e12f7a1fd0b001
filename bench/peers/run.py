"""The ledger against its peers, on one machine, in one run: every figure a ratio to the floor and
to each peer measured in the same run, interleaved rep by rep.

    python bench/peers/setup.py                 # once: the peers' own virtualenv
    python bench/peers/run.py [--reps 5] [--steps 500] [--fanout 10x200] [--steady 2000] [--replay 10000]
                              [--big 500000] [--only steps,resume,replay,fanout] [--json FILE]

Systems: fleetledger (this checkout, ``open_storage().append`` of a step's intent and result;
and through the ``Coordinator`` with worker processes), durabl, DBOS Transact and LangGraph's
SQLite saver (each at its default durability and at fsync-per-commit where it has both), the
floor (a one-row INSERT transaction in SQLite, WAL + synchronous=FULL) and the disk weather
(4 KiB ``write+fsync``). Adapters are in ``adapters/`` (their docstrings say what a step is in
each). Each measurement runs in a fresh process; each block runs its systems once per rep in
an order rotated by one per rep; the weather (the probe and the floor) is measured before each
block. Workloads:

* steps: N sequential durable no-op steps; microseconds per step.
* resume: N steps of ``--work-us`` CPU each, the process SIGKILLed once half are recorded,
  then a fresh process finishes the run; seconds of the resume.
* replay: a history of ``--replay`` steps (and ``--big`` steps when given), built once, then
  rebuilt from record 1 in a fresh process; seconds.
* fanout: P processes x S steps on one store (direct), and fleetledger's P workers through the
  coordinator; durable steps per second. The coordinator is also measured in its steady state
  (``--steady`` steps a worker: the results recorded while every worker held a task, per second),
  since with 200 steps a worker the first worker is done before the last one has started.

A peer that is not installed, or has no such workload, is shown as such, never measured some
other way.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ADAPTERS = HERE / "adapters"
DEFAULT_VENV = ROOT / ".cache" / "peers-venv"


@dataclass(frozen=True)
class System:
    """One system under test.

    Attributes:
        name: As shown in the tables.
        adapter: The adapter script in ``adapters/``.
        peer: True for a peer (run on the peers' virtualenv's interpreter).
        durability: ``default`` or ``fsync`` (passed to the adapter).
        done_sql: How many steps its store holds (the resume workload kills it at half).
        store: Its store's file name in the measurement's folder.
    """

    name: str
    adapter: str
    peer: bool = True
    durability: str = "default"
    done_sql: str = ""
    store: str = ""


FLEET = System("fleetledger", "fleetledger_peer.py", peer=False, done_sql="SELECT count(*) FROM records WHERE kind = 'step.done'",
               store="ledger.sqlite3")
FLOOR = System("floor: SQLite WAL+FULL insert txn", "floor.py", peer=False)
PROBE = System("write+fsync 4 KiB", "floor.py", peer=False)
DURABL_SQL = "SELECT count(*) FROM events WHERE kind = 'STEP_COMPLETED'"
LANGGRAPH_SQL = "SELECT count(*) FROM checkpoints WHERE thread_id = 'bench'"
PEERS = [
    System("durabl (NORMAL, default)", "durabl_peer.py", done_sql=DURABL_SQL, store="durabl.db"),
    System("durabl (synchronous=FULL)", "durabl_peer.py", durability="fsync", done_sql=DURABL_SQL, store="durabl.db"),
    System("DBOS (SQLite, default = FULL)", "dbos_peer.py", done_sql="SELECT count(*) FROM operation_outputs", store="dbos.sqlite"),
    System("LangGraph (durability=async, default)", "langgraph_peer.py", done_sql=LANGGRAPH_SQL, store="langgraph.sqlite"),
    System("LangGraph (durability=sync)", "langgraph_peer.py", durability="fsync", done_sql=LANGGRAPH_SQL,
           store="langgraph.sqlite"),
]


@dataclass
class Row:
    """The measurements of one system in one block."""

    system: System
    values: list[float] = field(default_factory=list)
    note: str = ""


class Runner:
    """Runs adapters in fresh processes under one scratch folder."""

    def __init__(self, scratch: Path, peer_python: Path | None) -> None:
        self.scratch = scratch
        self.peer_python = peer_python
        self.count = 0

    def folder(self) -> Path:
        self.count += 1
        path = self.scratch / f"m{self.count:04d}"
        path.mkdir(parents=True)
        return path

    def argv(self, system: System, workload: str, folder: Path, **options: Any) -> list[str] | None:
        python = self.peer_python if system.peer else Path(sys.executable)
        if python is None:
            return None
        argv = [str(python), str(ADAPTERS / system.adapter), workload, "--dir", str(folder),
                "--durability", system.durability]
        for name, value in options.items():
            argv += [f"--{name.replace('_', '-')}", str(value)]
        return argv

    def measure(self, system: System, workload: str, folder: Path, *, timeout_s: float = 3600,
                **options: Any) -> dict[str, Any]:
        """Runs one adapter to its end; returns its JSON line, or ``{"not_measured": why}``."""
        argv = self.argv(system, workload, folder, **options)
        if argv is None:
            return {"not_measured": "not installed (run bench/peers/setup.py)"}
        env = {**os.environ, "PYTHONPATH": ""}
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=env, cwd=folder)
        except subprocess.TimeoutExpired:
            return {"not_measured": f"timed out after {timeout_s:.0f} s"}
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if lines:
            result = json.loads(lines[-1])
            if done.returncode == 0 or "not_measured" in result:
                return result
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"not_measured": f"failed (exit {done.returncode}): {tail[:160]}"}


def weather(runner: Runner, reps: int = 3) -> dict[str, float]:
    """The disk weather now: median us of a 4 KiB write+fsync and of the floor's transaction."""
    probe, floor = [], []
    for _ in range(reps):
        p = runner.measure(PROBE, "probe", runner.folder(), n=200)
        f = runner.measure(FLOOR, "steps", runner.folder(), n=200)
        probe.append(p["seconds"] / 200 * 1e6)
        floor.append(f["seconds"] / 200 * 1e6)
    return {"fsync_us": statistics.median(probe), "floor_us": statistics.median(floor)}


def rotated(items: list[Any], rep: int) -> list[Any]:
    k = rep % len(items)
    return items[k:] + items[:k]


def stats(values: list[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), max(values)


def table(title: str, unit: str, rows: list[Row], *, floor: float | None, lower_is_better: bool,
          sky: dict[str, float]) -> str:
    """A Markdown table: min / median / max per system, ratios of medians to the floor and to
    fleetledger (>1: that many times slower than fleetledger)."""
    lines = [f"### {title}", f"disk weather before the block: write+fsync {sky['fsync_us']:.0f} us, "
                             f"floor transaction {sky['floor_us']:.0f} us", "",
             f"| system | min | median | max ({unit}) | x floor | x fleetledger | note |", "|---|---:|---:|---:|---:|---:|---|"]
    fleet = next((statistics.median(r.values) for r in rows if r.system is FLEET and r.values), None)
    for row in rows:
        if not row.values:
            lines.append(f"| {row.system.name} | - | - | - | - | - | {row.note or 'not measured'} |")
            continue
        lo, mid, hi = stats(row.values)
        vs_floor = f"{mid / floor:.2f}" if floor and lower_is_better else (f"{floor / mid:.2f}" if floor else "")
        vs_fleet = ""
        if fleet:
            vs_fleet = f"{mid / fleet:.2f}" if lower_is_better else f"{fleet / mid:.2f}"
        lines.append(f"| {row.system.name} | {_num(lo)} | {_num(mid)} | {_num(hi)} | {vs_floor} | {vs_fleet} | {row.note} |")
    return "\n".join(lines)


def _num(value: float) -> str:
    """Three significant digits, without exponents (1,490 rather than 1.49e+03)."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def block_steps(runner: Runner, systems: list[System], reps: int, n: int) -> str:
    sky = weather(runner)
    rows = {s.name: Row(s) for s in [FLOOR, *systems]}
    cpu = {s.name: Row(s) for s in [FLOOR, *systems]}
    for rep in range(reps):
        for system in rotated([FLOOR, *systems], rep):
            result = runner.measure(system, "steps", runner.folder(), n=n)
            _add(rows[system.name], result, lambda r: r["seconds"] / r["steps"] * 1e6)
            _add(cpu[system.name], result, lambda r: r["cpu_seconds"] / r["steps"] * 1e6)
    wall = table(f"Sequential durable no-op steps ({n} a process, {reps} reps)", "us/step", list(rows.values()),
                 floor=statistics.median(rows[FLOOR.name].values), lower_is_better=True, sky=sky)
    spent = table("The same steps' CPU (the process's, user + system: the kernel's side of an fsync included)",
                  "CPU us/step", list(cpu.values()), floor=statistics.median(cpu[FLOOR.name].values),
                  lower_is_better=True, sky=sky)
    return f"{wall}\n\n{spent}"


def block_resume(runner: Runner, systems: list[System], reps: int, n: int, work_us: int) -> str:
    sky = weather(runner)
    rows = {s.name: Row(s) for s in systems}
    rows[FLEET.name].note = "a coordinator and 4 sandboxed worker processes (the peers run steps in their own process)"
    for rep in range(reps):
        for system in rotated(systems, rep):
            folder = runner.folder()
            argv = runner.argv(system, "start", folder, n=n, work_us=work_us)
            if argv is None:
                rows[system.name].note = "not installed"
                continue
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder,
                                    env={**os.environ, "PYTHONPATH": ""}, start_new_session=True)
            killed_at = _kill_at_half(proc, folder / system.store, system.done_sql, n)
            result = runner.measure(system, "resume", folder, n=n, work_us=work_us)
            _add(rows[system.name], result, lambda r: r["seconds"])
            if killed_at is None:
                rows[system.name].note = "finished before half: no kill"
    return table(f"Resume after SIGKILL at half ({n} steps of {work_us} us CPU, {reps} reps)", "s", list(rows.values()),
                 floor=None, lower_is_better=True, sky=sky)


def _kill_at_half(proc: subprocess.Popen[bytes], store: Path, sql: str, n: int) -> int | None:
    """Kills ``proc`` (its whole session: workers too) once its store holds ``n // 2`` steps."""
    while proc.poll() is None:
        done = 0
        if store.exists():
            try:
                with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1) as conn:
                    done = conn.execute(sql).fetchone()[0]
            except sqlite3.Error:
                done = 0
        if done >= n // 2:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return done
        time.sleep(0.002)
    return None


def block_replay(runner: Runner, systems: list[System], reps: int, n: int) -> str:
    sky = weather(runner)
    rows = {s.name: Row(s) for s in systems}
    built: dict[str, Path] = {}
    for system in systems:
        folder = runner.folder()
        result = runner.measure(system, "build", folder, n=n, timeout_s=4 * 3600)
        if "not_measured" in result and not _dbos_built(system, folder):
            rows[system.name].note = result["not_measured"]
            continue
        built[system.name] = folder
        if result.get("records"):
            rows[system.name].note = f"{result['records']:,} records"
    for rep in range(reps):
        for system in rotated([s for s in systems if s.name in built], rep):
            copy = runner.folder()
            for item in built[system.name].iterdir():  # a fresh copy: DBOS's replay completes the workflow
                if item.is_file():
                    shutil.copy2(item, copy / item.name)
            result = runner.measure(system, "replay", copy, n=n)
            _add(rows[system.name], result, lambda r: r["seconds"])
            if result.get("records") and system is FLEET:
                rows[system.name].note = f"{result['records']:,} records; open (quick_check) {result['open_seconds']:.2f} s"
            shutil.rmtree(copy, ignore_errors=True)
    return table(f"Replay of a {n:,}-step history from record 1 ({reps} reps)", "s", list(rows.values()), floor=None,
                 lower_is_better=True, sky=sky)


def _dbos_built(system: System, folder: Path) -> bool:
    """DBOS's build ends its process inside the workflow (to leave it PENDING): no JSON line."""
    return system.adapter == "dbos_peer.py" and (folder / system.store).exists()


def block_fanout(runner: Runner, systems: list[System], reps: int, procs: int, n: int, steady_n: int) -> str:
    sky = weather(runner)
    coord = System("fleetledger through the coordinator", "fleetledger_peer.py", peer=False)
    long = System("fleetledger through the coordinator, steady", "fleetledger_peer.py", peer=False)
    coords = [coord, long] if steady_n else [coord]
    rows = {s.name: Row(s) for s in [*systems, *coords]}
    rows[coord.name].note = (f"{procs} sandboxed workers, one task each; timed by the records' own timestamps, "
                             "from the first assignment (the other workers still starting) to the last result")
    rows[long.name].note = (f"{procs} x {steady_n:,} steps; the results recorded while all {procs} workers held "
                            "a task, per second of that window")
    for rep in range(reps):
        for system in rotated([*systems, *coords], rep):
            folder = runner.folder()
            if system is coord:
                result = runner.measure(system, "coord", folder, n=n * procs, procs=procs)
                _add(rows[system.name], result, lambda r: r["steps"] / r["seconds"])
                continue
            if system is long:
                result = runner.measure(system, "coord", folder, n=steady_n * procs, procs=procs)
                if result.get("steady_steps") == 0:
                    result = {"not_measured": "the tasks never ran all at once: raise --steady"}
                _add(rows[system.name], result, lambda r: r["steady_steps"] / r["steady_seconds"])
                continue
            argvs = [runner.argv(system, "child", folder, n=n, id=i) for i in range(procs)]
            if argvs[0] is None:
                rows[system.name].note = "not installed"
                continue
            children = [subprocess.Popen(a, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=folder,  # type: ignore[arg-type]
                                         env={**os.environ, "PYTHONPATH": ""}) for a in argvs]
            outs = [c.communicate() for c in children]
            results = []
            for child, (out, err) in zip(children, outs):
                lines = [line for line in out.splitlines() if line.startswith("{")]
                results.append(json.loads(lines[-1]) if lines else {"not_measured": (err.strip().splitlines() or ["?"])[-1][:160]})
            bad = [r for r in results if "not_measured" in r]
            if bad:
                rows[system.name].note = bad[0]["not_measured"]
                continue
            span = max(r["end"] for r in results) - min(r["start"] for r in results)
            rows[system.name].values.append(sum(r["steps"] for r in results) / span)
    return table(f"Fan-out: {procs} processes x {n} steps on one store ({reps} reps)", "steps/s", list(rows.values()),
                 floor=None, lower_is_better=False, sky=sky)


def _add(row: Row, result: dict[str, Any], value) -> None:  # type: ignore[no-untyped-def]
    if "not_measured" in result:
        row.note = result["not_measured"]
    else:
        row.values.append(value(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--steps", type=int, default=500, help="Steps a process in the steps block.")
    parser.add_argument("--resume-steps", type=int, default=400)
    parser.add_argument("--work-us", type=int, default=1000, help="CPU per step in the resume block.")
    parser.add_argument("--replay", type=int, default=10_000, help="Steps of the replayed history.")
    parser.add_argument("--big", type=int, default=0, help="Also replay a history of this many steps.")
    parser.add_argument("--big-peers", action="store_true", help="Build the big history for the peers too (slow).")
    parser.add_argument("--fanout", default="10x200", help="PROCESSESxSTEPS of the fan-out block.")
    parser.add_argument("--steady", type=int, default=2000,
                        help="Steps a worker in the fan-out block's steady measure of the coordinator (0: none).")
    parser.add_argument("--only", default="steps,resume,replay,fanout")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--scratch", type=Path, default=None, help="Folder for the stores (on the disk to measure).")
    parser.add_argument("--json", type=Path, default=None, help="Also write the tables here.")
    args = parser.parse_args()
    peer_python = args.venv / "bin" / "python"
    peers = PEERS if peer_python.exists() else []
    if not peers:
        print(f"no peers: {peer_python} is missing (run bench/peers/setup.py); measuring fleetledger and the floor only")
    only = set(args.only.split(","))
    procs, per = (int(x) for x in args.fanout.split("x"))
    print(f"# fleetledger vs peers, {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, "
          f"{os.cpu_count()} CPUs, python {sys.version.split()[0]}\n")
    tables = []
    with tempfile.TemporaryDirectory(dir=args.scratch, prefix="peers-") as tmp:
        runner = Runner(Path(tmp), peer_python if peers else None)
        systems = [FLEET, *peers]
        blocks = [
            ("steps", lambda: block_steps(runner, systems, args.reps, args.steps)),
            ("resume", lambda: block_resume(runner, systems, args.reps, args.resume_steps, args.work_us)),
            ("replay", lambda: block_replay(runner, [FLEET, *[p for p in peers if p.durability == "default"]],
                                            args.reps, args.replay)),
            ("fanout", lambda: block_fanout(runner, [s for s in systems if "DBOS" not in s.name], args.reps, procs, per, args.steady)),
        ]
        if args.big:
            blocks.append(("replay", lambda: block_replay(
                runner, [FLEET, *([p for p in peers if p.durability == "default"] if args.big_peers else [])],
                max(1, args.reps // 2), args.big)))
        for name, block in blocks:
            if name in only:
                tables.append(block())
                print(tables[-1] + "\n", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"argv": sys.argv, "tables": tables}, indent=1))


if __name__ == "__main__":
    main()
