"""durabl (PyPI ``durabl``), through its public API, for ``bench/peers/run.py``.

A durable no-op step is a ``ToolCall`` of an idempotent no-op tool yielded by a ``@workflow``;
durabl records it in its SQLite event log (WAL). Its default durability is
``synchronous=NORMAL`` (a commit is not fsynced: a power cut may lose the last ones);
``--durability fsync`` opens it with ``synchronous="FULL"``.
"""

from __future__ import annotations

import time
from pathlib import Path

from _common import Timed, burn, emit, not_measured, parse

from durabl import Runtime, Tool, ToolCall, ToolMode, workflow

RUN = "bench"


def noop(i: int, work_us: int = 0) -> dict[str, str]:
    if work_us:
        burn(work_us)
    return {"value": f"{i:016x}"}


@workflow
def steps_wf(ctx, n, work_us=0):  # type: ignore[no-untyped-def]
    for i in range(n):
        yield ToolCall("noop", {"i": i, "work_us": work_us})
    return n


def runtime(folder: Path, durability: str = "default", synchronous: str | None = None) -> Runtime:
    sync = synchronous or ("FULL" if durability == "fsync" else "NORMAL")
    return Runtime(db=str(folder / "durabl.db"), tools=[Tool("noop", noop, ToolMode.IDEMPOTENT)],
                   workflows=[steps_wf], synchronous=sync)


def done_steps(folder: Path) -> int:
    if not (folder / "durabl.db").exists():
        return 0
    with runtime(folder) as rt:
        row = rt.store._conn.execute("SELECT count(*) FROM events WHERE kind LIKE '%COMPLETED%' AND step_type = 'ToolCall'").fetchone()
        return int(row[0])


def main() -> None:
    args = parse()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    if args.workload in ("steps", "child"):
        with runtime(folder, args.durability) as rt:
            with Timed() as timed:
                rt.run(steps_wf, {"n": args.n}, run_id=f"{RUN}-{args.id}")
        emit(**timed.fields(), steps=args.n)
    elif args.workload == "build":
        with runtime(folder, synchronous="OFF") as rt:
            rt.run(steps_wf, {"n": args.n}, run_id=RUN)
            events = rt.store.event_count(RUN)
        emit(seconds=0, steps=args.n, records=events)
    elif args.workload == "replay":
        with runtime(folder) as rt:
            start = time.perf_counter()
            state = rt.replay(RUN, dry=True)
            seconds = time.perf_counter() - start
            events = rt.store.event_count(RUN)
        emit(seconds=seconds, records=events, status=str(getattr(state, "status", "")))
    elif args.workload == "start":
        with runtime(folder, args.durability) as rt:
            rt.run(steps_wf, {"n": args.n, "work_us": args.work_us}, run_id=RUN)
        emit(seconds=0, steps=done_steps(folder))
    elif args.workload == "resume":
        start = time.perf_counter()
        with runtime(folder, args.durability) as rt:
            rt.resume(RUN)
        emit(seconds=time.perf_counter() - start, steps=done_steps(folder))
    elif args.workload == "done":
        emit(seconds=0, steps=done_steps(folder))
    else:
        not_measured(f"no {args.workload} workload")


if __name__ == "__main__":
    main()
