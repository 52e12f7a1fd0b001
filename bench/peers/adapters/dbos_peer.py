"""DBOS Transact (PyPI ``dbos``), through its public API, for ``bench/peers/run.py``.

A durable no-op step is a ``@DBOS.step()`` called from a ``@DBOS.workflow()``; DBOS records
each step's output in its system database, here SQLite (``system_database_url=sqlite:///...``),
which DBOS opens in SQLite's default rollback-journal mode with synchronous=FULL: every commit
is fsynced, so its default durability is already fsync-per-commit and ``--durability`` changes
nothing. A replay is DBOS's own recovery of a workflow whose steps are all recorded (the build
leaves it PENDING by ending the process before the workflow returns).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from _common import Timed, burn, emit, not_measured, parse

from dbos import DBOS, SetWorkflowID

RUN = "bench"


@DBOS.step()
def noop(i: int, work_us: int = 0) -> dict[str, str]:
    if work_us:
        burn(work_us)
    return {"value": f"{i:016x}"}


@DBOS.workflow()
def steps_wf(n: int, work_us: int = 0) -> int:
    for i in range(n):
        noop(i, work_us)
    if os.environ.get("PEERS_DBOS_STOP_AT_END"):
        os._exit(0)  # the build: every step recorded, the workflow left PENDING for a replay
    return n


def launch(folder: Path) -> None:
    DBOS(config={"name": "peerbench", "system_database_url": f"sqlite:///{folder / 'dbos.sqlite'}",
                 "run_admin_server": False})
    DBOS.launch()


def done_steps(folder: Path) -> int:
    import sqlite3

    path = folder / "dbos.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM operation_outputs").fetchone()[0])


def main() -> None:
    args = parse()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    if args.workload == "steps":
        launch(folder)
        with Timed() as timed, SetWorkflowID(f"{RUN}-{args.id}"):
            steps_wf(args.n)
        DBOS.destroy()
        emit(**timed.fields(), steps=args.n)
    elif args.workload in ("build", "start"):
        if args.workload == "build":
            os.environ["PEERS_DBOS_STOP_AT_END"] = "1"
        launch(folder)
        with SetWorkflowID(RUN):
            steps_wf(args.n, args.work_us)
        emit(seconds=0, steps=done_steps(folder))
    elif args.workload in ("replay", "resume"):
        start = time.perf_counter()
        launch(folder)  # recovers the PENDING workflow: its recorded steps are read back, not run
        DBOS.retrieve_workflow(RUN).get_result()
        seconds = time.perf_counter() - start
        DBOS.destroy()
        emit(seconds=seconds, steps=done_steps(folder), records=done_steps(folder))
    elif args.workload == "done":
        emit(seconds=0, steps=done_steps(folder))
    else:
        not_measured(f"no {args.workload} workload (several processes launching DBOS on one SQLite file would "
                     "recover each other's workflows)" if args.workload == "child" else f"no {args.workload} workload")


if __name__ == "__main__":
    main()
