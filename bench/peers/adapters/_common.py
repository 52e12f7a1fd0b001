"""What every adapter shares: its command line and the one JSON line it prints.

An adapter runs one measurement of one workload in a fresh process and prints
``{"seconds": ..., "steps": ...}`` (plus what the workload adds) on its last line:

    python ADAPTER steps   --dir D --n N [--durability default|fsync]
    python ADAPTER build   --dir D --n N            (a history to replay; not timed)
    python ADAPTER replay  --dir D                  (from record 1)
    python ADAPTER child   --dir D --n N --id I     (one of the fan-out's processes)
    python ADAPTER start   --dir D --n N            (the run the runner SIGKILLs at half)
    python ADAPTER done    --dir D                  (how many steps are recorded; not timed)
    python ADAPTER resume  --dir D --n N            (finishes the killed run)
    python ADAPTER coord   --dir D --n N --procs P  (fleetledger: P workers through the coordinator)

An adapter without a workload exits 3 (the runner says "not measured").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

NOT_MEASURED = 3


def parse() -> argparse.Namespace:
    """The adapter's command line (see the module docstring)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("workload")
    parser.add_argument("--dir", required=True)
    parser.add_argument("--n", type=int, default=0)
    parser.add_argument("--id", type=int, default=0)
    parser.add_argument("--work-us", type=int, default=0, help="CPU per step in the resume workload")
    parser.add_argument("--procs", type=int, default=1, help="worker processes (fleetledger's coordinator)")
    parser.add_argument("--durability", choices=("default", "fsync"), default="default")
    return parser.parse_args()


def emit(**fields: Any) -> None:
    """Prints the measurement as the last line of the output."""
    print(json.dumps(fields), flush=True)


def not_measured(why: str) -> None:
    """Says why this adapter has no such workload, and exits ``NOT_MEASURED``."""
    print(json.dumps({"not_measured": why}), flush=True)
    sys.exit(NOT_MEASURED)


class Timed:
    """Times a block: ``seconds`` of wall time, ``cpu_seconds`` of this process's CPU (every
    thread, user and system: the system part includes the kernel's side of each fsync), and
    ``start``/``end`` in epoch seconds (the fan-out lines up its processes by them)."""

    def __enter__(self) -> "Timed":
        self.start = time.time()
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._wall
        self.cpu_seconds = time.process_time() - self._cpu
        self.end = self.start + self.seconds

    def fields(self) -> dict[str, float]:
        return {"seconds": self.seconds, "cpu_seconds": self.cpu_seconds, "start": self.start, "end": self.end}


def burn(us: int) -> None:
    """Spends ``us`` microseconds of CPU (a step's own work in the resume workload)."""
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass
