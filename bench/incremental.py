"""Incremental scans: what a scan of a tree with one changed file costs after a full scan.

    python bench/incremental.py TREE [--workers N] [--seed S] [--sandbox none|bubblewrap] [--out DIR]

TREE is any source tree (the issue's: Django 5.1.4's sdist, ``pip download Django==5.1.4
--no-binary :all: --no-deps`` and unpacked); it is copied, never changed. Three scans run,
each a fresh ``fleetledger scan`` process:

1. a full scan of the copy (workspace ``inc``);
2. one Python file of the copy, drawn with ``--seed`` among the files outside test folders,
   gets a new function appended (a shell command built from its argument, so the change
   brings a finding); the same command runs again in the same workspace: it says what changed
   and starts a new run that reuses the unchanged results;
3. a fresh full scan of the changed copy (workspace ``fresh``, ``--no-reuse``): the baseline
   the incremental report must equal.

Printed: wall and CPU seconds (this process's children: coordinator, workers, sandboxes) of
each scan, the ratio of the second to the first (the issue asks <= 5%), the steps reused and
run in the second (from its ledger), and whether its findings and file list equal the fresh
scan's (``findings.json``: findings by path, line, rule, severity and verdict; files by path
and status).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

CHANGE = '''

def fleetledger_bench_change(name):
    import os
    os.system("echo " + name)
'''


def scan(tree: Path, workspace: Path, *extra: str, workers: int, sandbox: str) -> tuple[float, float, str]:
    """Runs one scan; returns (wall seconds, CPU seconds of the children, its output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "fleetledger.cli", "scan", str(tree), "--workspace", str(workspace),
                           "--workers", str(workers), "--sandbox", sandbox, "--no-progress", "--allow-empty", *extra],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"scan failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout + done.stderr


def steps_of_last_run(workspace: Path) -> dict[str, int]:
    """``{"reused": n, "run": n}``: the step results of the workspace's last run."""
    conn = sqlite3.connect(f"file:{workspace / 'ledger.sqlite3'}?mode=ro", uri=True)
    try:
        (run,) = conn.execute("SELECT run_id FROM records WHERE kind = 'run.started' ORDER BY seq DESC LIMIT 1").fetchone()
        counts = {"reused": 0, "run": 0}
        for (payload,) in conn.execute("SELECT payload FROM records WHERE run_id = ? AND kind = 'step.done'", (run,)):
            counts["reused" if '"reused"' in payload else "run"] += 1
        return counts
    finally:
        conn.close()


def report(workspace: Path) -> tuple[list[Any], list[Any]]:
    body = json.loads((workspace / "findings.json").read_text())
    findings = sorted((f["candidate"]["path"], f["candidate"]["line"], f["candidate"]["rule_id"], f["severity"],
                       f["verdict"]) for f in body["findings"])
    return findings, sorted((f["path"], f["status"]) for f in body["files"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sandbox", default="none", choices=["none", "bubblewrap"])
    parser.add_argument("--out", type=Path, default=None, help="Keep the copies and workspaces here.")
    args = parser.parse_args()
    base = args.out or Path(tempfile.mkdtemp(prefix="fleetledger-incremental-"))
    copy = base / "tree"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(args.tree, copy, symlinks=True)
    for name in ("inc", "fresh"):
        shutil.rmtree(base / name, ignore_errors=True)

    wall1, cpu1, _ = scan(copy, base / "inc", workers=args.workers, sandbox=args.sandbox)
    print(f"full scan: {wall1:.1f} s wall, {cpu1:.1f} s CPU; steps {steps_of_last_run(base / 'inc')}")

    sources = sorted(p for p in copy.rglob("*.py") if "test" not in p.relative_to(copy).as_posix().lower())
    changed = random.Random(args.seed).choice(sources)
    with open(changed, "a", encoding="utf-8") as handle:
        handle.write(CHANGE)
    wall2, cpu2, out = scan(copy, base / "inc", workers=args.workers, sandbox=args.sandbox)
    steps = steps_of_last_run(base / "inc")
    print(f"changed: {changed.relative_to(copy)}")
    print(next((line for line in out.splitlines() if line.startswith("changed since run")), "(no change reported)"))
    print(f"incremental scan: {wall2:.1f} s wall, {cpu2:.1f} s CPU; steps {steps}")
    print(f"ratio incremental/full: wall {wall2 / wall1:.3f}, CPU {cpu2 / cpu1:.3f} (the issue asks <= 0.05)")

    wall3, cpu3, _ = scan(copy, base / "fresh", "--no-reuse", workers=args.workers, sandbox=args.sandbox)
    same = report(base / "inc") == report(base / "fresh")
    print(f"fresh full scan of the changed tree: {wall3:.1f} s wall, {cpu3:.1f} s CPU")
    print(f"incremental report equals the fresh full scan's: {'yes' if same else 'NO'}")
    if not same:
        inc, fresh = report(base / "inc"), report(base / "fresh")
        print("only incremental:", [f for f in inc[0] if f not in fresh[0]][:10])
        print("only fresh:", [f for f in fresh[0] if f not in inc[0]][:10])
        sys.exit(1)
    if args.out is None:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
