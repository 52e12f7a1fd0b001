"""LangGraph with its SQLite checkpointer (PyPI ``langgraph``, ``langgraph-checkpoint-sqlite``),
through its public API, for ``bench/peers/run.py``.

A durable no-op step is one super-step of a one-node graph that loops until ``i == n``; the
``SqliteSaver`` writes a checkpoint after each (WAL; Python's sqlite3 leaves synchronous at
SQLite's FULL). Its default durability is ``durability="async"`` (the checkpoint is written
while the next step runs); ``--durability fsync`` passes ``durability="sync"`` (written before
the next step starts). LangGraph resumes from its latest checkpoint and has no history to fold,
so it has no replay workload.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TypedDict

from _common import Timed, burn, emit, not_measured, parse

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    i: int
    n: int
    work_us: int


def step(state: State) -> dict[str, int]:
    if state.get("work_us"):
        burn(state["work_us"])
    return {"i": state["i"] + 1}


def route(state: State) -> str:
    return END if state["i"] >= state["n"] else "step"


def app(folder: Path):  # type: ignore[no-untyped-def]
    graph = StateGraph(State)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    graph.add_conditional_edges("step", route)
    conn = sqlite3.connect(folder / "langgraph.sqlite", check_same_thread=False)
    return graph.compile(checkpointer=SqliteSaver(conn)), conn


def config(thread: str, n: int) -> dict:  # type: ignore[type-arg]
    return {"configurable": {"thread_id": thread}, "recursion_limit": n + 10}


def mode(durability: str) -> str:
    return "sync" if durability == "fsync" else "async"


def done_steps(folder: Path) -> int:
    if not (folder / "langgraph.sqlite").exists():
        return 0
    graph, conn = app(folder)
    state = graph.get_state(config("bench", 0)).values
    conn.close()
    return int(state.get("i", 0))


def main() -> None:
    args = parse()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    if args.workload in ("steps", "child"):
        graph, conn = app(folder)
        with Timed() as timed:
            graph.invoke({"i": 0, "n": args.n, "work_us": 0}, config(f"bench-{args.id}", args.n),
                         durability=mode(args.durability))
        conn.close()
        emit(**timed.fields(), steps=args.n)
    elif args.workload == "start":
        graph, conn = app(folder)
        graph.invoke({"i": 0, "n": args.n, "work_us": args.work_us}, config("bench", args.n), durability=mode(args.durability))
        emit(seconds=0, steps=args.n)
    elif args.workload == "resume":
        start = time.perf_counter()
        graph, conn = app(folder)
        graph.invoke(None, config("bench", args.n), durability=mode(args.durability))
        conn.close()
        emit(seconds=time.perf_counter() - start, steps=done_steps(folder))
    elif args.workload == "done":
        emit(seconds=0, steps=done_steps(folder))
    else:
        not_measured("LangGraph resumes from its latest checkpoint: it keeps no history that is folded"
                     if args.workload in ("build", "replay") else f"no {args.workload} workload")


if __name__ == "__main__":
    main()
