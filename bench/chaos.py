"""The chaos harness: kill real processes at every named fault point and at random times,
recover with fresh processes (possibly crashing again during recovery), and compare the final
ledger-derived outputs with an uninterrupted run.

    python bench/chaos.py [--workload synthetic|fleet10|scan|all] [--jobs 2] [--limit N]
                          [--shard K/N] [--out results.jsonl] [--random N] [--seed S]
    python bench/chaos.py --sum results*.jsonl

Each scenario is one line of JSON in ``--out`` (appended and flushed as it ends), so a run can
be stopped at any moment and continued with the same command: finished scenarios are skipped.
Shards (``--shard K/N``) split the scenario list for several machines or sessions; ``--sum``
adds up any number of result files. It prints:

    scenarios run, process deaths injected, lost records, duplicated effects (counted at the
    effect's target, not from our ledger), divergent final outputs, ledgers failing verify.

Workloads: ``synthetic`` (4 tasks x 5 steps, 2 workers, one effect per task into a target
that does not deduplicate), ``fleet10`` (10 tasks x 3 steps, 10 workers, effects), ``scan``
(the scan job on the embedded demo repository, 2 workers; its export is an effect).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import copy
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fleetledger.jobs.synthetic import deliveries  # noqa: E402
from fleetledger.ledger import open_storage  # noqa: E402
from fleetledger.replay import fold  # noqa: E402
from fleetledger.verify import verify_records  # noqa: E402

DEMO = ROOT / "fleetledger" / "demo_repo"
RECOVERY_POINTS = ("recovery.after_resume_record", "recovery.after_adopt", "ledger.after_commit",
                   "coordinator.after_assign", "effect.after_intent")
"""Points a recovery process may be killed at again (a crash during recovery)."""


@dataclass(frozen=True)
class Workload:
    name: str
    argv: tuple[str, ...]
    has_target: bool


WORKLOADS = {
    "synthetic": Workload("synthetic", ("-m", "fleetledger.jobs.synthetic", "{ws}", "--tasks", "4", "--steps", "5",
                                        "--workers", "2", "--target", "{target}", "--lease-ttl", "5"), True),
    "fleet10": Workload("fleet10", ("-m", "fleetledger.jobs.synthetic", "{ws}", "--name", "fleet10", "--tasks", "10",
                                    "--steps", "3", "--workers", "10", "--target", "{target}", "--lease-ttl", "5"), True),
    "scan": Workload("scan", ("-m", "fleetledger.cli", "scan", str(DEMO), "--workspace", "{ws}", "--workers", "2",
                              "--no-progress", "--lease-ttl", "5"), False),
}


def _argv(workload: Workload, ws: Path, target: Path) -> list[str]:
    return [sys.executable, *(a.format(ws=ws, target=target) for a in workload.argv)]


def _run(workload: Workload, ws: Path, target: Path, *, fault: str | None = None, once: Path | None = None,
         kill_after_s: float | None = None, log: Path | None = None, timeout_s: float = 300) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETLEDGER_FAULT")}
    env["FLEETLEDGER_SANDBOX"] = "none"  # the fault files and counters live on the host
    if fault:
        env["FLEETLEDGER_FAULT"] = fault
    if once:
        env["FLEETLEDGER_FAULT_ONCE"] = str(once)
    if log:
        env["FLEETLEDGER_FAULT_LOG"] = str(log)
    proc = subprocess.Popen(_argv(workload, ws, target), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=str(ROOT))
    try:
        if kill_after_s is not None:
            try:
                proc.wait(timeout=kill_after_s)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return -999


def _records(ws: Path) -> list[Any]:
    if not (ws / "ledger.sqlite3").exists():
        return []
    with open_storage(f"sqlite:///{ws / 'ledger.sqlite3'}") as store:
        return list(store.read())


def outputs(workload: Workload, ws: Path, target: Path) -> dict[str, Any]:
    """The final outputs of a run, as derived from its ledger (and, for the scan, its reports)."""
    records = _records(ws)
    view = fold(records) if records else None
    if workload.name == "scan":
        path = ws / "findings.sarif"
        sarif = json.loads(path.read_text()) if path.exists() else None
        if sarif is not None:
            for run in sarif["runs"]:
                run.get("properties", {}).pop("runId", None)
                for inv in run.get("invocations", []):
                    inv.pop("startTimeUtc", None)
        return {"state": view.state if view else None, "sarif": sarif}
    steps = {r.key.split("@")[0]: r.payload["result"] for r in records if r.kind == "step.done"}
    tickets = sorted(deliveries(target)) if workload.has_target else []
    done = sorted(k for k, e in (view.effects.items() if view else ()) if e.get("done") is not None)
    return {"state": view.state if view else None, "steps": steps, "tickets": tickets, "effects_done": done}


def reference(workload: Workload, base: Path) -> tuple[dict[str, Any], dict[str, int], float]:
    """Runs the workload uninterrupted, logging every fault point it passes.

    Returns:
        (outputs, {point: highest occurrence count in one process}, seconds it took).
    """
    ws, target, log = base / "ref-ws", base / "ref-target", base / "points.log"
    start = time.monotonic()
    code = _run(workload, ws, target, log=log)
    seconds = time.monotonic() - start
    if code != 0:
        raise SystemExit(f"the uninterrupted {workload.name} run failed (exit {code})")
    counts: dict[tuple[str, str], int] = {}
    for line in log.read_text().splitlines():
        pid, name = line.split(" ", 1)
        counts[(pid, name)] = counts.get((pid, name), 0) + 1
    points: dict[str, int] = {}
    for (_, name), n in counts.items():
        points[name] = max(points.get(name, 0), n)
    return outputs(workload, ws, target), points, seconds


def scenarios(workload: Workload, points: dict[str, int], *, random_count: int, seed: int,
              max_occurrences: int) -> list[dict[str, Any]]:
    """Every (point, occurrence) kill, each with and without a second crash during recovery,
    plus ``random_count`` kills at random times. Deterministic for a seed."""
    rng = random.Random(seed)
    out = []
    for point in sorted(points):
        for n in range(1, min(points[point], max_occurrences) + 1):
            base = {"id": f"{workload.name}:{point}:{n}", "fault": f"{point}:{n}:kill"}
            out.append(base)
            again = rng.choice(RECOVERY_POINTS)
            out.append({**base, "id": base["id"] + f"+{again}", "recovery_fault": f"{again}:1:kill"})
    for i in range(random_count):
        out.append({"id": f"{workload.name}:random:{seed}:{i}", "kill_at": rng.random()})
    return out


def run_scenario(workload: Workload, spec: dict[str, Any], expected: dict[str, Any], ref_seconds: float) -> dict[str, Any]:
    """Runs one scenario in a fresh temporary folder and checks its final outputs."""
    with tempfile.TemporaryDirectory(prefix="chaos-") as tmp:
        base = Path(tmp)
        ws, target = base / "ws", base / "target"
        deaths = 0
        kill_after = spec["kill_at"] * ref_seconds if "kill_at" in spec else None
        code = _run(workload, ws, target, fault=spec.get("fault"), once=base / "once1", kill_after_s=kill_after)
        deaths += code == -signal.SIGKILL
        snapshot = [(r.seq, r.hash) for r in _records(ws)]
        attempts = 0
        if spec.get("recovery_fault"):
            code = _run(workload, ws, target, fault=spec["recovery_fault"], once=base / "once2")
            deaths += code == -signal.SIGKILL
        while True:
            attempts += 1
            code = _run(workload, ws, target)
            if code != -signal.SIGKILL or attempts > 3:
                break
        final = _records(ws)
        deaths += sum(1 for r in final if r.kind == "worker.exited" and "SIGKILL" in r.why)
        present = {(r.seq, r.hash) for r in final}
        lost = sum(1 for item in snapshot if item not in present)
        got = outputs(workload, ws, target)
        dup = sum(n - 1 for n in deliveries(target).values() if n > 1) if workload.has_target else 0
        return {"id": spec["id"], "exit": code, "deaths": deaths, "lost": lost, "duplicated_effects": dup,
                "divergent": int(got != expected), "verify_failed": int(not verify_records(final).ok),
                "records": len(final)}


def summarise(paths: list[Path]) -> dict[str, int]:
    totals = {"scenarios": 0, "deaths": 0, "lost": 0, "duplicated_effects": 0, "divergent": 0, "verify_failed": 0,
              "unfinished": 0}
    for path in paths:
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            totals["scenarios"] += 1
            for key in ("deaths", "lost", "duplicated_effects", "divergent", "verify_failed"):
                totals[key] += row[key]
            totals["unfinished"] += row["exit"] != 0
    return totals


def _print(totals: dict[str, int]) -> None:
    print(f"scenarios run: {totals['scenarios']}; process deaths injected: {totals['deaths']}; "
          f"lost records: {totals['lost']}; duplicated effects: {totals['duplicated_effects']}; "
          f"divergent final outputs: {totals['divergent']}; ledgers failing verify: {totals['verify_failed']}; "
          f"runs not finished: {totals['unfinished']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", default="synthetic", choices=[*WORKLOADS, "all"])
    parser.add_argument("--jobs", type=int, default=2, help="Scenarios run at once.")
    parser.add_argument("--limit", type=int, default=None, help="Run at most this many scenarios (a CI subset).")
    parser.add_argument("--shard", default="0/1", help="K/N: run the scenarios whose index mod N is K.")
    parser.add_argument("--out", default=None, help="Result file (JSON lines); default bench/results/chaos-<workload>.jsonl.")
    parser.add_argument("--random", type=int, default=20, help="Kills at random times per workload.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-occurrences", type=int, default=40, help="Highest occurrence of a point to kill at.")
    parser.add_argument("--sum", nargs="*", default=None, help="Only add up these result files.")
    args = parser.parse_args()
    if args.sum is not None:
        _print(summarise([Path(p) for p in args.sum]))
        return 0
    shard, shards = (int(x) for x in args.shard.split("/"))
    names = list(WORKLOADS) if args.workload == "all" else [args.workload]
    totals_paths = []
    for name in names:
        workload = WORKLOADS[name]
        out = Path(args.out) if args.out else ROOT / "bench" / "results" / f"chaos-{name}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        done = {json.loads(line)["id"] for line in out.read_text().splitlines() if line.strip()} if out.exists() else set()
        with tempfile.TemporaryDirectory(prefix="chaos-ref-") as tmp:
            expected, points, seconds = reference(workload, Path(tmp))
        specs = [s for i, s in enumerate(scenarios(workload, points, random_count=args.random, seed=args.seed,
                                                   max_occurrences=args.max_occurrences)) if i % shards == shard]
        todo = [s for s in specs if s["id"] not in done][: args.limit]
        print(f"{name}: {len(points)} fault points, {len(specs)} scenarios in shard {shard}/{shards}, "
              f"{len(specs) - len([s for s in specs if s['id'] not in done])} done before, running {len(todo)}",
              flush=True)
        with open(out, "a", encoding="utf-8") as sink, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(run_scenario, workload, copy.deepcopy(s), expected, seconds) for s in todo]
            for future in concurrent.futures.as_completed(futures):
                row = future.result()
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                if row["lost"] or row["duplicated_effects"] or row["divergent"] or row["verify_failed"] or row["exit"]:
                    print(f"  PROBLEM {row}", flush=True)
        totals_paths.append(out)
    totals = summarise(totals_paths)
    _print(totals)
    bad = totals["lost"] + totals["duplicated_effects"] + totals["divergent"] + totals["verify_failed"] + totals["unfinished"]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
