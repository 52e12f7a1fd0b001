"""A SQLite file read page by page, without SQLite: the rows of every table-leaf page.

SQLite reaches a row from its table's root page down through interior pages. When one of those
is damaged (4 KiB of NULs over the root of the ledger's table, say) SQLite cannot read any row
below it, although the leaf pages that hold the rows are whole. ``salvage`` then reads the
leaves directly: every page whose first byte says "table leaf" (0x0D), each cell's rowid and
record, following overflow pages for long records. The layout is SQLite's file format
(https://www.sqlite.org/fileformat2.html, sections 1.6 "B-tree Pages" and 2.1 "Record
Format"). A row found this way is only a candidate: ``salvage`` keeps it only when it
recomputes its own hash and chains to its run's previous record.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

TABLE_LEAF = 0x0D


def table_leaf_rows(raw: bytes, page_size: int, columns: int) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """Yields ``(rowid, row)`` for each cell of every table-leaf page of the file ``raw`` whose
    record has ``columns`` values; the first column, an ``INTEGER PRIMARY KEY`` (stored as
    NULL), is given the rowid. Cells that do not parse are skipped.

    Args:
        raw: The whole database file (an image with its WAL applied).
        page_size: Its page size in bytes.
        columns: The number of columns of the table wanted (rows of other tables differ).
    """
    reserved = raw[20] if raw[:16] == b"SQLite format 3\0" else 0
    usable = page_size - reserved
    pages = len(raw) // page_size
    for page in range(1, pages + 1):
        base = (page - 1) * page_size
        header = base + (100 if page == 1 else 0)
        if raw[header] != TABLE_LEAF:
            continue
        cells = struct.unpack_from(">H", raw, header + 3)[0]
        for i in range(cells):
            try:
                pointer = struct.unpack_from(">H", raw, header + 8 + 2 * i)[0]
                rowid, payload = _cell(raw, base + pointer, usable, page_size, pages)
                values = record_values(payload)
            except (IndexError, ValueError, struct.error, UnicodeDecodeError):
                continue
            if len(values) == columns and values[0] is None:
                yield rowid, (rowid, *values[1:])


def _cell(raw: bytes, at: int, usable: int, page_size: int, pages: int) -> tuple[int, bytes]:
    """A table-leaf cell at byte ``at``: its rowid and its whole payload (overflow included)."""
    size, at = varint(raw, at)
    rowid, at = varint(raw, at)
    if rowid >= 1 << 63:
        rowid -= 1 << 64
    most = usable - 35
    if size <= most:
        return rowid, raw[at:at + size]
    least = (usable - 12) * 32 // 255 - 23
    local = least + (size - least) % (usable - 4)
    if local > most:
        local = least
    payload = bytearray(raw[at:at + local])
    overflow = struct.unpack_from(">I", raw, at + local)[0]
    seen = 0
    while len(payload) < size:
        if not 1 <= overflow <= pages or seen > pages:
            raise ValueError("broken overflow chain")
        start = (overflow - 1) * page_size
        overflow = struct.unpack_from(">I", raw, start)[0]
        payload += raw[start + 4:start + 4 + min(usable - 4, size - len(payload))]
        seen += 1
    return rowid, bytes(payload)


def record_values(payload: bytes) -> list[Any]:
    """Decodes a record (SQLite's record format: a header of serial types, then the values).

    Raises:
        ValueError, IndexError, struct.error, UnicodeDecodeError: the bytes are not a record.
    """
    header_size, at = varint(payload, 0)
    if not 1 <= header_size <= len(payload):
        raise ValueError("bad record header")
    types = []
    while at < header_size:
        kind, at = varint(payload, at)
        types.append(kind)
    values: list[Any] = []
    at = header_size
    for kind in types:
        if kind == 0:
            values.append(None)
        elif 1 <= kind <= 6:
            width = (1, 2, 3, 4, 6, 8)[kind - 1]
            values.append(int.from_bytes(payload[at:at + width], "big", signed=True))
            at += width
        elif kind == 7:
            values.append(struct.unpack_from(">d", payload, at)[0])
            at += 8
        elif kind in (8, 9):
            values.append(kind - 8)
        elif kind >= 12:
            length = (kind - 12) // 2
            chunk = payload[at:at + length]
            if len(chunk) != length:
                raise ValueError("record shorter than its header says")
            values.append(chunk.decode("utf-8") if kind % 2 else bytes(chunk))
            at += length
        else:
            raise ValueError(f"reserved serial type {kind}")
    return values


def varint(buf: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at ``buf[at:]``: ``(value, offset after it)``."""
    value = 0
    for i in range(8):
        byte = buf[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | buf[at + 8], at + 9
