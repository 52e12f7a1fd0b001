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


@pytest.mark.timeout(900)  # the harness's own limit is 600 s; the default 300 s is for ordinary tests
@pytest.mark.parametrize("workload, limit", [("synthetic", 150), ("scan", 50)])
def test_chaos_subset_loses_nothing_and_repeats_nothing(tmp_path: Path, workload: str, limit: int) -> None:
    out = tmp_path / "chaos.jsonl"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "chaos.py"), "--workload", workload, "--limit", str(limit),
                           "--random", "10", "--jobs", "2", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.strip().splitlines()[-1]
    assert summary.startswith(f"scenarios run: {limit};"), summary
    assert "lost records: 0; duplicated effects: 0; divergent final outputs: 0; ledgers failing verify: 0; " \
           "runs not finished: 0" in summary, summary
    deaths = int(summary.split("process deaths injected: ")[1].split(";")[0])
    assert deaths >= limit * 0.8, "most scenarios really killed a process"
