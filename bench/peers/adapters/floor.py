"""The floor: a one-row INSERT transaction in SQLite, WAL + synchronous=FULL, and the
``write+fsync`` probe (4 KiB written and fsynced in a file of the same folder): the disk weather.

    python floor.py steps --dir D --n N     -> seconds for N transactions
    python floor.py probe --dir D --n N     -> seconds for N write+fsync
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from _common import Timed, emit, not_measured, parse


def floor(folder: Path, n: int) -> Timed:
    conn = sqlite3.connect(folder / "floor.sqlite3", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    with Timed() as timed:
        for i in range(n):
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t (body) VALUES (?)", (f'{{"name":"s{i}","result":{{"value":"{i:016x}"}}}}',))
            conn.execute("COMMIT")
    conn.close()
    return timed


def probe(folder: Path, n: int) -> float:
    fd = os.open(folder / "probe.bin", os.O_WRONLY | os.O_CREAT, 0o600)
    block = b"\0" * 4096
    try:
        start = time.perf_counter()
        for i in range(n):
            os.pwrite(fd, block, (i % 64) * 4096)
            os.fsync(fd)
        return time.perf_counter() - start
    finally:
        os.close(fd)


def main() -> None:
    args = parse()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    if args.workload == "steps":
        emit(**floor(folder, args.n).fields(), steps=args.n)
    elif args.workload == "probe":
        emit(seconds=probe(folder, args.n), steps=args.n)
    else:
        not_measured(f"the floor has no {args.workload} workload")


if __name__ == "__main__":
    main()
