"""Startup cost of fleetledger's processes: what a worker pays before its first step.

    python bench/startup.py [--reps N] [--before DIR]

Each figure is the CPU time (user + system, from the child's rusage) of a fresh
``python -c "import MODULE"`` process, taken ``--reps`` times (default 10); min and median are
printed with their ratio against a bare ``python -c "pass"`` measured in the same run, so the
figures compare across machines. Measured:

* ``fleetledger.worker``: the worker process's own module;
* ``fleetledger.jobs.scan.tasks``: the scan job's worker-side module;
* ``fleetledger.jobs.synthetic``: the synthetic job's module;
* ``fleetledger.coordinator``: the coordinator, for scale.

The children run from this checkout (``PYTHONPATH`` is its root), with the interpreter running
this script. With ``--before DIR`` (another checkout of the project, e.g. ``git worktree add
/tmp/before REV``), every case is also measured from there, interleaved with this checkout's,
and the medians' ratio after/before is printed: what a change did to start-up.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = [
    ("bare python", "pass"),
    ("import fleetledger.worker", "import fleetledger.worker"),
    ("import fleetledger.jobs.scan.tasks", "import fleetledger.jobs.scan.tasks"),
    ("import fleetledger.jobs.synthetic", "import fleetledger.jobs.synthetic"),
    ("import fleetledger.coordinator", "import fleetledger.coordinator"),
]


def cpu_seconds(code: str, env: dict[str, str]) -> float:
    """Runs ``python -c code`` in a fresh process; returns its user + system CPU time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], cwd=env["PYTHONPATH"], env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(roots: list[Path], reps: int) -> list[dict[str, list[float]]]:
    """CPU seconds of each case from each checkout in ``roots``, ``reps`` times, interleaved
    (a slow moment of the machine hits every case and every checkout); bytecode caches warm."""
    envs = []
    for root in roots:
        env = dict(os.environ, PYTHONPATH=str(root))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        envs.append(env)
        for _, code in CASES:
            cpu_seconds(code, env)
    samples: list[dict[str, list[float]]] = [{label: [] for label, _ in CASES} for _ in roots]
    for _ in range(reps):
        for label, code in CASES:
            for env, found in zip(envs, samples):
                found[label].append(cpu_seconds(code, env))
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10, help="fresh processes per figure (default 10)")
    parser.add_argument("--before", type=Path, help="another checkout to compare with (after/before ratios)")
    args = parser.parse_args(argv)
    roots = [ROOT] + ([args.before.resolve()] if args.before else [])
    if args.before and not (args.before / "fleetledger" / "__init__.py").is_file():
        parser.error(f"--before {args.before}: not a checkout of the project (no fleetledger/__init__.py)")
    samples = measure(roots, args.reps)
    after = samples[0]
    base_min = min(after["bare python"])
    base_med = statistics.median(after["bare python"])
    print(f"CPU time of a fresh process, {args.reps} reps (python {sys.version.split()[0]}, {ROOT})")
    print(f"{'':36} {'min ms':>8} {'median ms':>10} {'x bare (min)':>13} {'x bare (median)':>16}"
          + (f" {'before ms':>10} {'after/before':>13}" if args.before else ""))
    for label, _ in CASES:
        lo, med = min(after[label]), statistics.median(after[label])
        row = f"{label:36} {lo * 1e3:8.1f} {med * 1e3:10.1f} {lo / base_min:13.2f} {med / base_med:16.2f}"
        if args.before:
            then = statistics.median(samples[1][label])
            row += f" {then * 1e3:10.1f} {med / then:13.2f}"
        print(row)
    if args.before:
        print(f"before: {args.before.resolve()} (medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
