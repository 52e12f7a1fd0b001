"""Storage benchmark: durable appends and lease claims per second, SQLite next to PostgreSQL.

    python bench/storage_bench.py [--quick] [--seconds S] [--batch N] [--tasks N] [--postgres URL]

For 1, 4, 16 and 64 concurrent writers, each a process with its own connection (as
coordinators on separate hosts would be), on a fresh ledger per measurement:

* appends/s: every writer appends one record per transaction (--batch N: N records), so each
  transaction is one durable commit (SQLite: WAL, synchronous=FULL; PostgreSQL:
  synchronous_commit=on, the server's fsync) through the whole append path: the ledger lock,
  idempotency, the hash chain. Appends/s counts records.
* claims/s: every writer reads the records appended since its last read (its view of the
  leases), picks a random task of a shared pool (256 by default) that it sees free, and claims
  it at the next epoch (``task.assigned``); the ledger's lease rules grant the claim only if
  nobody claimed the task since, and refuse it otherwise. A granted claim is released at once
  (``lease.released``, a second durable append) so the task can be claimed again. Claims/s
  counts granted claims; attempts/s every claim transaction, granted or refused.

After each measurement the ledger is read back and verified (contiguous sequence numbers, an
intact hash chain, no lease granted twice). PostgreSQL's URL comes from --postgres, else
FLEETLEDGER_TEST_POSTGRES, else .cache/postgres-url (written by .ci/start-postgres); each
measurement gets a schema of its own, dropped afterwards.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fleetledger import errors  # noqa: E402
from fleetledger.ledger import Appended, NewRecord, open_storage  # noqa: E402
from fleetledger.verify import verify_records  # noqa: E402

WRITERS = (1, 4, 16, 64)
RUN = "bench"


def _append_loop(store: Any, worker: int, seconds: float, batch: int) -> tuple[int, int, int, int]:
    done = failed = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        records = [NewRecord(run_id=RUN, actor=f"w{worker:02d}", kind="step.intent", key=f"w{worker}/{done + i}",
                             payload={"n": done + i}) for i in range(batch)]
        try:
            store.append(records, now_ms=int(time.time() * 1000))
            done += batch
        except errors.LedgerError:
            failed += 1
    return done, done, failed, done


def _claim_loop(store: Any, worker: int, seconds: float, tasks: int) -> tuple[int, int, int, int]:
    actor = f"w{worker:02d}"
    chooser = random.Random(worker)
    leases: dict[str, tuple[str, int]] = {}  # task -> its last lease event (kind, epoch), as read
    seen = claims = attempts = failed = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for record in store.read(RUN, after_seq=seen):
            leases[record.task] = (record.kind, record.epoch)
            seen = record.seq
        task = f"t{chooser.randrange(tasks)}"
        kind, epoch = leases.get(task, ("", 0))
        if kind == "task.assigned":
            continue  # held by another writer: pick another task
        try:
            outcome = store.append([NewRecord(run_id=RUN, actor=actor, kind="task.assigned", task=task,
                                              epoch=epoch + 1, payload={"worker": actor, "expires_ms": 2**41})],
                                   now_ms=int(time.time() * 1000))[0]
        except errors.LedgerError:
            failed += 1
            continue
        attempts += 1  # refused when another writer claimed the task since this one read the ledger
        if isinstance(outcome, Appended):
            claims += 1
            failed += _release(store, actor, task, epoch + 1)
    return claims, attempts, failed, 2 * claims


def _release(store: Any, actor: str, task: str, epoch: int) -> int:
    """Releases a granted claim, retrying until it is recorded; returns the failed tries."""
    failed = 0
    while True:
        try:
            store.append([NewRecord(run_id=RUN, actor=actor, kind="lease.released", task=task, epoch=epoch)],
                         now_ms=int(time.time() * 1000))
            return failed
        except errors.LedgerError:
            failed += 1


def _writer(workload: str, url: str, worker: int, seconds: float, size: int, barrier: Any, results: Any) -> None:
    try:
        with open_storage(url) as store:
            barrier.wait()
            if workload == "appends":
                counts = _append_loop(store, worker, seconds, size)
            else:
                counts = _claim_loop(store, worker, seconds, size)
            results.put((worker, *counts, None))
    except BaseException as exc:  # reported by the parent
        barrier.abort()
        results.put((worker, 0, 0, 0, 0, repr(exc)))


def measure(workload: str, url: str, writers: int, seconds: float, size: int) -> tuple[float, float, int]:
    """Runs ``writers`` processes for ``seconds``; returns (granted/s, attempts/s, failed appends).

    ``size`` is the batch size of appends, or the number of tasks to claim from.
    """
    open_storage(url).close()  # install the schema before the writers race to it
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(writers)
    results = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(workload, url, w, seconds, size, barrier, results)) for w in range(writers)]
    for proc in procs:
        proc.start()
    rows = [results.get() for _ in procs]
    for proc in procs:
        proc.join()
    problems = [row[5] for row in rows if row[5]]
    if problems:
        raise SystemExit(f"{workload} with {writers} writers failed: {problems[0]}")
    _check(url, workload, sum(row[4] for row in rows))
    return sum(row[1] for row in rows) / seconds, sum(row[2] for row in rows) / seconds, sum(row[3] for row in rows)


def _check(url: str, workload: str, appended: int) -> None:
    with open_storage(url) as store:
        records = list(store.read())
    report = verify_records(records)
    if not report.ok or [r.seq for r in records] != list(range(1, appended + 1)):
        raise SystemExit(f"{workload} on {url}: the ledger is not intact: {report.problems[:3]}, "
                         f"{len(records)} records for {appended} appended")


class PostgresSchemas:
    """Fresh schemas on a PostgreSQL server, one per measurement, dropped afterwards."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.admin = psycopg.connect(server, autocommit=True)

    def new(self) -> tuple[str, str]:
        schema = f"fl_bench_{secrets.token_hex(4)}"
        self.admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        parts = urlsplit(self.server)
        option = "options=" + quote(f"-csearch_path={schema}", safe="")
        query = f"{parts.query}&{option}" if parts.query else option
        return schema, urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))

    def drop(self, schema: str) -> None:
        self.admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def _postgres_server(given: str | None) -> str:
    url = given or os.environ.get("FLEETLEDGER_TEST_POSTGRES")
    cached = ROOT / ".cache" / "postgres-url"
    if not url and cached.is_file():
        url = cached.read_text(encoding="utf-8").strip()
    if not url:
        raise SystemExit("no PostgreSQL server: run `bash .ci/start-postgres`, or pass --postgres URL")
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1 s per measurement (a smoke run).")
    parser.add_argument("--seconds", type=float, default=5.0, help="Seconds per measurement (default 5).")
    parser.add_argument("--batch", type=int, default=1, help="Records per append transaction (default 1).")
    parser.add_argument("--tasks", type=int, default=256, help="Tasks the writers claim from (default 256).")
    parser.add_argument("--postgres", default=None, help="PostgreSQL server URL.")
    args = parser.parse_args()
    seconds = 1.0 if args.quick else args.seconds
    schemas = PostgresSchemas(_postgres_server(args.postgres))
    print(f"storage benchmark: {seconds:g} s per measurement, one process and connection per writer, "
          f"{os.cpu_count()} CPUs; appends in batches of {args.batch}; claims from {args.tasks} tasks: "
          "granted/s (attempts/s)")
    print(f"{'writers':>7}  {'sqlite appends/s':>16}  {'postgres appends/s':>18}  "
          f"{'sqlite claims/s':>24}  {'postgres claims/s':>24}")
    with tempfile.TemporaryDirectory(dir=ROOT / ".cache" if (ROOT / ".cache").is_dir() else None) as tmp:
        for writers in WRITERS:
            cells: dict[tuple[str, str], tuple[float, float, int]] = {}
            for workload, size in (("appends", args.batch), ("claims", args.tasks)):
                cells[("sqlite", workload)] = measure(
                    workload, f"sqlite:///{Path(tmp) / f'{workload}-{writers}.sqlite3'}", writers, seconds, size)
                schema, url = schemas.new()
                try:
                    cells[("postgres", workload)] = measure(workload, url, writers, seconds, size)
                finally:
                    schemas.drop(schema)
            failed = sum(cell[2] for cell in cells.values())
            claims = {b: f"{cells[(b, 'claims')][0]:,.0f} ({cells[(b, 'claims')][1]:,.0f})" for b in ("sqlite", "postgres")}
            print(f"{writers:>7}  {cells[('sqlite', 'appends')][0]:>16,.0f}  {cells[('postgres', 'appends')][0]:>18,.0f}  "
                  f"{claims['sqlite']:>24}  {claims['postgres']:>24}"
                  + (f"  ({failed} append transactions failed with LedgerError and were tried again)" if failed else ""),
                  flush=True)


if __name__ == "__main__":
    main()
