"""Sandbox start cost per batch, on each backend available here, next to ``none``.

    python bench/sandbox_bench.py [--runs 20] [--worker-runs 5] [--backends none,bubblewrap,...]

A worker process is one batch (one sandbox per worker process), so the cost that matters is
the start of one sandbox. Prints, per backend, the median of:
  1. ``true``: start a trivial command through ``wrap()`` and wait for it to end;
  2. ``worker``: start a real worker process through the seam and wait for its ``hello``
     (the sandbox, the interpreter and the job module's imports).
and each as a ratio of the ``none`` baseline measured in the same run. A backend that is not
available is listed with the reason its ``check_available()`` gives.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fleetledger.pool import WorkerPool  # noqa: E402
from fleetledger.sandbox import BACKENDS, Sandbox, SandboxUnavailable, get_sandbox  # noqa: E402

TRUE = "/usr/bin/true"
HELLO_TIMEOUT_S = 300.0


def time_true(sandbox: Sandbox, folder: Path, runs: int) -> float:
    """Returns the median seconds to start and finish ``true`` in the sandbox."""
    times = []
    for _ in range(runs):
        launch = sandbox.wrap([TRUE], read_only=[folder / "repo"], scratch=folder / "scratch")
        start = time.perf_counter()
        done = subprocess.run(launch.argv, env=launch.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
        if sandbox.describe_exit(done.returncode) != "exit status 0":
            raise RuntimeError(f"`true` in {sandbox.name}: {sandbox.describe_exit(done.returncode)}")
    return statistics.median(times)


def time_worker(sandbox: Sandbox, folder: Path, runs: int) -> float:
    """Returns the median seconds from spawning a scan worker to its ``hello``."""
    times = []
    for n in range(runs):
        pool = WorkerPool(sandbox=sandbox, job_module="fleetledger.jobs.scan.tasks", read_only=[folder / "repo"],
                          scratch=folder / "scratch", logs=folder, heartbeat_s=0)
        start = time.perf_counter()
        pool.start(f"w{n:02d}")
        try:
            while time.perf_counter() - start < HELLO_TIMEOUT_S:
                messages, dead = pool.poll(0.5)
                if any(m["op"] == "hello" for _, m in messages):
                    times.append(time.perf_counter() - start)
                    break
                if dead:
                    raise RuntimeError(f"the worker died: {pool.log_tail(dead[0].id)}")
            else:
                raise RuntimeError(f"no hello within {HELLO_TIMEOUT_S} s")
        finally:
            pool.stop_all()
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="starts of `true` per backend")
    parser.add_argument("--worker-runs", type=int, default=5, help="worker starts per backend")
    parser.add_argument("--backends", default=",".join(["none", *sorted(set(BACKENDS) - {"none"})]),
                        help="comma-separated backends; none is always measured first")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    names = ["none", *[n for n in args.backends.split(",") if n and n != "none"]]
    rows: dict[str, dict[str, float | str]] = {}
    with tempfile.TemporaryDirectory(prefix="sandbox-bench-") as tmp:
        folder = Path(tmp)
        (folder / "repo").mkdir()
        (folder / "repo" / "app.py").write_text("print('hello')\n")
        for name in names:
            sandbox = get_sandbox(name)
            try:
                sandbox.check_available()
            except SandboxUnavailable as exc:
                rows[name] = {"unavailable": str(exc)}
                continue
            rows[name] = {"true_s": time_true(sandbox, folder, args.runs),
                          "worker_s": time_worker(sandbox, folder, args.worker_runs)}
    base = rows["none"]
    for row in rows.values():
        if "true_s" in row:
            row["true_ratio"] = float(row["true_s"]) / float(base["true_s"])
            row["worker_ratio"] = float(row["worker_s"]) / float(base["worker_s"])
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"sandbox start cost (median; `true` x{args.runs}, worker to hello x{args.worker_runs})")
    print(f"{'backend':<12}{'true':>10}{'ratio':>9}{'worker':>10}{'ratio':>9}")
    for name, row in rows.items():
        if "unavailable" in row:
            print(f"{name:<12}unavailable: {row['unavailable']}")
            continue
        print(f"{name:<12}{float(row['true_s']) * 1000:>8.1f}ms{float(row['true_ratio']):>8.1f}x"
              f"{float(row['worker_s']) * 1000:>8.1f}ms{float(row['worker_ratio']):>8.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
