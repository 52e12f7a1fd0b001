"""Signed heads: a run's last record, sealed under the user's key and kept outside the ledger.

The hash chain (``ledger.records``) shows a record that was changed in place, but it is unkeyed:
whoever can write the ledger file can edit a record and re-chain every record after it, or cut
the tail (the export and ``run.finished``), and the chain still verifies. A signed head closes
both: ``{"run_id", "seq", "hash"}`` of the run's last record with an HMAC-SHA256 over them under
this user's key (``workspace.owner_key()``, in the user's configuration folder, which no sandbox
binds), written by the coordinator each time it writes the run-state file (at most every
``RunOptions.state_interval_s``, and always when the run halts or finishes), in two places:

* the run-state file (``ledger.head``), beside the ledger;
* the user's state folder (``$XDG_STATE_HOME/fleetledger/heads/``, default
  ``~/.local/state``), one file per ledger and run, out of the workspace's reach.

``verify`` checks each run against the newest head whose seal holds: a record at the head's
sequence number with the head's hash must be there (else the chain was rewritten, or the tail
cut), and a head whose seal does not hold was edited. What a head cannot prove: records
appended after the last head was written (at most one state-file interval of a live run, or
the records of a coordinator killed before it wrote one) are covered by the unkeyed chain only;
someone who holds the user's key (the user, root, a ``--sandbox none`` worker running as the
user) can forge heads; and a head kept only in the workspace can be deleted with the ledger.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import fsutil

HEAD_FIELDS = ("run_id", "seq", "hash")


def _mac(key: bytes, run_id: str, seq: int, digest: str) -> str:
    message = json.dumps([run_id, seq, digest], separators=(",", ":")).encode()
    return hmac.new(key, b"fleetledger head v1\n" + message, hashlib.sha256).hexdigest()


def sign(run_id: str, seq: int, digest: str, key: bytes) -> dict[str, Any]:
    """Returns the signed head ``{"run_id", "seq", "hash", "mac"}`` of a run's last record.

    Args:
        run_id: The run.
        seq: The ledger sequence number of the run's last record.
        digest: That record's chained hash (hex).
        key: The user's secret (``workspace.owner_key()``).
    """
    return {"run_id": run_id, "seq": seq, "hash": digest, "mac": _mac(key, run_id, seq, digest)}


def sealed(head: Any, key: bytes) -> bool:
    """True when ``head`` is a well-formed head whose seal holds under ``key``."""
    if not isinstance(head, dict) or not all(k in head for k in (*HEAD_FIELDS, "mac")):
        return False
    run_id, seq, digest, mac = head["run_id"], head["seq"], head["hash"], head["mac"]
    if not (isinstance(run_id, str) and isinstance(seq, int) and isinstance(digest, str) and isinstance(mac, str)):
        return False
    return hmac.compare_digest(mac, _mac(key, run_id, seq, digest))


def state_folder() -> Path:
    """Returns the user's folder of heads (``$XDG_STATE_HOME/fleetledger/heads``)."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "fleetledger" / "heads"


def head_path(ledger_url: str, run_id: str) -> Path:
    """Returns the file that keeps the head of ``run_id`` in the ledger at ``ledger_url`` (the
    URL without password, as ``Storage.url`` shows it)."""
    ledger = hashlib.sha256(ledger_url.encode()).hexdigest()[:24]
    return state_folder() / ledger / f"{hashlib.sha256(run_id.encode()).hexdigest()[:24]}.json"


def store(ledger_url: str, head: dict[str, Any]) -> None:
    """Keeps ``head`` in the user's state folder (atomically; an older head is replaced).

    Raises:
        OSError: the folder cannot be made or the file written (the disk is full...).
    """
    path = head_path(ledger_url, head["run_id"])
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fsutil.atomic_write(path, json.dumps({"ledger": ledger_url, **head}, sort_keys=True).encode(),
                        fault_prefix="head")


def stored(ledger_url: str, run_id: str) -> dict[str, Any] | None:
    """Returns the head kept in the user's state folder for this run, or None (missing or
    unreadable: that is not proof of anything, so it is not an error)."""
    try:
        return json.loads(head_path(ledger_url, run_id).read_bytes())
    except (OSError, ValueError):
        return None


def gather(ledger_url: str, state_file_head: Any = None) -> dict[str, list[tuple[str, Any]]]:
    """Returns every head kept for the ledger at ``ledger_url``: those in the user's state
    folder, and ``state_file_head`` (the run-state file's ``ledger.head``, when the file names
    this ledger), grouped by the run they name: ``{run_id: [(where, head), ...]}``."""
    found: dict[str, list[tuple[str, Any]]] = {}
    folder = head_path(ledger_url, "-").parent
    candidates = [("the run-state file", state_file_head)] if state_file_head is not None else []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            candidates.append((str(path), json.loads(path.read_bytes())))
        except (OSError, ValueError):
            continue
    for where, head in candidates:
        run_id = head.get("run_id") if isinstance(head, dict) else None
        found.setdefault(run_id if isinstance(run_id, str) else "?", []).append((where, head))
    return found


