"""Damage in a SQLite ledger, found before SQLite is trusted with the file.

Two places can hold damage:

* **the WAL** (``ledger.sqlite3-wal``): committed transactions that no checkpoint has copied
  into the main file yet. At open, SQLite keeps the frames up to the first one whose checksum
  or salt does not match and silently drops every frame after it; the next checkpoint makes
  that loss permanent. So the WAL is read here, byte by byte, *before* SQLite opens the
  database (format: https://www.sqlite.org/fileformat2.html#walformat): a frame that fails its
  checksum followed by frames that pass theirs (each checked from its predecessor's stored
  checksum) and include a commit means committed transactions sit behind damage. A torn tail
  (a crash during an unacknowledged commit) has no valid frame after the break and is normal.
* **the main file**: ``PRAGMA quick_check`` (``SQLiteStorage`` runs it at every open).

``image`` rebuilds what the ledger held (the main file with every intact committed WAL frame
applied, damaged frames skipped) as a plain database file, without SQLite touching the
originals; ``probe`` then reads it record by record, so one damaged page costs the records
on it, not the rest. ``salvage`` and the error messages of every command stand on these.
"""

from __future__ import annotations

import array
import os
import sqlite3
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .pages import table_leaf_rows, varint

DEFAULT_PAGE_SIZE = 4096
"""SQLite's page size for a new file, which the ledger keeps; assumed when page 1 is unreadable
and no WAL names the size."""
WAL_MAGIC = (0x377F0682, 0x377F0683)
WAL_HEADER = 32
FRAME_HEADER = 24


@dataclass(frozen=True, kw_only=True)
class Frame:
    """One WAL frame: its index (from 0), byte offset, page number, commit size (the database's
    size in pages after the commit, 0 when not a commit frame) and page bytes; ``intact`` when its
    salts are the WAL's and its checksum holds from its predecessor's stored checksum."""

    index: int
    offset: int
    page: int
    commit: int
    data: bytes
    intact: bool


@dataclass(kw_only=True)
class WalScan:
    """What the WAL holds.

    Attributes:
        page_size: The WAL's page size (0 when there is no usable WAL).
        frames: Every whole frame, in order.
        valid: Frames SQLite itself would keep (up to the last commit before the first break).
        damaged: Frames that fail their check while intact committed frames follow them.
    """

    page_size: int = 0
    frames: list[Frame] = field(default_factory=list)
    valid: int = 0
    damaged: list[Frame] = field(default_factory=list)
    header_lost: bool = False

    @property
    def broken(self) -> bool:
        """True when SQLite would lose committed transactions of this WAL at open."""
        return bool(self.damaged) or self.header_lost

    def problem(self, path: Path) -> str | None:
        """One sentence naming the damage (frames, byte offsets, pages), or None."""
        if self.header_lost:
            commits = sum(1 for f in self.frames if f.intact and f.commit)
            return (f"the WAL {path} has a damaged header (bytes 0-{WAL_HEADER - 1}): SQLite would ignore the whole "
                    f"WAL at open and silently drop its {commits} committed transaction(s)")
        if not self.damaged:
            return None
        first, last = self.damaged[0], self.damaged[-1]
        frames = f"frame {first.index}" if first is last else f"frames {first.index}-{last.index}"
        after = sum(1 for f in self.frames if f.index > last.index and f.intact and f.commit)
        return (f"the WAL {path} is damaged at {frames} (bytes {first.offset}-{last.offset + FRAME_HEADER + self.page_size - 1}, "
                f"page {'/'.join(str(f.page) for f in self.damaged)}), with {after} committed transaction(s) after it that "
                "SQLite would silently drop at open")


def _checksum(data: bytes, seed: tuple[int, int], big_endian: bool) -> tuple[int, int]:
    """SQLite's WAL checksum of ``data`` (a multiple of 8 bytes) from ``seed``."""
    s0, s1 = seed
    words = array.array("I", data)
    if big_endian != (sys.byteorder == "big"):
        words.byteswap()
    pairs = iter(words)
    for x0, x1 in zip(pairs, pairs):
        s0 = (s0 + x0 + s1) & 0xFFFFFFFF
        s1 = (s1 + x1 + s0) & 0xFFFFFFFF
    return s0, s1


