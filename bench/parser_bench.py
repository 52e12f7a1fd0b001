"""Parser benchmark and differential check: ``tsconvert.convert`` against CPython, on any corpus.

    python bench/parser_bench.py FOLDER [--exclude NAME]... [--repeat N] [--limit N] [--show N]
    python bench/parser_bench.py FOLDER --oracle [--exclude NAME]... [--show N]

Default mode: every ``.py`` file under FOLDER that the host's ``ast.parse`` accepts is parsed by
both, the trees are compared in ``tests/oracle/canon.py``'s canonical form (with its documented
normalisation on a host before 3.12) and each differing file is listed with the first node that
differs. Timings are the best of --repeat runs per file with the garbage collector paused (as
``timeit`` does); the summary gives the median and total per parser and the ratio
tree-sitter/host. The tree-sitter time includes tree-sitter's own parse.

--oracle: every ``.py`` file under FOLDER is parsed by CPython 3.14 (Pyodide, see
``tests/oracle/dump314.mjs``; install with ``bash .ci/install-pyodide``) and by ``tsconvert``,
compared exactly. A mismatch is a file CPython 3.14 accepts whose tree differs, or that
``tsconvert`` refuses; files CPython refuses are counted apart (``tsconvert`` is not a full
validator, see its docstring).

Results on this project's machine (2 cores, shared, so timings vary by about 20%),
tree-sitter 0.26.1, tree-sitter-python 0.25.0, host CPython 3.11.7:

* the host's standard library, tests included (``--exclude site-packages``; 1,781 files the
  host parses): 0 differ, 2 refused by tsconvert, both known gaps listed in ``tsconvert``'s
  docstring: ``test/test_compile.py`` (a line break after the dot of ``(bar.\\n baz)``) and
  ``test/test_future_stmt/badsyntax_future8.py`` (``from __future__ import *``, which
  ``ast.parse`` accepts and only the compiler refuses). Time: tree-sitter/host 2.62 in total
  (--repeat 3), 2.54 on the 196 files the host takes 10 ms or more to parse.
* the host's site-packages (11,563 files): 0 differ, 0 refused; ratio 2.74.
* CPython 3.14.2's standard library as Pyodide ships it (``python_stdlib.zip``, 559 files, real
  PEP 695/701 code), ``--oracle``: 0 mismatches.

Speed is printed by each run; see the module docstring of ``fleetledger.analysis.tsconvert``.
"""

from __future__ import annotations

import argparse
import ast
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fleetledger.analysis import tsconvert  # noqa: E402
from oracle import canon, oracle314  # noqa: E402

FSTRING_PARTS = sys.version_info >= (3, 12)


def python_files(folder: Path, exclude: list[str], limit: int | None) -> list[Path]:
    """The ``.py`` files under ``folder`` (sorted), leaving out any under a folder named in ``exclude``."""
    files = sorted(path for path in folder.rglob("*.py")
                   if path.is_file() and not set(path.relative_to(folder).parts[:-1]) & set(exclude))
    return files[:limit] if limit else files


