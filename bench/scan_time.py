"""Wall time of a whole scan against ``bandit -r`` on the same tree, measured in one run.

Runs ``bandit -r TREE -f json -q`` and ``fleetledger scan TREE --workers N`` (a fresh workspace,
the default sandbox) alternately, ``--reps`` times each, and prints the median of each, their
ratio (scan / bandit: 1.0 or less means the scan, with its taint engine, its analyst's three
passes and its ledger, takes no longer than bandit alone), and from the scan's ledger the
longest step of each kind (no step has a wall-clock budget: detect's bounds are counted, see
``fleetledger.jobs.scan.detect``; a long step here is a bound worth tightening).

Run: ``python bench/scan_time.py TREE [--workers 2] [--reps 1] [--sandbox bubblewrap]``, e.g. on
the Django 5.1.4 sdist (``pip download django==5.1.4 --no-deps --no-binary :all:``, unpacked).
The tree is read only; nothing of it is copied into the project.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def time_bandit(tree: Path) -> float:
    """Seconds ``bandit -r`` takes on the tree (its findings are not used)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bandit", "-r", str(tree), "-f", "json", "-q", "-o", os.devnull],
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def time_scan(tree: Path, workers: int, sandbox: str | None) -> tuple[float, Path]:
    """Seconds a fresh ``fleetledger scan`` takes, and its workspace."""
    workspace = Path(tempfile.mkdtemp(prefix="scan-time-"))
    command = [sys.executable, "-m", "fleetledger.cli", "scan", str(tree), "--workspace", str(workspace),
               "--workers", str(workers), "--no-progress"]
    if sandbox:
        command += ["--sandbox", sandbox]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("FLEETLEDGER_")}
    started = time.perf_counter()
    finished = subprocess.run(command, check=False, env=environment, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if finished.returncode != 0:
        raise SystemExit(f"the scan failed (exit {finished.returncode}): {finished.stderr[-2000:]}")
    return elapsed, workspace


def longest_steps(workspace: Path) -> dict[str, tuple[float, str]]:
    """Per step kind, the longest step (seconds from its intent to its result) and its name."""
    database = sqlite3.connect(f"file:{workspace / 'ledger.sqlite3'}?mode=ro", uri=True)
    rows = database.execute("SELECT kind, key, ts_ms FROM records WHERE kind IN ('step.intent', 'step.done', 'step.failed')")
    started: dict[str, int] = {}
    longest: dict[str, tuple[float, str]] = {}
    for kind, key, ts_ms in rows:
        if key is None:
            continue
        if kind == "step.intent":
            started[key] = ts_ms
        elif key in started:
            name = key.split("/", 1)[-1].rsplit("@", 1)[0]
            step_kind = name.split(":", 1)[0]
            seconds = (ts_ms - started.pop(key)) / 1000
            if seconds > longest.get(step_kind, (-1.0, ""))[0]:
                longest[step_kind] = (seconds, name)
    return longest


def main() -> int:
    """Prints the comparison; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--sandbox", default=None)
    args = parser.parse_args()
    files = sum(1 for _ in args.tree.rglob("*.py"))
    bandit_s, scan_s = [], []
    workspace = None
    for _ in range(args.reps):
        bandit_s.append(time_bandit(args.tree))
        elapsed, workspace = time_scan(args.tree, args.workers, args.sandbox)
        scan_s.append(elapsed)
    bandit, scan = statistics.median(bandit_s), statistics.median(scan_s)
    print(f"{args.tree} ({files} Python files), {args.reps} rep(s), {os.cpu_count()} CPUs")
    print(f"bandit -r:                       {bandit:8.1f} s")
    print(f"fleetledger scan --workers {args.workers}:   {scan:8.1f} s")
    print(f"ratio scan / bandit:             {scan / bandit:8.2f}")
    if workspace is not None:
        report = json.loads((workspace / "findings.json").read_text())
        print(f"findings: {report['summary']['findings']}, files skipped: {report['summary']['files_skipped']}")
        for kind, (seconds, name) in sorted(longest_steps(workspace).items()):
            print(f"longest {kind} step: {seconds:6.2f} s  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
