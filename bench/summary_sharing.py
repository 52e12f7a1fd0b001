"""What sharing function summaries between the files one worker analyses saves, and a check that
no file's report depends on it.

Runs the detect step (bandit and the taint engine) on a sample of a tree's Python files three
times in this process: each file with nothing shared (the caches cleared before it: the
baseline), then all of them in path order and in reverse order with the worker's caches kept
(``fleetledger.analysis.summary_sharing``). Prints the CPU time of each and its ratio to the
baseline, and the files whose report differs from the baseline's (the files read aside, which
adopting may add to). ``--pairs N`` also analyses N pairs of the sample (chosen with a fixed
seed), each with fresh caches, the second file after the first only: what one file's analysis
leaves shared for the next is then seen alone (a longer order hides it when a file in between
computes the summary first; Flask's ``app.py`` after ``templating.py`` was one). A file that differs is a determinism bug, except one whose analysis
reached ``program.MAX_MODULES`` (its report says so), where which modules are left out depends
on the order they were loaded in.

Run: ``python bench/summary_sharing.py TREE [--under django] [--every 3] [--limit 300] [--pairs 0]``, e.g. on
the Django 5.1.4 sdist. The tree is read only.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from fleetledger.analysis import program, summary_sharing  # noqa: E402
from fleetledger.jobs.scan import modules  # noqa: E402
from fleetledger.jobs.scan.detect import detect_file  # noqa: E402


def _reports(tree: Path, files: list[str], readable: dict[str, str], *, shared: bool) -> tuple[float, dict[str, object]]:
    """(CPU seconds, path -> report without the files read) of detecting ``files`` in order."""
    out: dict[str, object] = {}
    _clear()
    started = time.process_time()
    for path in files:
        if not shared:
            _clear()
        report = json.loads(json.dumps(dataclasses.asdict(detect_file(tree, path, readable=readable)), default=str))
        report.pop("read", None)
        report.pop("depends", None)
        out[path] = report
    return time.process_time() - started, out


def _clear() -> None:
    summary_sharing._SHARED.clear()
    program._SHARED_MODULES.clear()
    modules._parsed.clear()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--under", default="", help="only files below this folder of the tree")
    parser.add_argument("--every", type=int, default=3, help="take every N-th file (in path order)")
    parser.add_argument("--limit", type=int, default=300, help="at most this many files")
    parser.add_argument("--pairs", type=int, default=0, help="also this many pairs, each with fresh caches")
    args = parser.parse_args()
    tree = args.tree.resolve()
    readable = {str(p.relative_to(tree)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(tree.rglob("*.py"))}
    files = sorted(p for p in readable if p.startswith(args.under))[::args.every][:args.limit]
    base_time, base = _reports(tree, files, readable, shared=False)
    print(f"{len(files)} files of {tree}")
    print(f"nothing shared (baseline): {base_time:7.1f} s CPU")
    differing = 0
    for name, order in (("shared, path order", files), ("shared, reverse order", files[::-1])):
        spent, reports = _reports(tree, order, readable, shared=True)
        differ = sorted(p for p in files if reports[p] != base[p])
        differing += len(differ)
        print(f"{name + ':':26} {spent:7.1f} s CPU, ratio {spent / base_time:.2f}; reports differing: {len(differ)}")
        for path in differ[:10]:
            print(f"    {path}")
    chosen = random.Random(0)
    pairs = [tuple(chosen.sample(files, 2)) for _ in range(args.pairs if len(files) > 1 else 0)]
    differ_pairs = [(first, second) for first, second in pairs
                    if _reports(tree, [first, second], readable, shared=True)[1][second] != base[second]]
    if pairs:
        differing += len(differ_pairs)
        print(f"pairs, fresh caches each: {len(pairs)}; second report differing: {len(differ_pairs)}")
        for first, second in differ_pairs[:10]:
            print(f"    {second} after {first}")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
