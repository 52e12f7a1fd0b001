"""A CI-sized subset of the chaos harness (bench/chaos.py): real SIGKILLs at named fault points
and at random times, recovery by fresh processes (sometimes killed again), outputs compared
with an uninterrupted run. The full run (see README) is the same code with no --limit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def run_harness(tmp_path: Path, *args: str) -> str:
    """Runs the harness with ``args`` and returns its summary line, once every check held."""
    out = tmp_path / "chaos.jsonl"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "chaos.py"), *args, "--jobs", "2", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.strip().splitlines()[-1]
    assert "lost records: 0; duplicated effects: 0; divergent final outputs: 0; ledgers failing verify: 0; " \
           "runs not finished: 0; wrong exits: 0; run-state files contradicting the ledger: 0" in summary, summary
    return summary


@pytest.mark.timeout(900)  # the harness's own limit is 600 s; the default 300 s is for ordinary tests
@pytest.mark.parametrize("workload, limit", [("synthetic", 150), ("scan", 50)])
def test_chaos_subset_loses_nothing_and_repeats_nothing(tmp_path: Path, workload: str, limit: int) -> None:
    summary = run_harness(tmp_path, "--workload", workload, "--family", "kill", "--limit", str(limit), "--random", "10")
    assert summary.startswith(f"scenarios run: {limit};"), summary
    deaths = int(summary.split("process deaths injected: ")[1].split(";")[0])
    assert deaths >= limit * 0.8, "most scenarios really killed a process"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("family, sample", [("enospc", 16), ("nul", 12), ("code", 6)])
def test_full_disks_damaged_ledgers_and_changed_code_lose_nothing_silently(tmp_path: Path, family: str,
                                                                           sample: int) -> None:
    """Issue 14's faults: the disk full at write points spread over the run, NUL pages in the
    ledger or its WAL after a kill, and the code changed between a kill and the resume."""
    summary = run_harness(tmp_path, "--workload", "synthetic", "--family", family, "--sample", str(sample),
                          "--variants", str(sample))
    assert summary.startswith(f"scenarios run: {sample};"), summary