def scan_wal(wal: Path) -> WalScan:
    """Reads and checks the WAL file at ``wal`` (read-only; SQLite is not involved).

    Returns:
        The scan; an empty one when the file is missing or empty. A WAL without a valid header
        is one SQLite ignores: nothing in it is lost when it holds no committed frames (a WAL
        being created), but frames that agree with each other and include a commit mean the
        header was damaged, and the scan says so (``header_lost``, ``_headless``).
    """
    try:
        raw = wal.read_bytes()
    except FileNotFoundError:
        return WalScan()
    if len(raw) < WAL_HEADER:
        return WalScan()
    magic, _version, page_size, _ckpt, salt1, salt2, c1, c2 = struct.unpack(">8I", raw[:WAL_HEADER])
    if magic not in WAL_MAGIC or page_size < 512 or page_size & (page_size - 1):
        return _headless(raw)
    big = bool(magic & 1)
    if _checksum(raw[:24], (0, 0), big) != (c1, c2):
        return _headless(raw)
    scan = WalScan(page_size=page_size)
    size = FRAME_HEADER + page_size
    stored = (c1, c2)
    broken = False
    for index, offset in enumerate(range(WAL_HEADER, len(raw) - size + 1, size)):
        header = raw[offset:offset + FRAME_HEADER]
        page, commit, s1, s2, f1, f2 = struct.unpack(">6I", header)
        data = raw[offset + FRAME_HEADER:offset + size]
        intact = (s1, s2) == (salt1, salt2) and _checksum(header[:8] + data, stored, big) == (f1, f2)
        stored = (f1, f2)
        scan.frames.append(Frame(index=index, offset=offset, page=page, commit=commit, data=data, intact=intact))
        if not intact:
            broken = True
        elif not broken and commit:
            scan.valid = index + 1
    later = [f for f in scan.frames[scan.valid:] if f.intact and f.commit]
    if later:
        scan.damaged = [f for f in scan.frames[scan.valid:later[-1].index] if not f.intact]
    return scan


def _headless(raw: bytes) -> WalScan:
    """The frames of a WAL whose header is unreadable, when they show it held committed
    transactions: for some page size and byte order, the frames with the most common salts
    include a commit and at least one frame whose checksum holds from its predecessor's stored
    one. The first frame's checksum starts from the lost header's, so it is judged by its salts
    alone (``salvage`` checks every record it yields against its own hash). An empty scan when
    nothing fits (a WAL being created, or not a WAL)."""
    for page_size in (DEFAULT_PAGE_SIZE, 512, 1024, 2048, 8192, 16384, 32768, 65536):
        size = FRAME_HEADER + page_size
        offsets = range(WAL_HEADER, len(raw) - size + 1, size)
        if len(offsets) < 2:
            continue
        headers = [struct.unpack_from(">6I", raw, offset) for offset in offsets]
        salts = max({(h[2], h[3]) for h in headers}, key=lambda pair: sum((h[2], h[3]) == pair for h in headers))
        for big in (True, False):
            frames, stored, chained = [], None, 0
            for index, offset in enumerate(offsets):
                page, commit, s1, s2, f1, f2 = headers[index]
                data = raw[offset + FRAME_HEADER:offset + size]
                checked = stored is not None and _checksum(raw[offset:offset + 8] + data, stored, big) == (f1, f2)
                intact = (s1, s2) == salts and (checked or index == 0)
                chained += checked and (s1, s2) == salts
                stored = (f1, f2)
                frames.append(Frame(index=index, offset=offset, page=page, commit=commit, data=data, intact=intact))
            if chained and any(f.intact and f.commit for f in frames):
                return WalScan(page_size=page_size, frames=frames, header_lost=True)
    return WalScan()


def image(db: Path, scan: WalScan, out: Path) -> None:
    """Writes to ``out`` the database ``db`` holds with every intact committed frame of its WAL
    applied (damaged frames skipped), as a plain rollback-journal file (read-only on ``db``).

    A transaction counts as committed when an intact commit frame ends it (or, after a damaged
    frame that may have been a commit, a later one does): its intact frames are applied.
    """
    data = bytearray(db.read_bytes())
    whole_header = data[:16] == b"SQLite format 3\0"
    page_size = scan.page_size or (struct.unpack(">H", data[16:18])[0] if whole_header else DEFAULT_PAGE_SIZE)
    if page_size == 1:
        page_size = 65536
    pages = len(data) // page_size if page_size else 0
    pending: list[Frame] = []
    for frame in scan.frames:
        if not frame.intact:
            continue
        pending.append(frame)
        if frame.commit:
            for f in pending:
                start = (f.page - 1) * page_size
                if len(data) < start + page_size:
                    data.extend(b"\0" * (start + page_size - len(data)))
                data[start:start + page_size] = f.data
            pages = frame.commit
            pending = []
    del data[pages * page_size:]
    if len(data) >= 100:
        data[18:20] = b"\x01\x01"  # legacy (rollback journal) mode: no WAL for the image
        data[28:32] = struct.pack(">I", pages)
        data[92:96] = data[24:28]  # the header's page count is valid for this change counter
    out.write_bytes(bytes(data))


