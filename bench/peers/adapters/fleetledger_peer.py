"""fleetledger, through its public API, for ``bench/peers/run.py``.

A durable no-op step is what a worker's ``TaskContext.step`` records for a pure step: its
``step.intent`` and ``step.done`` under the task's lease, appended in one durable transaction
(``open_storage(url).append([...])``: fencing, idempotency, the hash chain, one fsync). ``coord``
runs the same steps as a job through the ``Coordinator`` with worker processes, the records
of all of them grouped into the coordinator's transactions. fleetledger has one durability:
every commit is fsynced (WAL, synchronous=FULL), so ``--durability`` changes nothing.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from _common import Timed, emit, not_measured, parse

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from fleetledger import open_storage  # noqa: E402
from fleetledger.coordinator import Coordinator, RunOptions  # noqa: E402  (imported before any timing, as the peers' are)
from fleetledger.jobs.synthetic import SyntheticJob  # noqa: E402
from fleetledger.ledger import NewRecord  # noqa: E402
from fleetledger.replay import fold  # noqa: E402
from fleetledger.workspace import Workspace  # noqa: E402

RUN = "bench"


def _url(folder: Path) -> str:
    return f"sqlite:///{folder / 'ledger.sqlite3'}"


def _lease(store, run: str, task: str) -> None:  # type: ignore[no-untyped-def]
    store.append([NewRecord(run_id=run, actor="coordinator", kind="task.planned", key=task, task=task,
                            payload={"sprint": "work"}),
                  NewRecord(run_id=run, actor="coordinator", kind="task.assigned", task=task, epoch=1,
                            payload={"worker": "w01", "expires_ms": 2**41})], now_ms=int(time.time() * 1000))


def _step(run: str, task: str, i: int) -> list[NewRecord]:
    key = f"{task}/s{i}@{i:016x}"
    return [NewRecord(run_id=run, actor="w01", kind="step.intent", key=key, task=task, epoch=1, payload={"name": f"s{i}"}),
            NewRecord(run_id=run, actor="w01", kind="step.done", key=key, task=task, epoch=1,
                      payload={"name": f"s{i}", "input_hash": f"{i:016x}", "result": {"value": f"{i:016x}"}})]


def steps(folder: Path, n: int, run: str = RUN) -> Timed:
    """N durable steps one after another; returns the timing of the steps alone."""
    with open_storage(_url(folder)) as store:
        _lease(store, run, "t")
        with Timed() as timed:
            for i in range(n):
                store.append(_step(run, "t", i), now_ms=int(time.time() * 1000))
    return timed


def build(folder: Path, n_steps: int) -> int:
    """A history of ``n_steps`` steps of 10 tasks (two records each), written fast (not durable);
    returns its number of records."""
    with open_storage(_url(folder)) as store:
        store.execute_raw("PRAGMA synchronous = OFF")  # type: ignore[attr-defined]
        store.append([NewRecord(run_id=RUN, actor="coordinator", kind="run.started", key=RUN, payload={"job": {}})], now_ms=1)
        for t in range(10):
            _lease(store, RUN, f"t{t}")
        for i in range(0, n_steps, 1000):
            store.append([r for j in range(i, min(n_steps, i + 1000)) for r in _step(RUN, f"t{j % 10}", j)], now_ms=2 + i)
        return sum(count for _, _, _, count in store.runs())


def replay(folder: Path) -> dict[str, float]:
    """Opens the ledger (its integrity check included) and folds the run from record 1."""
    start = time.perf_counter()
    store = open_storage(_url(folder))
    opened = time.perf_counter() - start
    start = time.perf_counter()
    view = fold(store.read(RUN))
    seconds = time.perf_counter() - start
    store.close()
    return {"seconds": seconds, "open_seconds": opened, "records": view.records, "steps": view.steps_done}


def _job(n: int, procs: int, work_us: int = 0) -> SyntheticJob:
    return SyntheticJob("bench", tasks=procs, steps=max(1, n // procs), work_us=work_us)


def coord(folder: Path, n: int, procs: int, work_us: int = 0) -> dict[str, float]:
    """N steps over ``procs`` tasks, one worker process each, through the coordinator; the
    steady part is timed by the records' own timestamps (first assignment to last finish)."""

    result = Coordinator(_job(n, procs, work_us), Workspace.at(folder),
                         RunOptions(workers=procs, state_interval_s=1.0)).run()
    with open_storage(_url(folder)) as store:
        records = list(store.read())
    first = next(r for r in records if r.kind == "task.assigned")
    last = [r for r in records if r.kind == "task.finished"][-1]
    done = sum(1 for r in records if r.kind == "step.done")
    return {"seconds": max(1e-3, (last.ts_ms - first.ts_ms) / 1000), "steps": done, "exit": result.exit_code,
            **steady(records)}


def steady(records: list) -> dict[str, float]:  # type: ignore[type-arg]
    """The steady part of a coordinator run: from the moment the last task got its first
    record (every worker holds a task) to the moment the first task got its last one (a worker
    is idle again); the step results recorded in that window and its length. Empty (0 steps)
    when the tasks never all ran at once: the workers' start-up is longer than a task."""
    spans: dict[str, list[int]] = {}
    for r in records:
        if r.task is not None and r.kind != "task.planned":
            span = spans.setdefault(r.task, [r.ts_ms, r.ts_ms])
            span[1] = r.ts_ms
    low, high = max(a for a, _ in spans.values()), min(b for _, b in spans.values())
    inside = sum(1 for r in records if r.kind == "step.done" and low <= r.ts_ms < high)
    return {"steady_steps": inside, "steady_seconds": max(0, high - low) / 1000}


def done_steps(folder: Path) -> int:
    path = folder / "ledger.sqlite3"
    if not path.exists():
        return 0
    with open_storage(_url(folder)) as store:
        return store.execute_raw("SELECT count(*) FROM records WHERE kind = 'step.done'")[0][0]  # type: ignore[attr-defined]


def main() -> None:
    args = parse()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    if args.workload == "steps":
        emit(**steps(folder, args.n).fields(), steps=args.n)
    elif args.workload == "child":
        emit(**steps(folder, args.n, run=f"{RUN}-{args.id}").fields(), steps=args.n)
    elif args.workload == "coord":
        emit(**coord(folder, args.n, args.procs))
    elif args.workload == "build":
        emit(seconds=0, steps=args.n, records=build(folder, args.n))
    elif args.workload == "replay":
        emit(**replay(folder))
    elif args.workload in ("start", "resume"):
        start = time.perf_counter()
        coord(folder, args.n, 4, args.work_us)
        emit(seconds=time.perf_counter() - start, steps=done_steps(folder))
    elif args.workload == "done":
        emit(seconds=0, steps=done_steps(folder))
    else:
        not_measured(f"no {args.workload} workload")


if __name__ == "__main__":
    main()
