"""A CI-sized subset of the chaos harness (bench/chaos.py): real SIGKILLs at named fault points
and at random events, recovery by fresh processes (sometimes killed again), outputs compared
with an uninterrupted run. The subset is a random sample over every point and random kill,
drawn with a seed printed in each failure (``FLEETLEDGER_CHAOS_SEED`` replays one); the full
run (see README) is the same code without --sample."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


SEED = int(os.environ.get("FLEETLEDGER_CHAOS_SEED") or random.SystemRandom().randrange(10**6))
"""The sample's seed for this test run (printed in every failure)."""


def run_harness(tmp_path: Path, *args: str) -> str:
    """Runs the harness with ``args`` (and ``--sample-seed SEED``) and returns its summary
    line, once every check held."""
    out = tmp_path / "chaos.jsonl"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "chaos.py"), *args, "--sample-seed", str(SEED),
                           "--jobs", "2", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"FLEETLEDGER_CHAOS_SEED={SEED}\n" + done.stdout + done.stderr
    summary = f"(FLEETLEDGER_CHAOS_SEED={SEED}) " + done.stdout.strip().splitlines()[-1]
    assert "lost records: 0; duplicated effects: 0; divergent final outputs: 0; ledgers failing verify: 0; " \
           "runs not finished: 0; wrong exits: 0; run-state files contradicting the ledger: 0; " \
           "crashes recovered by a new run instead of a resume: 0" in summary, summary
    return summary


@pytest.mark.timeout(900)  # the harness's own limit is 600 s; the default 300 s is for ordinary tests
@pytest.mark.parametrize("workload, sample", [("synthetic", 80), ("scan", 25)])
def test_chaos_subset_loses_nothing_and_repeats_nothing(tmp_path: Path, workload: str, sample: int) -> None:
    """A random sample of the kill family: named points (with and without a second kill during
    recovery) and kills at random events; every scenario proves its crash (the harness counts
    the faults that fired), and most did fire."""
    summary = run_harness(tmp_path, "--workload", workload, "--family", "kill", "--sample", str(sample),
                          "--random", "40")
    assert f"scenarios run: {sample};" in summary, summary
    fired, armed = (int(n) for n in summary.split("faults that fired: ")[1].split(";")[0].split(" of "))
    deaths = int(summary.split("process deaths injected: ")[1].split(";")[0])
    again, armed_again = (int(n) for n in summary.split("crashes during recovery that fired: ")[1].split(";")[0]
                          .split(" of "))
    assert armed == sample and fired >= sample * 0.8 and deaths >= fired, summary
    assert armed_again and again >= armed_again * 0.7, summary


@pytest.mark.timeout(900)
@pytest.mark.parametrize("family, sample", [("enospc", 16), ("nul", 12), ("code", 6)])
def test_full_disks_damaged_ledgers_and_changed_code_lose_nothing_silently(tmp_path: Path, family: str,
                                                                           sample: int) -> None:
    """Issue 14's faults: the disk full at write points spread over the run, NUL pages in the
    ledger or its WAL after a kill, and the code changed between a kill and the resume."""
    summary = run_harness(tmp_path, "--workload", "synthetic", "--family", family, "--sample", str(sample),
                          "--variants", str(sample))
    assert f"scenarios run: {sample};" in summary, summary


def test_the_outputs_of_a_ledger_with_two_runs_are_the_last_runs(tmp_path: Path) -> None:
    """Regression: a scenario whose final ledger held two runs (a rerun under changed code, a
    new run after a salvage that kept nothing) stopped the harness with "record N is of run
    B, not A" while folding; the outputs are the last run's."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import chaos
    finally:
        sys.path.remove(str(ROOT / "bench"))
    from fleetledger.ledger import NewRecord, open_storage

    ws = tmp_path / "ws"
    ws.mkdir()
    with open_storage(f"sqlite:///{ws / 'ledger.sqlite3'}") as store:
        for run in ("synthetic-1", "synthetic-2"):
            store.append([NewRecord(run_id=run, actor="coordinator", kind="run.started", key=run, payload={"job": {}})],
                         now_ms=1)
        store.append([NewRecord(run_id="synthetic-2", actor="coordinator", kind="run.finished", key="synthetic-2")],
                     now_ms=2)
    got = chaos.outputs(chaos.WORKLOADS["synthetic"], ws, tmp_path / "target")
    assert got["state"] == "JACKED_OUT" and got["steps"] == {}


def test_a_resumed_run_lists_the_scenarios_of_its_first_run(tmp_path: Path) -> None:
    """Regression: resuming a full run with the same result file drew its random kills from a
    new reference run, whose event count differed by a few, so 94,277 of 95,251 scenarios were
    listed as not done; the first run's reference counts are now saved beside the results."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import chaos
    finally:
        sys.path.remove(str(ROOT / "bench"))
    out = tmp_path / "chaos-synthetic.jsonl"
    workload = chaos.WORKLOADS["synthetic"]

    def listed(points: dict[str, int], events: int) -> list[str]:
        points, events = chaos.listing_reference(out, points, events)
        return [s["id"] for s in chaos.scenarios(workload, points, random_count=30, seed=1, max_occurrences=40,
                                                 events=events)]

    first = listed({"coordinator.after_assign": 4, "ledger.after_commit": 70}, 900)
    again = listed({"coordinator.after_assign": 4, "ledger.after_commit": 72}, 912)
    assert again == first
    fresh = tmp_path / "other.jsonl"
    assert chaos.listing_reference(fresh, {"a": 1}, 5) == ({"a": 1}, 5)
