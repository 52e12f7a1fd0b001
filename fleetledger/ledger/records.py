"""Ledger records: their fields, their kinds, and the per-run hash chain.

A record is immutable. It is submitted as a ``NewRecord`` (what the actor says) and stored as a
``Record`` (what the ledger adds: a global sequence number, a UTC timestamp in epoch ms, and the
hash chained to the previous record of the same run).

The hash of a record is SHA-256 over the previous record's hash and the canonical JSON of the
record's fields (``canonical_json``: sorted keys, no whitespace, ASCII with ``\\u`` escapes;
close to RFC 8785 for the values fleetledger writes, but not identical to it). The payload is stored as that canonical text, so verification hashes
exactly the stored bytes.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
from dataclasses import dataclass, field
from json.encoder import c_make_encoder, encode_basestring_ascii
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

GENESIS_HASH = "0" * 64

KINDS: frozenset[str] = frozenset(
    {
        "run.started", "run.resumed", "run.joined", "run.halted", "run.finished",
        "sprint.started", "sprint.finished", "sprint.reopened",
        "task.planned", "task.assigned", "lease.renewed", "lease.expired", "lease.released",
        "task.finished", "task.failed", "task.reopened",
        "step.intent", "step.done", "step.failed",
        "effect.intent", "effect.done", "effect.failed",
        "model.call", "policy.denied", "approval.granted", "checkpoint", "decision",
        "worker.started", "worker.exited",
    }
)
"""Every kind the ledger accepts. Unknown kinds are refused so a typo cannot hide a record."""

UNIQUE_KINDS: frozenset[str] = frozenset(
    {
        "run.started", "run.finished", "sprint.started", "sprint.finished", "task.planned",
        "task.finished", "step.done", "effect.intent", "effect.done", "model.call",
    }
)
"""Kinds whose ``key`` is an idempotency key: at most one record per (run, kind, key).