def best_time(function: Any, argument: str, repeat: int) -> tuple[float, Any]:
    """The best wall time of ``repeat`` calls (GC paused), and the last result."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        gc.disable()
        try:
            start = time.perf_counter()
            result = function(argument)
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best, result


def compare_with_host(files: list[Path], repeat: int, show: int) -> int:
    host_times: list[float] = []
    ts_times: list[float] = []
    differ: list[str] = []
    refused: list[str] = []
    skipped = 0
    for path in files:
        try:
            text = canon.read_source(path.read_bytes())
            host_time, expected = best_time(ast.parse, text, repeat)
        except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
            skipped += 1
            continue
        try:
            ts_time, tree = best_time(tsconvert.convert, text, repeat)
        except tsconvert.TreeSitterSyntaxError as error:
            refused.append(f"{path}: {error}")
            continue
        host_times.append(host_time)
        ts_times.append(ts_time)
        difference = canon.first_difference(canon.canonical(expected, FSTRING_PARTS), canon.canonical(tree, FSTRING_PARTS))
        if difference:
            differ.append(f"{path}: {difference}")
        gc.collect()
    print(f"{len(host_times) + len(refused)} files the host parses ({skipped} it cannot were skipped): "
          f"{len(differ)} differ, {len(refused)} refused by tsconvert")
    for line in (refused + differ)[:show]:
        print("  " + line[:1000])
    if host_times:
        host_total, ts_total = sum(host_times), sum(ts_times)
        ratios = [ts / host for ts, host in zip(ts_times, host_times) if host > 0]
        print(f"host ast.parse:     median {statistics.median(host_times) * 1e3:8.2f} ms  total {host_total:8.2f} s")
        print(f"tsconvert.convert:  median {statistics.median(ts_times) * 1e3:8.2f} ms  total {ts_total:8.2f} s")
        print(f"ratio tree-sitter/host: total {ts_total / host_total:.2f}, median per file {statistics.median(ratios):.2f}")
        large = [(ts, host) for ts, host in zip(ts_times, host_times) if host >= 0.01]
        if large:
            print(f"ratio on files the host takes >= 10 ms to parse ({len(large)}): "
                  f"{sum(ts for ts, _ in large) / sum(host for _, host in large):.2f}")
    return 1 if differ or refused else 0


def compare_with_oracle(files: list[Path], show: int) -> int:
    equal = 0
    differ: list[str] = []
    refused: list[str] = []
    lenient: list[str] = []
    both_refuse = 0
    for result in oracle314.results([str(path) for path in files]):
        path = Path(result["path"])
        try:
            tree = canon.canonical(tsconvert.convert(canon.read_source(path.read_bytes())))
            error = None
        except (tsconvert.TreeSitterSyntaxError, SyntaxError, UnicodeDecodeError) as exc:
            tree, error = None, exc
        if not result["ok"]:
            if tree is None:
                both_refuse += 1
            else:
                lenient.append(f"{path}: CPython 3.14 says {result['error']} (line {result['line']})")
            continue
        if tree is None:
            refused.append(f"{path}: {error}")
            continue
        difference = canon.first_difference(result["tree"], tree)
        if difference:
            differ.append(f"{path}: {difference}")
        else:
            equal += 1
    print(f"{equal + len(differ) + len(refused)} files CPython 3.14 parses: {equal} equal, {len(differ)} differ, "
          f"{len(refused)} refused by tsconvert -> {len(differ) + len(refused)} mismatches")
    print(f"{both_refuse + len(lenient)} files CPython 3.14 refuses: {both_refuse} refused by tsconvert too, "
          f"{len(lenient)} converted anyway")
    for line in (refused + differ + lenient)[:show]:
        print("  " + line[:1000])
    return 1 if differ or refused else 0


def main() -> int:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("folder", type=Path, help="a folder of Python files (searched recursively)")
    arguments.add_argument("--oracle", action="store_true", help="compare with CPython 3.14 (Pyodide) instead of the host")
    arguments.add_argument("--exclude", action="append", default=[], metavar="NAME",
                           help="leave out folders of this name (e.g. site-packages); repeatable")
    arguments.add_argument("--repeat", type=int, default=1, help="timing runs per file and parser (best is kept)")
    arguments.add_argument("--limit", type=int, default=None, help="only the first N files (sorted by path)")
    arguments.add_argument("--show", type=int, default=50, help="list at most N differing files")
    options = arguments.parse_args()
    files = python_files(options.folder, options.exclude, options.limit)
    if not files:
        arguments.error(f"no .py files under {options.folder}")
    if options.oracle:
        try:
            return compare_with_oracle(files, options.show)
        except oracle314.OracleUnavailable as error:
            print(error, file=sys.stderr)
            return 2
    return compare_with_host(files, max(1, options.repeat), options.show)


if __name__ == "__main__":
    sys.exit(main())
