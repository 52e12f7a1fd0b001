"""Startup cost of fleetledger's processes: what a worker pays before its first step.

    python bench/startup.py [--reps N]

Each figure is the CPU time (user + system, from the child's rusage) of a fresh
``python -c "import MODULE"`` process, taken ``--reps`` times (default 10); min and median are
printed with their ratio against a bare ``python -c "pass"`` measured in the same run, so the
figures compare across machines. Measured:

* ``fleetledger.worker``: the worker process's own module;
* ``fleetledger.jobs.scan.tasks``: the scan job's worker-side module;
* ``fleetledger.jobs.synthetic``: the synthetic job's module;
* ``fleetledger.coordinator``: the coordinator, for scale.

The children run from this checkout (``PYTHONPATH`` is its root), with the interpreter running
this script.
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
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10, help="fresh processes per figure (default 10)")
    args = parser.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for _, code in CASES:  # warm the bytecode caches: the figures are of a warm start
        cpu_seconds(code, env)
    samples: dict[str, list[float]] = {label: [] for label, _ in CASES}
    for _ in range(args.reps):  # interleaved, so a slow moment of the machine hits every case
        for label, code in CASES:
            samples[label].append(cpu_seconds(code, env))
    base_min = min(samples["bare python"])
    base_med = statistics.median(samples["bare python"])
    print(f"CPU time of a fresh process, {args.reps} reps (python {sys.version.split()[0]}, {ROOT})")
    print(f"{'':36} {'min ms':>8} {'median ms':>10} {'x bare (min)':>13} {'x bare (median)':>16}")
    for label, _ in CASES:
        lo, med = min(samples[label]), statistics.median(samples[label])
        print(f"{label:36} {lo * 1e3:8.1f} {med * 1e3:10.1f} {lo / base_min:13.2f} {med / base_med:16.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