Appending a second one is a no-op when its payload is equal, and ``ConflictingResultError``
when it differs.
"""

def canonical_json(value: Any) -> str:
    """Returns the canonical JSON text of ``value`` (sorted keys, no spaces, ASCII only).

    Non-ASCII characters are written as ``\\u`` escapes, so a file name that is not valid
    UTF-8 (held by Python as lone surrogates) is stored and hashed like any other string.

    Raises:
        TypeError: ``value`` holds something JSON cannot represent (a set, bytes, an object).
        ValueError: ``value`` holds NaN or infinity, which JSON has no spelling for.
    """
    if _C_ENCODER is None:
        return _ENCODER.encode(value)
    try:
        return "".join(_C_ENCODER(value, 0))
    except RecursionError as exc:  # the C encoder below keeps no markers: a cycle recurses
        raise ValueError(f"cannot encode a circular or too deeply nested value as JSON ({exc})") from None


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
# The C encoder ``_ENCODER.encode`` builds on every call, built once (same arguments, so the
# same text); without circular-reference markers, which would have to be fresh per call.
_C_ENCODER = (c_make_encoder(None, _ENCODER.default, encode_basestring_ascii, None, ":", ",", True, False, False)
              if c_make_encoder is not None else None)


def text_field(value: str) -> str:
    """Returns ``value`` unchanged when it is valid Unicode without NUL; lone surrogates and
    NUL characters are written as escapes (``\\xNN`` for the bytes of a file name that is not
    UTF-8, held as U+DC80..U+DCFF; ``\\uXXXX`` for any other lone surrogate, which a worker's
    JSON may carry), so the string can be stored in any text column (PostgreSQL text cannot
    hold NUL)."""
    if "\x00" in value:
        value = value.replace("\x00", "\\x00")
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return "".join(_escaped(c) if "\ud800" <= c <= "\udfff" else c for c in value)


def _escaped(surrogate: str) -> str:
    code = ord(surrogate)
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def iso_utc(epoch_ms: int) -> str:
    """Formats epoch milliseconds as ISO-8601 UTC with a ``Z`` suffix, to the millisecond."""
    moment = dt.datetime.fromtimestamp(epoch_ms / 1000, tz=dt.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


@dataclass(kw_only=True, slots=True)
class NewRecord:
    """A record as its actor submits it, before the ledger numbers and chains it.

    Read-only once built, by convention: nothing assigns its fields after ``__init__``. It is
    not a frozen dataclass because a frozen one's ``__init__`` sets each field through
    ``object.__setattr__``, which costs twice the time; the coordinator builds one for every
    message of every worker (``bench/peers``: about 1 us of its ~25 us of CPU per record).

    Attributes:
        run_id: The run this record belongs to.
        actor: ``"coordinator"`` or a worker id such as ``"w03"``.
        kind: One of ``KINDS``.
        why: A short reason or decision, for the audit (may be empty for routine records).
        payload: JSON-ready dict.
        key: Idempotency key (required for ``UNIQUE_KINDS``, optional otherwise).
        task: Task id, where the record is about a task.
        epoch: Lease epoch (fencing token) the actor holds the task under, where it has one.
        policy_hash: Hash of the policy in force when the action was allowed.
        payload_json: ``canonical_json(payload)``, when the caller has it without encoding the
            payload (a copy of a stored record's text, ``steps.reused_payload_text``); stored
            and hashed as the payload. None: the ledger encodes the payload.
    """

    run_id: str
    actor: str
    kind: str
    why: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    key: str | None = None
    task: str | None = None
    epoch: int | None = None
    policy_hash: str = ""
    payload_json: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for name, value in (("why", self.why), ("key", self.key), ("task", self.task)):
            if value is not None and not (value.isascii() and "\x00" not in value):
                setattr(self, name, text_field(value))
        if self.kind not in KINDS:
            raise ValueError(f"unknown record kind {self.kind!r}; known kinds: {', '.join(sorted(KINDS))}")
        if self.kind in UNIQUE_KINDS and not self.key:
            raise ValueError(f"a {self.kind} record needs an idempotency key")
        if not self.run_id or not self.actor:
            raise ValueError("a record needs a run_id and an actor")


class Record(NamedTuple):
    """A stored ledger record. Immutable; produced only by a storage backend or by decoding.

    A named tuple rather than a frozen dataclass: a ledger is read a million records at a
    time, and a tuple is built from a database row in one step (``from_row(row)``: the
    fields are in the order of the ledger's columns) and read at C speed. Build one with
    keywords as before; ``_replace`` stands for ``dataclasses.replace``.

    Attributes:
        seq: Global sequence number, contiguous from 1 across the whole ledger.
        run_id, actor, kind, why, key, task, epoch, policy_hash: As in ``NewRecord``.
        ts_ms: UTC time of the append, epoch milliseconds.
        payload_json: The payload's canonical JSON text, exactly as hashed.
        prev_hash: Hash of the previous record of the same run (``GENESIS_HASH`` for the first).
        hash: This record's hash, ``record_hash(...)``.
    """

    seq: int
    run_id: str
    ts_ms: int
    actor: str
    kind: str
    key: str | None
    task: str | None
    epoch: int | None
    why: str
    payload_json: str
    policy_hash: str
    prev_hash: str
    hash: str

    @property
    def payload(self) -> dict[str, Any]:
        """The payload, decoded from its canonical JSON (a new dict each call)."""
        return json.loads(self.payload_json)

    def to_json(self) -> dict[str, Any]:
        """Returns the record as a JSON-ready dict, the form ``fleetledger log`` prints."""
        return {
            "seq": self.seq, "run_id": self.run_id, "ts": iso_utc(self.ts_ms), "ts_ms": self.ts_ms,
            "actor": self.actor, "kind": self.kind, "key": self.key, "task": self.task,
            "epoch": self.epoch, "why": self.why, "payload": self.payload,
            "policy_hash": self.policy_hash, "prev_hash": self.prev_hash, "hash": self.hash,
        }


def record_hash(
    *, prev_hash: str, seq: int, run_id: str, ts_ms: int, actor: str, kind: str, key: str | None,
    task: str | None, epoch: int | None, why: str, payload_json: str, policy_hash: str,
) -> str:
    """Returns the chained SHA-256 hex digest of a record's fields (see the module docstring)."""
    header = _header_json(seq, run_id, ts_ms, actor, kind, key, task, epoch, why, policy_hash)
    return _sha256(b"%s\n%s\n%s" % (prev_hash.encode("ascii"), header.encode("utf-8"),
                                    payload_json.encode("utf-8"))).hexdigest()


_sha256 = hashlib.sha256


def _header_json(seq: int, run_id: str, ts_ms: int, actor: str, kind: str, key: str | None,
                 task: str | None, epoch: int | None, why: str, policy_hash: str) -> str:
    """Returns ``canonical_json([seq, run_id, ts_ms, actor, kind, key, task, epoch, why,
    policy_hash])``, the hashed header of a record, written directly when the fields have
    their usual types (the same text, at a fraction of the cost) and by the encoder otherwise."""
    if type(seq) is int and type(ts_ms) is int and (epoch is None or type(epoch) is int):
        s = encode_basestring_ascii
        try:
            return (f"[{seq},{s(run_id)},{ts_ms},{s(actor)},{s(kind)},{'null' if key is None else s(key)},"
                    f"{'null' if task is None else s(task)},{'null' if epoch is None else epoch},{s(why)},"
                    f"{s(policy_hash)}]")
        except TypeError:  # a field that is not a string: the encoder says what it makes of it
            pass
    return canonical_json([seq, run_id, ts_ms, actor, kind, key, task, epoch, why, policy_hash])


def seal(new: NewRecord, *, seq: int, ts_ms: int, prev_hash: str, payload_json: str | None = None) -> Record:
    """Numbers, timestamps and chains a submitted record.

    Args:
        new: The submitted record.
        seq: The global sequence number it gets.
        ts_ms: The append time, epoch ms UTC.
        prev_hash: Hash of the run's previous record (``GENESIS_HASH`` for its first).
        payload_json: ``canonical_json(new.payload)`` if the caller already computed it.

    Returns:
        The stored form of the record.
    """
    text = payload_json if payload_json is not None else (
        new.payload_json if new.payload_json is not None else canonical_json(new.payload))
    run_id, actor, kind, key, task, epoch, why, policy_hash = (
        new.run_id, new.actor, new.kind, new.key, new.task, new.epoch, new.why, new.policy_hash)
    header = _header_json(seq, run_id, ts_ms, actor, kind, key, task, epoch, why, policy_hash)
    digest = _sha256(b"%s\n%s\n%s" % (prev_hash.encode("ascii"), header.encode("utf-8"),
                                      text.encode("utf-8"))).hexdigest()
    return _new_record((seq, run_id, ts_ms, actor, kind, key, task, epoch, why, text, policy_hash, prev_hash, digest))


def expected_hash(record: Record) -> str:
    """Recomputes a stored record's hash from its fields (used by ``verify``)."""
    seq, run_id, ts_ms, actor, kind, key, task, epoch, why, payload_json, policy_hash, prev_hash, _ = record
    header = _header_json(seq, run_id, ts_ms, actor, kind, key, task, epoch, why, policy_hash)
    return _sha256(b"%s\n%s\n%s" % (prev_hash.encode("ascii"), header.encode("utf-8"),
                                    payload_json.encode("utf-8"))).hexdigest()


from_row: Callable[[Sequence[Any]], Record] = functools.partial(tuple.__new__, Record)  # type: ignore[assignment]
"""Builds a ``Record`` from its 13 fields in column order (a row of the ledger's named queries);
``Record._make`` without its length check, called from C: a replay builds a million of them."""
_new_record = from_row