def headless_ledger(db: Path) -> bool:
    """True when ``db`` is a SQLite file whose page 1 is gone (its header's magic string is not
    there) but whose other pages are b-tree pages: a damaged ledger, not some other file
    (read-only; reads at most the first 64 pages' first bytes)."""
    try:
        with open(db, "rb") as f:
            head = f.read(16)
            size = os.fstat(f.fileno()).st_size
            if head == b"SQLite format 3\0" or size < 2 * DEFAULT_PAGE_SIZE or size % DEFAULT_PAGE_SIZE:
                return False
            flags = []
            for page in range(1, min(size // DEFAULT_PAGE_SIZE, 64)):
                f.seek(page * DEFAULT_PAGE_SIZE)
                flags.append(f.read(1))
    except OSError:
        return False
    return any(flag == b"\x0d" for flag in flags) and all(flag in BTREE_FLAGS for flag in flags)


BTREE_FLAGS = (b"\x02", b"\x05", b"\x0a", b"\x0d", b"\x00")
"""First bytes of a page: the four b-tree page kinds, and 0 for a free or overflow page."""


def schema_readable(db_image: Path) -> bool:
    """True when SQLite can read the schema of ``db_image`` (page 1: the header and the
    ``sqlite_schema`` table) and it names a ``records`` table (read-only)."""
    try:
        conn = sqlite3.connect(f"file:{db_image}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'records'").fetchone() is not None
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False


def rebuild_first_page(db_image: Path, template: Path) -> bool:
    """Replaces page 1 of ``db_image`` (an ``image``) with page 1 of ``template``, a new ledger
    of the same schema, when the image's own cannot be read; True when it did.

    Page 1 holds the file's header and the schema (``sqlite_schema``): the root page of each
    table and index. SQLite cannot open a file without it, but the ledger's schema is ours and
    is created by the same statements in the same order in every ledger, so a new ledger's page
    1 names the same root pages (https://www.sqlite.org/fileformat2.html#the_database_header).
    The free-page list it names is empty, which only hides free pages. Whether the guess was
    right is judged record by record afterwards: each row must recompute its own hash.
    """
    if schema_readable(db_image):
        return False
    raw = bytearray(db_image.read_bytes())
    first = template.read_bytes()
    page_size = struct.unpack(">H", first[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    if len(raw) < page_size:
        return False
    raw[:page_size] = first[:page_size]
    raw[18:20] = b"\x01\x01"  # as ``image`` leaves it: no WAL for the image
    pages = len(raw) // page_size
    raw[28:32] = struct.pack(">I", pages)
    raw[92:96] = raw[24:28]
    db_image.write_bytes(bytes(raw))
    return True


COLUMNS = "seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload, policy_hash, prev_hash, hash"


def _upper_bound(conn: sqlite3.Connection) -> int:
    best = 0
    for sql in ("SELECT max(seq) FROM records", "SELECT max(seq) FROM records INDEXED BY records_by_run",
                "SELECT max(seq) FROM records INDEXED BY records_by_task"):
        try:
            best = max(best, conn.execute(sql).fetchone()[0] or 0)
        except sqlite3.DatabaseError:
            continue
    return best


def probe(db: Path, *, upper: int = 0) -> Iterator[tuple[int, tuple | None]]:
    """Reads a (possibly damaged) ledger file record by record: yields ``(seq, row)`` for seq 1
    up to the highest sequence number any index, ``upper`` or a leaf page knows of, ``row``
    None when that record cannot be read (read-only; ``row`` is in ``COLUMNS`` order).

    A record SQLite cannot reach (the root or an interior page of its table is damaged) is
    looked for on the table's leaf pages directly (``pages.table_leaf_rows``); such a row is
    only a candidate, which the caller checks against its own hash."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    loose: dict[int, tuple] | None = None
    try:
        top = max(upper, _upper_bound(conn))
        if not _table_whole(conn):
            loose = _leaf_rows(db)
            top = max(top, max(loose, default=0))
        for seq in range(1, top + 1):
            try:
                row = conn.execute(f"SELECT {COLUMNS} FROM records WHERE seq = ?", (seq,)).fetchone()
            except sqlite3.DatabaseError:
                row = None
            if row is None:
                if loose is None:
                    loose = _leaf_rows(db)
                row = loose.get(seq)
            yield seq, row
    finally:
        conn.close()


def _table_whole(conn: sqlite3.Connection) -> bool:
    """True when SQLite can walk the whole records table."""
    try:
        conn.execute("SELECT count(*) FROM records").fetchone()
        return True
    except sqlite3.DatabaseError:
        return False


def _leaf_rows(db: Path) -> dict[int, tuple]:
    """``{seq: row}`` of every records-table row on a whole leaf page of ``db`` (``pages``)."""
    raw = db.read_bytes()
    page_size = struct.unpack(">H", raw[16:18])[0] if raw[:16] == b"SQLite format 3\0" else DEFAULT_PAGE_SIZE
    page_size = 65536 if page_size == 1 else page_size
    return dict(table_leaf_rows(raw, page_size or DEFAULT_PAGE_SIZE, len(COLUMNS.split(", "))))


def ranges(seqs: list[int]) -> list[list[int]]:
    """``[1, 2, 3, 7]`` -> ``[[1, 3], [7, 7]]``."""
    out: list[list[int]] = []
    for seq in sorted(seqs):
        if out and out[-1][1] == seq - 1:
            out[-1][1] = seq
        else:
            out.append([seq, seq])
    return out


def text(spans: list[list[int]]) -> str:
    """``[[1, 3], [7, 7]]`` -> ``"seq 1-3, 7"``."""
    return "seq " + ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in spans)


def unreadable(db: Path, scan: WalScan, work: Path, *, upper: int = 0) -> tuple[list[list[int]], list[str]]:
    """The sequence ranges of records that cannot be read from ``db`` and its WAL, and the
    damaged pages (``bad_pages``); ``work`` is a scratch folder for the image (read-only on the
    ledger)."""
    out = work / "image.sqlite3"
    image(db, scan, out)
    return ranges([seq for seq, row in probe(out, upper=upper) if row is None]), bad_pages(out)


def _walk(raw: bytes, page_size: int, page: int, lo: int, hi: int | None, bad: list[tuple[int, int, int | None]],
          depth: int = 0) -> None:
    """Walks a table b-tree from ``page`` (covering rowids lo..hi) and notes each page that is
    not a b-tree page of its tree: ``(page, first rowid, last rowid or None)``."""
    start = (page - 1) * page_size
    base = start + (100 if page == 1 else 0)
    if page < 1 or start + page_size > len(raw) or depth > 20:
        bad.append((page, lo, hi))
        return
    kind = raw[base]
    if kind == 0x0D:
        return
    if kind != 0x05:
        bad.append((page, lo, hi))
        return
    cells = struct.unpack(">H", raw[base + 3:base + 5])[0]
    right = struct.unpack(">I", raw[base + 8:base + 12])[0]
    low = lo
    try:
        for i in range(cells):
            pointer = struct.unpack(">H", raw[base + 12 + 2 * i:base + 14 + 2 * i])[0]
            child = struct.unpack(">I", raw[start + pointer:start + pointer + 4])[0]
            key, _ = varint(raw, start + pointer + 4)
            _walk(raw, page_size, child, low, key, bad, depth + 1)
            low = key + 1
    except (struct.error, IndexError):
        bad.append((page, lo, hi))
        return
    _walk(raw, page_size, right, low, hi, bad, depth + 1)


def bad_pages(db_image: Path) -> list[str]:
    """Names each page of the ledger's tables and indexes that is not a b-tree page where its
    tree points (4 KiB of NULs, say), with the records it held for the records table
    (read-only on the image ``image`` wrote). Empty when the schema itself cannot be read."""
    raw = db_image.read_bytes()
    if len(raw) < 100:
        return []
    page_size = struct.unpack(">H", raw[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    try:
        conn = sqlite3.connect(f"file:{db_image}?mode=ro", uri=True)
        try:
            roots = conn.execute("SELECT type, name, rootpage FROM sqlite_schema WHERE rootpage > 0").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return ["page 1 (the file's header and the schema)"]
    out = []
    for kind, name, root in roots:
        if kind != "table":
            start = (root - 1) * page_size
            if start + page_size <= len(raw) and raw[start] not in (0x02, 0x0A):
                out.append(f"page {root} (root of index {name}: no record lost)")
            continue
        bad: list[tuple[int, int, int | None]] = []
        _walk(raw, page_size, root, 1, None, bad)
        for page, lo, hi in bad:
            held = f"seq {lo}-{hi}" if hi is not None else f"seq {lo} onwards"
            out.append(f"page {page} of table {name} (rowids {held.removeprefix('seq ')})" if name != "records"
                       else f"page {page} of the records table ({held})")
    return out
