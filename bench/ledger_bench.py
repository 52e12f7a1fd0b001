"""Ledger benchmark: every figure is a ratio against a baseline measured in the same run.

    python bench/ledger_bench.py [--quick] [--with-scan]

Prints:
  1. a durable step (its intent and result in one fsynced transaction, through the ledger:
     fencing, idempotency check, hash chain) next to a raw SQLite fsynced INSERT transaction on
     the same disk (target: within 1.2x);
  2. durable records per second with 10 worker processes appending at once through the
     coordinator's group commit (target: at least 20,000/s);
  3. the time to read and fold a 20,000-step ledger (target: under 0.1 s);
  4. the resume of a half-finished run next to a fresh run of just the missing half
     (target: resume <= 1.02 x missing half + 0.05 s);
  5. with --with-scan: the scan of Django 5.1.4 (2,788 files; .ci/fetch-test-repos --with-django)
     next to `bandit -r` on it, and the coordinator's peak resident memory (target: no slower,
     under 300 MB).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fleetledger.coordinator import Coordinator, RunOptions  # noqa: E402
from fleetledger.jobs.synthetic import SyntheticJob  # noqa: E402
from fleetledger.ledger import NewRecord, open_storage  # noqa: E402
from fleetledger.replay import fold  # noqa: E402
from fleetledger.workspace import Workspace  # noqa: E402


def raw_fsynced_txn(folder: Path, n: int) -> float:
    conn = sqlite3.connect(folder / "raw.sqlite3", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    times = []
    for i in range(n):
        start = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t (body) VALUES (?)", (f'{{"name":"s{i}","result":{{"value":"{i:016x}"}}}}',))
        conn.execute("COMMIT")
        times.append(time.perf_counter() - start)
    conn.close()
    return statistics.median(times)


def durable_step(folder: Path, n: int) -> float:
    store = open_storage(f"sqlite:///{folder / 'steps.sqlite3'}")
    store.append([NewRecord(run_id="r", actor="coordinator", kind="task.planned", key="t", task="t", payload={"sprint": "s"}),
                  NewRecord(run_id="r", actor="coordinator", kind="task.assigned", task="t", epoch=1,
                            payload={"worker": "w01", "expires_ms": 2**40})], now_ms=1)
    times = []
    for i in range(n):
        key = f"t/s{i}@{i:016x}"
        batch = [NewRecord(run_id="r", actor="w01", kind="step.intent", key=key, task="t", epoch=1, payload={"name": f"s{i}"}),
                 NewRecord(run_id="r", actor="w01", kind="step.done", key=key, task="t", epoch=1,
                           payload={"name": f"s{i}", "input_hash": f"{i:016x}", "result": {"value": f"{i:016x}"}})]
        start = time.perf_counter()
        store.append(batch, now_ms=2 + i)
        times.append(time.perf_counter() - start)
    store.close()
    return statistics.median(times)


def fleet(folder: Path, *, tasks: int, steps: int, workers: int, work_us: int = 0, kill_at_steps: int | None = None,
          name: str = "bench") -> tuple[float, int]:
    """Runs a synthetic job in a child process; returns (seconds, records appended).

    With ``kill_at_steps``, the coordinator is killed (SIGKILL) as soon as the ledger holds
    that many step results.
    """
    code = ("import sys; from pathlib import Path; sys.path.insert(0, %r)\n"
            "from fleetledger.coordinator import Coordinator, RunOptions\n"
            "from fleetledger.jobs.synthetic import SyntheticJob\n"
            "from fleetledger.workspace import Workspace\n"
            "job = SyntheticJob(%r, tasks=%d, steps=%d, work_us=%d)\n"
            "r = Coordinator(job, Workspace.at(%r), RunOptions(workers=%d, state_interval_s=1.0)).run()\n"
            "sys.exit(r.exit_code)\n") % (str(ROOT), name, tasks, steps, work_us, str(folder), workers)
    before = _records(folder)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code])
    if kill_at_steps is not None:
        while proc.poll() is None and _steps_done(folder) < kill_at_steps:
            time.sleep(0.005)
        proc.kill()
    proc.wait()
    return time.perf_counter() - start, _records(folder) - before


def _steps_done(folder: Path) -> int:
    if not (folder / "ledger.sqlite3").exists():
        return 0
    with open_storage(f"sqlite:///{folder / 'ledger.sqlite3'}") as store:
        return store.execute_raw("SELECT count(*) FROM records WHERE kind = 'step.done'")[0][0]  # type: ignore[attr-defined]


def steady_rate(folder: Path) -> tuple[int, float]:
    """Records appended between the first assignment and the last completion, and the seconds
    between them (from the records' own timestamps): the steady-state append rate."""
    with open_storage(f"sqlite:///{folder / 'ledger.sqlite3'}") as store:
        records = list(store.read())
    first = next(r for r in records if r.kind == "task.assigned")
    last = [r for r in records if r.kind == "task.finished"][-1]
    return last.seq - first.seq + 1, (last.ts_ms - first.ts_ms) / 1000


def _records(folder: Path) -> int:
    if not (folder / "ledger.sqlite3").exists():
        return 0
    with open_storage(f"sqlite:///{folder / 'ledger.sqlite3'}") as store:
        return sum(r[3] for r in store.runs())


def fold_time(folder: Path) -> tuple[float, float, int]:
    with open_storage(f"sqlite:///{folder / 'ledger.sqlite3'}") as store:
        run_id = store.runs()[-1][0]
        start = time.perf_counter()
        records = list(store.read(run_id))
        read_s = time.perf_counter() - start
        start = time.perf_counter()
        view = fold(records)
        fold_s = time.perf_counter() - start
    return read_s, fold_s, view.steps_done


def scan_vs_bandit(repo: Path, folder: Path, workers: int) -> None:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bandit", "-r", str(repo), "-q", "-f", "json", "-o", str(folder / "bandit.json")],
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bandit_s = time.perf_counter() - start
    ws = folder / "scan-ws"
    start = time.perf_counter()
    proc = psutil.Popen([sys.executable, "-m", "fleetledger.cli", "scan", str(repo), "--workspace", str(ws),
                         "--workers", str(workers), "--no-progress"], stdout=subprocess.DEVNULL, cwd=str(ROOT))
    peak = 0
    while proc.poll() is None:
        try:
            peak = max(peak, proc.memory_info().rss)
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    scan_s = time.perf_counter() - start
    print(f"5. scan of {repo.name} ({workers} workers): {scan_s:.1f} s; bandit -r: {bandit_s:.1f} s; "
          f"ratio {scan_s / bandit_s:.2f}x (target <= 1.00x); coordinator peak RSS {peak / 2**20:.0f} MB (target < 300 MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="Smaller sizes (a smoke run).")
    parser.add_argument("--with-scan", action="store_true", help="Also scan Django next to bandit -r.")
    parser.add_argument("--workers", type=int, default=4, help="Workers for the scan comparison.")
    args = parser.parse_args()
    n = 100 if args.quick else 400
    with tempfile.TemporaryDirectory(dir=ROOT / ".cache" if (ROOT / ".cache").is_dir() else None) as tmp:
        base = Path(tmp)
        raw = raw_fsynced_txn(base, n)
        step = durable_step(base, n)
        print(f"1. durable step {step * 1e3:.3f} ms vs raw fsynced INSERT transaction {raw * 1e3:.3f} ms: "
              f"ratio {step / raw:.2f}x (target <= 1.20x)")

        steps_per_task = 200 if args.quick else 2000
        seconds, appended = fleet(base / "fleet", tasks=10, steps=steps_per_task, workers=10)
        steady, steady_s = steady_rate(base / "fleet")
        print(f"2. 10 workers appending at once: {steady:,} durable records in {steady_s:.2f} s = "
              f"{steady / steady_s:,.0f} records/s (target >= 20,000/s); whole run with process starts: "
              f"{appended:,} in {seconds:.2f} s")

        read_s, fold_s, folded = fold_time(base / "fleet")
        print(f"3. fold of a {folded:,}-step ledger: {fold_s * 1e3:.1f} ms (+ {read_s * 1e3:.1f} ms reading it) "
              f"(target < 100 ms)")

        tasks, work_us = 8, 2000
        per_task = 50 if args.quick else 250
        total = tasks * per_task
        half_dir = base / "half"
        fleet(half_dir, tasks=tasks, steps=per_task, workers=2, work_us=work_us, name="resume", kill_at_steps=total // 2)
        recorded = _steps_done(half_dir)
        resume_s, _ = fleet(half_dir, tasks=tasks, steps=per_task, workers=2, work_us=work_us, name="resume")
        missing = total - recorded
        fresh_s, _ = fleet(base / "fresh", tasks=tasks, steps=max(1, round(missing / tasks)), workers=2,
                           work_us=work_us, name="fresh")
        print(f"4. resume of a half-finished run ({recorded} of {total} steps recorded before the SIGKILL): "
              f"{resume_s:.2f} s vs a fresh run of the missing {missing} steps: {fresh_s:.2f} s; "
              f"ratio {resume_s / fresh_s:.3f}x, excess {resume_s - fresh_s:+.3f} s (target <= 1.02x + 0.05 s); "
              f"{_steps_done(half_dir)} step results in the ledger after")

        if args.with_scan:
            repo = ROOT / ".cache" / "repos" / "Django-5.1.4"
            if not repo.is_dir():
                sys.exit("Django is missing: run .ci/fetch-test-repos --with-django")
            scan_vs_bandit(repo, base, args.workers)


if __name__ == "__main__":
    main()
