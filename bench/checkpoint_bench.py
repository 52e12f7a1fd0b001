"""Checkpoint benchmark: status and resume of a long run stay flat as its ledger grows.

    python bench/checkpoint_bench.py [--sizes 100000,300000,1000000] [--steps-per-task 20]

For each size, builds the ledger of a long synthetic run (``SyntheticJob``) straight through the
storage API in big batches, with the record mix of a real one: each task planned, assigned,
then its steps' ``step.intent`` and ``step.done`` (small results), lease heartbeats between
them, then ``task.finished``; and ``checkpoint`` records where the coordinator writes them
(``RunView.checkpoint_due``, folded as the ledger is built). Every task is finished but the run
is RUNNING: the coordinator died just before it could close the sprint.

Then it times, per size:
  1. ``fleetledger status --json`` in a real process (median of ``--repeat``);
  2. the resume of the run in a real process (``python -m fleetledger.jobs.synthetic``): it folds
     the run from its latest checkpoint, finds nothing left to do, closes the sprint and finishes
     (median of ``--repeat``, each on a fresh copy of the ledger);
  3. in-process, the fold from the latest checkpoint and the fold from the first record.

Targets: status and resume under 1 s at a million records, and flat: their ratio to the 100k
case close to 1, while the fold from zero grows with the ledger.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fleetledger.coordinator import RunOptions  # noqa: E402
from fleetledger.jobs.synthetic import SyntheticJob, step_value  # noqa: E402
from fleetledger.ledger import Appended, NewRecord, open_storage  # noqa: E402
from fleetledger.reader import checkpoint_payload, load_view  # noqa: E402
from fleetledger.replay import RunView  # noqa: E402
from fleetledger.steps import input_hash, step_key  # noqa: E402

RUN_ID = "synthetic-bench"
WORKERS = 8
HEARTBEAT_EVERY = 4
"""Steps between two lease renewals of a task (a heartbeat every few seconds of work)."""
BATCH = 20_000


def records_per_task(steps: int) -> int:
    """Records one task adds: planned, assigned, an intent and a result per step, heartbeats, finished."""
    return 3 + 2 * steps + steps // HEARTBEAT_EVERY


class Builder:
    """Appends a synthetic run's records in big batches, folding them as the coordinator would,
    and writes a checkpoint whenever one is due."""

    def __init__(self, url: str, every: int) -> None:
        self.store = open_storage(url)
        self.view = RunView(run_id=RUN_ID)
        self.every = every
        self.pending: list[NewRecord] = []
        self.now_ms = 1_700_000_000_000
        self.checkpoints = 0
        self.checkpoint_bytes = 0

    def add(self, kind: str, *, actor: str = "coordinator", **fields: object) -> None:
        self.pending.append(NewRecord(run_id=RUN_ID, actor=actor, kind=kind, **fields))  # type: ignore[arg-type]
        if len(self.pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Appends what is pending in one transaction, then folds it; writes a checkpoint when due."""
        if not self.pending:
            return
        self.now_ms += 1_000
        for outcome in self.store.append(self.pending, now_ms=self.now_ms):
            assert isinstance(outcome, Appended), outcome
            self.view.apply(outcome.record)
        self.pending = []
        if self.view.checkpoint_due(self.every):
            self.checkpoint()

    def checkpoint(self) -> None:
        payload = checkpoint_payload(self.view)
        self.checkpoints += 1
        self.checkpoint_bytes = len(json.dumps(payload, separators=(",", ":")))
        (outcome,) = self.store.append([NewRecord(run_id=RUN_ID, actor="coordinator", kind="checkpoint",
                                                  why=f"fold state after {self.view.records} records",
                                                  payload=payload)], now_ms=self.now_ms)
        assert isinstance(outcome, Appended), outcome
        self.view.apply(outcome.record)


def build(url: str, *, size: int, steps: int, every: int) -> tuple[SyntheticJob, Builder]:
    """Builds a RUNNING synthetic run of about ``size`` records whose tasks all finished."""
    tasks = max(1, size // records_per_task(steps))
    job = SyntheticJob("bench", tasks=tasks, steps=steps)
    b = Builder(url, every)
    b.add("run.started", key=RUN_ID, why="start synthetic bench",
          payload={"job": job.describe(), "sprints": list(job.sprints),
                   "session": {"id": "bench", "pid": os.getpid(), "host": "bench"}})
    b.add("sprint.started", key="work", why=f"plan work: {tasks} tasks", payload={"tasks": tasks})
    for w in range(1, WORKERS + 1):
        b.add("worker.started", why=f"w{w:02d} is pid {w}", payload={"worker": f"w{w:02d}", "pid": w, "sandbox": "none"})
    for spec in job.plan("work", None):  # type: ignore[arg-type]
        b.add("task.planned", key=spec.id, task=spec.id, why=spec.why, payload={"sprint": "work", "inputs": spec.inputs})
    b.flush()
    for n in range(tasks):
        task, worker = f"t{n:04d}", f"w{n % WORKERS + 1:02d}"
        b.add("task.assigned", task=task, epoch=1, why=f"{worker} takes {task} (attempt 1)",
              payload={"worker": worker, "pid": 1, "expires_ms": b.now_ms + 30_000, "ttl_ms": 30_000,
                       "session": "bench", "calls_allowed": 0})
        for s in range(steps):
            key = step_key(task, f"s{s}", input_hash(task, s))
            b.add("step.intent", actor=worker, key=key, task=task, epoch=1, payload={"name": f"s{s}"})
            b.add("step.done", actor=worker, key=key, task=task, epoch=1,
                  payload={"name": f"s{s}", "input_hash": input_hash(task, s)[:16], "result": {"value": step_value(task, s)}})
            if (s + 1) % HEARTBEAT_EVERY == 0:
                b.add("lease.renewed", task=task, epoch=1, payload={"worker": worker, "expires_ms": b.now_ms + 30_000})
        b.add("task.finished", actor=worker, key=task, task=task, epoch=1, why=f"{worker} finished {task}",
              payload={"steps": steps})
    b.flush()
    b.store.close()
    return job, b


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    """Runs a command to its end; returns its wall time and its stdout.

    Raises:
        RuntimeError: it exited non-zero.
    """
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv} exited {done.returncode}: {done.stdout}{done.stderr}")
    return elapsed, done.stdout


