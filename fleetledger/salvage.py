"""``fleetledger salvage``: keep every readable record of a damaged SQLite ledger, say exactly
what was lost, and let the run continue from what is left.

What it does, under the workspace's run lock:

1. rebuilds what the ledger held without letting SQLite open the damaged files: the main file
   with every intact committed WAL frame applied, damaged frames skipped (``ledger.damage``), in
   a scratch folder inside the workspace;
2. reads that image record by record (one damaged page costs the records on it, not the rest)
   and keeps the longest prefix ``seq 1..K`` whose records all read back, recompute their hash
   and chain to their run's previous record. A ledger is only usable as a gap-free, chained
   prefix: a record after the first lost one cannot be appended after (its run's chain, or the
   global sequence, has a hole), so every readable record after the loss is written, exactly
   as it was, to ``after-loss.jsonl`` beside the damaged ledger for a person, and counted;
3. writes the prefix into a new ledger, verifies it (``verify.verify_records``: hash chains,
   sequence numbers, intents before results, fences, checkpoints);
4. moves the damaged ledger (main file, WAL, shared memory), the run-state file and the heads
   this user had signed for it into ``<workspace>/ledger.damaged-<epoch ms>/`` (never deleted),
   puts the new ledger in its place, and signs each run's head afresh at its last kept record
   (the old heads stay in that folder). ``salvage.json`` in the workspace holds the report.

The run then continues with ``fleetledger resume`` (or the same job command): it folds what is
left and does again the work whose records were lost; steps are deterministic, so its outputs
equal those of an uninterrupted run. Effects whose ``effect.done`` was lost are reconciled with
their target as after any crash (``effects``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import errors, fsutil, heads
from .ledger import Storage, damage
from .ledger.records import GENESIS_HASH, NewRecord, Record, expected_hash
from .ledger.sqlite import SQLiteStorage
from .verify import verify_records
from .workspace import Workspace

REPORT_FILE = "salvage.json"


@dataclass(kw_only=True)
class SalvageReport:
    """What ``salvage`` kept and lost (JSON-ready with ``to_json``).

    Attributes:
        kept: ``(1, K)``: the records kept in the new ledger (``(0, 0)`` when none).
        unreadable: Sequence ranges that could not be read back at all.
        corrupt: Sequence numbers that read back with a hash that does not match their content.
        after_loss: Sequence numbers that read back whole after the first loss (kept aside).
        lost_by_run: Per run, the ranges of its records not kept (``"a-b"``), where known.
        unknown_run: Unreadable ranges whose run could not be told.
        heads: Per run, the seq of the head this user had signed, when it lies beyond what was kept.
        problems: What ``verify`` found in the new ledger (empty when it verifies).
        damaged_kept_in: The folder holding the damaged ledger.
        after_loss_file: The JSON-lines file of the readable records after the loss.
    """

    kept: tuple[int, int] = (0, 0)
    unreadable: list[list[int]] = field(default_factory=list)
    corrupt: list[int] = field(default_factory=list)
    after_loss: list[int] = field(default_factory=list)
    lost_by_run: dict[str, list[str]] = field(default_factory=dict)
    unknown_run: list[list[int]] = field(default_factory=list)
    heads: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    damaged_kept_in: str = ""
    after_loss_file: str = ""
    wal: str | None = None
    pages: list[str] = field(default_factory=list)

    @property
    def lost_anything(self) -> bool:
        """True when a record of the damaged ledger is not in the new one."""
        return bool(self.unreadable or self.corrupt or self.after_loss or self.heads)

    def lines(self) -> list[str]:
        """Returns what ``fleetledger salvage`` prints: the damage found, what was kept and where
        the damaged ledger went, each range not kept and why, per run, and the verdict (the new
        ledger verifies, or not). Not yet made printable: the caller escapes them."""
        lines = [f"damaged: {found}" for found in [self.wal, *self.pages] if found]
        first, last = self.kept
        lines.append(f"kept {last} records ({damage.text([[first, last]]) if last else 'none'}) in a new ledger; "
                     f"the damaged one is in {self.damaged_kept_in}")
        if self.unreadable:
            lines.append(f"lost: {damage.text(self.unreadable)}: unreadable")
        if self.corrupt:
            lines.append(f"lost: {damage.text(damage.ranges(self.corrupt))}: "
                         "read back with a hash that does not match their content")
        if self.after_loss:
            lines.append(f"not kept: {damage.text(damage.ranges(self.after_loss))}: readable, but after the loss "
                         f"(their chain cannot continue there); kept as they were in {self.after_loss_file}")
        lines += [f"run {run}: not kept: seq {', '.join(spans)}" for run, spans in self.lost_by_run.items()]
        lines += [f"run {run}: its signed head was at seq {seq}: records up to it are gone without a trace"
                  for run, seq in self.heads.items()]
        if self.unknown_run:
            lines.append(f"{damage.text(self.unknown_run)}: their run cannot be told")
        lines += [f"problem in the new ledger: {problem}" for problem in self.problems]
        lines.append("nothing was lost" if not self.lost_anything else
                     "the new ledger verifies; `fleetledger resume` continues the run from what is left and redoes "
                     "what was lost" if not self.problems else "the new ledger does NOT verify; see the problems above")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {"kept": list(self.kept), "unreadable": self.unreadable, "corrupt": self.corrupt,
                "after_loss": damage.ranges(self.after_loss), "lost_by_run": self.lost_by_run,
                "unknown_run": self.unknown_run, "heads_beyond": self.heads, "problems": self.problems,
                "damaged_kept_in": self.damaged_kept_in, "after_loss_file": self.after_loss_file,
                "wal": self.wal, "pages": self.pages}


def _record(row: tuple[Any, ...]) -> Record:
    return Record(seq=row[0], run_id=row[1], ts_ms=row[2], actor=row[3], kind=row[4], key=row[5], task=row[6],
                  epoch=row[7], why=row[8], payload_json=row[9], policy_hash=row[10], prev_hash=row[11], hash=row[12])


def _runs_of(image: Path) -> dict[int, str]:
    """``{seq: run_id}`` from the ``records_by_run`` index alone (it may be whole where the
    table's pages are not), or {} when it cannot be read."""
    try:
        conn = sqlite3.connect(f"file:{image}?mode=ro", uri=True)
        try:
            return {seq: run for run, seq in conn.execute(
                "SELECT run_id, seq FROM records INDEXED BY records_by_run").fetchall()}
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return {}


def _whole_batches(kept: list[Record]) -> int:
    """How many records of the prefix ``kept`` to keep so that it does not end inside a batch
    (records the coordinator marked as meaning something only together, ``coordinator.atomic``:
    the first has ``batch`` in its payload): the index of the first record of a batch that
    reaches past the prefix, else ``len(kept)``."""
    end = kept[-1].seq if kept else 0
    for index, record in enumerate(kept):
        if '"batch":' in record.payload_json:
            size = record.payload.get("batch")
            if isinstance(size, int) and record.seq + size - 1 > end:
                return index
    return len(kept)


def _loss_notes(report: SalvageReport, lasts: dict[str, Record]) -> list[NewRecord]:
    """One ``decision`` record (payload ``salvage``) for each run that keeps records and may have
    lost some: its effects are then settled with their target before they are performed
    (``effects.perform``), since an effect's intent and result may be among the lost records."""
    maybe = set(report.lost_by_run) | set(report.heads) if not report.unknown_run else set(lasts)
    return [NewRecord(run_id=run, actor="salvage", kind="decision",
                      why=f"salvage kept this run's records up to seq {lasts[run].seq}; later ones were lost to damage",
                      payload={"salvage": {"kept_upto": lasts[run].seq, "lost": report.lost_by_run.get(run, []),
                                           "unknown_run": report.unknown_run}})
            for run in sorted(maybe & set(lasts))]


def unnoted_whole_loss(workspace: Workspace, storage: Storage) -> dict[str, Any] | None:
    """The ``salvage`` note a run starting now records first, when the workspace's last salvage
    lost runs it kept nothing of and no run has noted that salvage yet; else None.

    A run that keeps records carries its own note (``_loss_notes``). A run salvage kept nothing
    of has no record left to carry one: the same job command then starts a new run, whose
    effects may have happened under the lost one, so they are settled with their target before
    they are performed (``effects.perform`` reads ``RunView.salvaged``), as in a run that kept
    records. The report (``salvage.json``) only ever adds that caution, so an unreadable one
    adds it too. It is noted once: the note names the report by its SHA-256.

    Raises:
        LedgerError: the ledger cannot be read.
    """
    try:
        data = (workspace.root / REPORT_FILE).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        data = f"unreadable: {exc}".encode()
    report_id = hashlib.sha256(data).hexdigest()
    if next(iter(storage.kind_records("decision", containing=report_id)), None) is not None:
        return None
    try:
        report = json.loads(data)
        lost, unknown = dict(report["lost_by_run"]), list(report.get("unknown_run") or [])
    except (ValueError, KeyError, TypeError):
        return {"kept_upto": 0, "lost": [], "runs": [], "unknown_run": [], "report": report_id, "report_unreadable": True}
    present = {record.run_id for record in storage.first_records()}
    gone = sorted(run for run in lost if run not in present)
    if not gone and not unknown:
        return None
    return {"kept_upto": 0, "lost": sorted(r for run in gone for r in lost[run]), "runs": gone, "unknown_run": unknown,
            "report": report_id}


def _ledger_path(workspace: Workspace) -> Path:
    url = workspace.ledger_url
    if not url.startswith("sqlite:///"):
        raise errors.UsageError("salvage works on the workspace's SQLite ledger; a PostgreSQL ledger is repaired "
                                "with PostgreSQL's own tools (restore a backup, or amcheck)")
    return Path(url[len("sqlite:///"):])


def salvage(workspace: Workspace, *, now_ms: int, key: bytes) -> SalvageReport:
    """Replaces the workspace's (damaged) ledger with a new one holding every record that can be
    kept, and reports what was lost. Nothing is deleted: the damaged files are moved aside.

    Args:
        workspace: The workspace (no coordinator may run it).
        now_ms: Epoch ms, names the folder the damaged ledger is moved to.
        key: The user's key (``workspace.owner_key()``), to sign the runs' new heads.

    Returns:
        The report (also written to ``<workspace>/salvage.json``).

    Raises:
        NoRunError: the workspace has no ledger.
        RunLockedError: a coordinator runs the workspace now.
        UsageError: the ledger is not a SQLite file.
        OSError: the scratch copy, the new ledger or the moves could not be written (the disk
            is full...); the damaged ledger is then still in place, untouched.
    """
    db = _ledger_path(workspace)
    if not db.exists():
        raise errors.NoRunError(f"no ledger in {workspace.root}")
    url = f"sqlite:///{db}"
    side = [db.with_name(db.name + suffix) for suffix in ("-wal", "-shm")]
    with workspace.lock(f"salvage-{now_ms}"):
        work = workspace.root / f".salvage-{now_ms}"
        work.mkdir(mode=0o700)
        try:
            return _salvage_locked(workspace, db, url, side, work, now_ms, key)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _salvage_locked(workspace: Workspace, db: Path, url: str, side: list[Path], work: Path, now_ms: int,
                    key: bytes) -> SalvageReport:
    report = SalvageReport()
    scan = damage.scan_wal(side[0])
    report.wal = scan.problem(side[0])
    img = work / "image.sqlite3"
    damage.image(db, scan, img)
    report.pages = damage.bad_pages(img)
    template = work / "template.sqlite3"
    SQLiteStorage(template).close()  # a new, empty ledger of the same schema
    if damage.rebuild_first_page(img, template):
        report.pages = ["page 1 (the schema): rebuilt from the ledger's own schema", *damage.bad_pages(img)]
    found = heads.gather(url)
    signed = {run: max((h["seq"] for _, h in items if heads.sealed(h, key) and h.get("run_id") == run), default=0)
              for run, items in found.items()}
    kept: list[Record] = []
    chain: dict[str, str] = {}
    readable_after: list[Record] = []
    unreadable: list[int] = []
    cut = False
    for seq, row in damage.probe(img, upper=max(signed.values(), default=0)):
        if row is None:
            unreadable.append(seq)
            cut = True
            continue
        record = _record(row)
        whole = expected_hash(record) == record.hash and record.seq == seq
        if not whole:
            report.corrupt.append(seq)
            cut = True
        elif not cut and record.prev_hash == chain.get(record.run_id, GENESIS_HASH):
            kept.append(record)
            chain[record.run_id] = record.hash
        else:
            cut = True
            readable_after.append(record)
    whole = _whole_batches(kept)
    readable_after[:0] = kept[whole:]  # part of a batch whose rest was lost: kept aside with what follows
    kept = kept[:whole]
    report.unreadable = damage.ranges(unreadable)
    report.after_loss = [r.seq for r in readable_after]
    report.kept = (1, len(kept)) if kept else (0, 0)
    last_kept = {r.run_id: r.seq for r in kept}
    runs_of = _runs_of(img)
    lost: dict[str, list[int]] = {}
    for r in readable_after:
        lost.setdefault(r.run_id, []).append(r.seq)
    unknown = []
    for seq in unreadable + report.corrupt:
        if seq in runs_of:
            lost.setdefault(runs_of[seq], []).append(seq)
        else:
            unknown.append(seq)
    top = kept[-1].seq if kept else 0
    for run, seq in signed.items():
        known = max([last_kept.get(run, 0), *lost.get(run, [])])
        if seq > top and seq > known:
            report.heads[run] = seq  # signed beyond every record read: its records after `known` are gone unseen
    report.lost_by_run = {run: [f"{a}-{b}" if a != b else str(a) for a, b in damage.ranges(seqs)]
                          for run, seqs in sorted(lost.items())}
    report.unknown_run = damage.ranges(unknown)

    new = work / db.name
    storage = SQLiteStorage(new)
    try:
        storage.copy_in(kept)
        lasts = {r.run_id: r for r in kept}
        for outcome in storage.append(_loss_notes(report, lasts), now_ms=now_ms):
            lasts[outcome.record.run_id] = outcome.record
        report.problems = verify_records(storage.read()).problems
    finally:
        storage.close()

    aside = workspace.root / f"{db.name}.damaged-{now_ms}"
    aside.mkdir(mode=0o700)
    report.damaged_kept_in = str(aside)
    report.after_loss_file = str(aside / "after-loss.jsonl")
    fsutil.atomic_write(aside / "after-loss.jsonl",
                        "".join(json.dumps({**r.to_json(), "payload_json": r.payload_json}, sort_keys=True) + "\n"
                                for r in readable_after).encode())
    folder = heads.head_path(url, "-").parent
    if folder.is_dir():
        (aside / "heads").mkdir(mode=0o700)
        for head in folder.glob("*.json"):
            shutil.copy2(head, aside / "heads" / head.name)
    for path in [db, *side, workspace.state_path]:
        if path.exists():
            os.replace(path, aside / path.name)
    fsutil.fsync_dir(aside)
    os.replace(new, db)
    fsutil.fsync_dir(db.parent)
    for run in found:  # heads of runs that lost every record would name records that are gone
        if run not in last_kept and heads.head_path(url, run).exists():
            os.replace(heads.head_path(url, run), aside / f"head-{heads.head_path(url, run).name}")
    for run, record in lasts.items():
        heads.store(url, heads.sign(run, record.seq, record.hash, key))
    fsutil.atomic_write(workspace.root / REPORT_FILE, (json.dumps(report.to_json(), indent=2) + "\n").encode())
    return report