@dataclass
class HeadCheck:
    """Checks runs' records against their signed heads while ``verify`` reads the ledger once.

    Args:
        heads: Per run, the candidate heads found (run-state file, state folder), with where
            each was found: ``{run_id: [(where, head), ...]}``.
        key: The user's key.

    Attributes:
        problems: What was found wrong, one sentence each.
        notes: What the heads cannot vouch for (records after the newest head; runs without one).
    """

    heads: dict[str, list[tuple[str, Any]]]
    key: bytes
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _wanted: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    _found: dict[str, str] = field(default_factory=dict)
    _last: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for run_id, candidates in self.heads.items():
            good = []
            for where, head in candidates:
                if head is None:
                    continue
                if sealed(head, self.key) and head["run_id"] == run_id:
                    good.append((where, head))
                else:
                    self.problems.append(f"run {run_id}: the head kept in {where} does not carry this user's seal: "
                                         "it was edited, or written with another key")
            if good:
                self._wanted[run_id] = max(good, key=lambda item: item[1]["seq"])

    def see(self, run_id: str, seq: int, digest: str) -> None:
        """Takes note of one record (in sequence order)."""
        self._last[run_id] = seq
        wanted = self._wanted.get(run_id)
        if wanted is not None and wanted[1]["seq"] == seq:
            self._found[run_id] = digest

    def finish(self, runs: Iterable[str]) -> None:
        """Compares what was seen with the heads; ``runs`` are the runs the ledger holds."""
        runs = set(runs)
        for run_id, (where, head) in sorted(self._wanted.items()):
            seq = head["seq"]
            if run_id not in runs:
                self.problems.append(f"run {run_id} is missing from the ledger, but its signed head ({where}) is at "
                                     f"seq {seq}: its records were removed")
            elif run_id not in self._found:
                last = self._last.get(run_id, 0)
                what = (f"the ledger ends at seq {last} for this run: its tail was cut" if last < seq
                        else f"seq {seq} is not one of its records: the history was rewritten")
                self.problems.append(f"run {run_id}: its signed head ({where}) is at seq {seq}, but {what}")
            elif self._found[run_id] != head["hash"]:
                self.problems.append(f"run {run_id}: the record at seq {seq} does not have the hash of its signed head "
                                     f"({where}): the chain was rewritten")
            else:
                after = self._last.get(run_id, seq) - seq
                if after > 0:
                    self.notes.append(f"run {run_id}: signed up to seq {seq} ({where}); records after it are covered "
                                      "by the unkeyed chain only")
        for run_id in sorted(runs - set(self._wanted)):
            self.notes.append(f"run {run_id}: no signed head on this host (the run was made by another user or "
                              "host, or before heads were kept): its chain is unkeyed")



def contradiction(storage: Any, ledger_url: str, run_id: str, last_seq: int, key: bytes,
                  state_file_head: Any = None) -> str | None:
    """Returns why the ledger contradicts the newest head this user signed for ``run_id`` (kept in
    the user's state folder or, given as ``state_file_head``, in the run-state file), or None when
    it agrees or no sealed head is kept (read-only; one index lookup).

    The ledger then ends before the head (its tail was cut, or SQLite dropped WAL frames after a
    damaged one and a checkpoint made that permanent) or holds another record there (rewritten).

    Args:
        storage: The ledger.
        ledger_url: Its URL as ``Storage.url`` shows it.
        run_id: The run.
        last_seq: The seq of the run's last record as the caller read it (``RunView.last_seq``),
            for the message; the ledger itself is read at the head's seq.
        key: The user's key.
        state_file_head: The run-state file's ``ledger.head``, if any.
    """
    candidates = [h for h in (stored(ledger_url, run_id), state_file_head)
                  if sealed(h, key) and h["run_id"] == run_id]
    if not candidates:
        return None
    head = max(candidates, key=lambda h: h["seq"])
    seq = head["seq"]
    # Read at the head's seq even when ``last_seq`` ends before it: on a shared ledger another
    # live host may have appended (and signed) more since ``last_seq`` was read.
    at = next(iter(storage.read(run_id, after_seq=seq - 1)), None)
    if at is not None and at.seq == seq and at.hash == head["hash"]:
        return None
    if at is None:
        return (f"run {run_id}: this user signed its head at seq {seq}, but the ledger ends at seq {last_seq} for it: "
                "its records after that are gone (a cut tail, or WAL frames that SQLite dropped after damage)")
    return (f"run {run_id}: this user signed its head at seq {seq}, but the ledger's record there differs "
            "(the history was rewritten)")


def refuse_if_contradicted(storage: Any, run_id: str, last_seq: int, state_path: Path) -> None:
    """Refuses a ledger that contradicts the run's newest sealed head (``contradiction``, with the
    run-state file at ``state_path`` as the second place a head is kept), before anything reads
    the run as whole or sets that file aside.

    Raises:
        LedgerDamagedError: the ledger ends before the head or differs at it; the message says
            how to go on.
    """
    from . import errors, runstate
    from .workspace import owner_key

    problem = contradiction(storage, storage.url, run_id, last_seq, owner_key(),
                            runstate.signed_head(state_path, storage.url))
    if problem is not None:
        raise errors.LedgerDamagedError(
            f"the ledger is damaged or was cut: {problem}. Nothing was appended to it. `fleetledger verify` shows "
            "what differs; `fleetledger salvage` keeps what is left, records the loss and lets the run continue")