def measure(base: Path, *, size: int, steps: int, every: int, repeat: int) -> dict[str, float]:
    ws = base / f"ws-{size}"
    ledger = ws / "ledger.sqlite3"
    start = time.perf_counter()
    job, b = build(f"sqlite:///{ledger}", size=size, steps=steps, every=every)
    build_s = time.perf_counter() - start
    records = b.view.records

    status = []
    for _ in range(repeat):
        seconds, out = timed([sys.executable, "-m", "fleetledger.cli", "status", "--json", "--workspace", str(ws)])
        status.append(seconds)
        shown = json.loads(out)
        assert shown["records"] == records and shown["state"] == "RUNNING", shown

    with open_storage(f"sqlite:///{ledger}") as store:
        start = time.perf_counter()
        from_checkpoint = load_view(store, RUN_ID)
        checkpoint_s = time.perf_counter() - start
        start = time.perf_counter()
        from_zero = load_view(store, RUN_ID, trust_checkpoints=False)
        zero_s = time.perf_counter() - start
    assert from_checkpoint.to_json() == from_zero.to_json()
    tail = from_checkpoint.records - from_checkpoint.checkpointed

    resume = []
    for n in range(repeat):
        copy = base / f"resume-{size}-{n}"
        shutil.copytree(ws, copy)
        seconds, out = timed([sys.executable, "-m", "fleetledger.jobs.synthetic", str(copy), "--name", "bench",
                              "--tasks", str(job.tasks), "--steps", str(steps), "--workers", "2",
                              "--sandbox", "none", "--checkpoint-every", str(every)])
        resume.append(seconds)
        assert "finished" in out and f"{job.tasks * steps} steps recorded" in out, out
        shutil.rmtree(copy)
    shutil.rmtree(ws)
    return {"records": records, "tasks": job.tasks, "build_s": build_s, "size_mb": 0.0,
            "checkpoints": b.checkpoints, "checkpoint_kb": b.checkpoint_bytes / 1024, "tail": tail,
            "status_s": statistics.median(status), "resume_s": statistics.median(resume),
            "fold_checkpoint_s": checkpoint_s, "fold_zero_s": zero_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,300000,1000000", help="Ledger sizes in records, comma-separated.")
    parser.add_argument("--steps-per-task", type=int, default=20, help="Steps of each synthetic task.")
    parser.add_argument("--checkpoint-every", type=int, default=RunOptions().checkpoint_every,
                        help="Records between checkpoints (at least as many as the run has tasks).")
    parser.add_argument("--repeat", type=int, default=3, help="Timings per size (the median is shown).")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(dir=ROOT / ".cache" if (ROOT / ".cache").is_dir() else None) as tmp:
        for size in sizes:
            row = measure(Path(tmp), size=size, steps=args.steps_per_task, every=args.checkpoint_every,
                          repeat=args.repeat)
            rows.append(row)
            print(f"{row['records']:>9,} records ({row['tasks']:,} tasks, built in {row['build_s']:.0f} s; "
                  f"{row['checkpoints']} checkpoints, the last {row['checkpoint_kb']:.0f} KB, "
                  f"{row['tail']:,} records after it): status --json {row['status_s']:.3f} s, "
                  f"resume {row['resume_s']:.3f} s; in process: fold from the checkpoint "
                  f"{row['fold_checkpoint_s']:.3f} s, from zero {row['fold_zero_s']:.3f} s", flush=True)
    first = rows[0]
    print(f"\nratios to the {first['records']:,}-record case (target: status and resume under 1 s, and flat):")
    for row in rows:
        verdict = "OK" if row["status_s"] < 1 and row["resume_s"] < 1 else "OVER 1 s"
        print(f"{row['records']:>9,} records: status {row['status_s'] / first['status_s']:.2f}x, "
              f"resume {row['resume_s'] / first['resume_s']:.2f}x, fold from zero "
              f"{row['fold_zero_s'] / first['fold_zero_s']:.2f}x  [{verdict}]")


if __name__ == "__main__":
    main()
