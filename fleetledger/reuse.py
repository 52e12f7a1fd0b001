"""Reuse of recorded step results: a later run pays only for what changed.

Every ``step.done`` of a sprint whose deciding code is known (``Job.sprint_code``) carries a
reuse key (``steps.reuse_key``): a hash of the sprint's *salt* (``sprint_salt``: the digests of
the code parts that decide the sprint and the policy's hash), the step's name and its full
input hash. When the coordinator assigns a task, it offers the worker the results recorded
under the same salt for the task's steps (``Offers``): from every run in this ledger and from a
shared result cache (``result_cache``). The worker computes each step's key, takes an offer
with an equal key that still holds (a step may check more, e.g. that the files an analysis read
are unchanged), and records it as ``step.done`` with ``reused``: ``{"run", "seq"}`` of the
record it was first recorded in (and ``"cache"`` when it came from the cache). So a result is
reused only when the code, the policy and the inputs that decide it are those of the earlier
run, and the ledger says where each reused result came from.

Offers are data, not trust: a worker's ``reused`` claim is checked against what was offered
to it (``record_problem``), and the policy, the repository's rules and the sandbox apply to the
reused run as to any other (a step the policy denies is denied before reuse is considered).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .ledger.records import canonical_json
from .steps import input_hash, reuse_key

if TYPE_CHECKING:
    from .ledger.records import Record
    from .ledger.storage import Storage
    from .result_cache import ResultCache

MAX_OFFERS = 4
"""Offers per step and per source (the ledger, the cache), the most recent first: a step whose
inputs differ between branches may have a result for each."""


def sprint_salt(code: dict[str, str], parts: Iterable[str], policy_hash: str) -> str:
    """Returns a sprint's salt: SHA-256 hex of the canonical JSON of the digests of the code
    parts that decide it (``{part: code[part]}``; a part missing from ``code`` counts as
    missing) and the policy's hash.

    Args:
        code: The session's code identity (``Job.code_identity``).
        parts: The parts that decide the sprint (``Job.sprint_code()[sprint]``).
        policy_hash: ``Policy.hash``.
    """
    return input_hash("salt", {part: code.get(part, "missing") for part in sorted(parts)}, policy_hash)


class Offers:
    """The recorded results a run may reuse, indexed by salt and step name.

    Args:
        storage: The ledger. At the first ``offers`` call for a salt, the ``step.done`` records
            of every run that carry it are read (one pass of the database over the ledger,
            ``Storage.kind_records``), the most recent first; a result is decoded only for the
            first record of each of a step's keys (a result reused run after run is one offer).
        cache: A shared result cache, or None.
    """

    def __init__(self, storage: "Storage", cache: "ResultCache | None" = None) -> None:
        self.storage = storage
        self.cache = cache
        self._index: dict[str, dict[str, list[dict[str, Any]]]] = {}
        self._caught: set[str] | None = None

    def offers(self, salt: str, names: Iterable[str], *, texts: bool = False) -> dict[str, list[dict[str, Any]]]:
        """Returns ``{step name: [{"key", "result", "from"}]}`` for the steps among ``names``
        that have recorded results under ``salt`` (read-only; the cache's files are read).

        Args:
            salt: The sprint's salt (``sprint_salt``).
            names: The steps' names.
            texts: Also give each ledger offer's ``"stored"``: the canonical JSON of the payload
                it was stored with, when that has the usual layout (``stored_step``; None
                otherwise, and absent for the cache's offers), for ``steps.reused_payload_text``.

        Raises:
            LedgerError: the ledger cannot be read.
        """
        index = self._load(salt)
        out: dict[str, list[dict[str, Any]]] = {}
        for name in names:
            found = [dict(o) if texts else {k: v for k, v in o.items() if k != "stored"} for o in index.get(name, ())]
            if self.cache is not None:
                keys = {o["key"] for o in found}
                found += [o for o in self.cache.offers(salt, name)[:MAX_OFFERS] if o["key"] not in keys]
            if found:
                out[name] = found
        return out

    def none_for(self, salt: str) -> bool:
        """True when nothing can be offered under ``salt``: there is no cache and the ledger
        holds no result with it (a first run). Read-only.

        Raises:
            LedgerError: the ledger cannot be read.
        """
        return self.cache is None and not self._load(salt)

    def _load(self, salt: str) -> dict[str, list[dict[str, Any]]]:
        if salt in self._index:
            return self._index[salt]
        if self._caught is None:  # a worker of these runs was caught overreaching: none of their results is offered
            self._caught = {r.run_id for r in self.storage.kind_records("policy.denied", containing="worker message")
                            if caught_worker(r)}
        index: dict[str, list[dict[str, Any]]] = {}
        offered: set[str] = set()
        for record in self.storage.kind_records("step.done", containing=f'"salt":"{salt}"'):
            if record.run_id in self._caught or _usual_key(record.payload_json) in offered:
                continue  # a result reused run after run: its copies come after the first one read
            stored = stored_step(record.payload_json)
            if stored is None or stored[2] != salt:
                continue
            name, key, _, origin, text = stored
            kept = index.setdefault(name, [])
            if len(kept) >= MAX_OFFERS or any(o["key"] == key for o in kept):
                continue
            usual: str | None = record.payload_json if text is not None else None
            try:
                result = json.loads(text) if text is not None else record.payload.get("result")
            except ValueError:  # not one JSON value: a payload with more keys than the usual layout's
                result, usual = record.payload.get("result"), None
            if isinstance(result, dict):
                kept.append({"key": key, "result": result, "from": origin or {"run": record.run_id, "seq": record.seq},
                             "stored": usual})
                offered.add(key)
        self._index[salt] = index
        return index


_REUSE_AT = ',"reuse":{"inputs":"'


def _usual_key(payload_json: str) -> str:
    """The reuse key where a payload of the usual layout has it (``stored_step``), read by
    position: a cheap look that only skips records whose key was offered already (any other
    text gives something that is no such key)."""
    cut = payload_json.rfind(_REUSE_AT)
    start = cut + len(_REUSE_AT) + 64 + len('","key":"')
    return payload_json[start:start + 64] if cut >= 0 else ""


_STORED_HEAD = re.compile(r'\{"input_hash":"[0-9a-f]{16}","name":("(?:[^"\\]|\\.)*"),"result":')
_STORED_TAIL = re.compile(r',"reuse":\{"inputs":"[0-9a-f]{64}","key":"([0-9a-f]{64})","salt":"([0-9a-f]{64})"\}'
                          r'(?:,"reused":(\{[^{}]*\}))?\}')


def stored_step(payload_json: str) -> tuple[str, str, str, dict[str, Any] | None, str | None] | None:
    """Reads a stored ``step.done`` payload's text as ``(name, reuse key, salt, reused pointer
    or None, the result's canonical JSON text)`` without decoding the result, or None when it
    carries no reuse key. A payload of the usual layout (``{"input_hash", "name", "result",
    "reuse"[, "reused"]}`` in canonical JSON) is cut at its keys; any other is decoded, and
    its result text is None.
    The result text is whatever lies between: the caller decodes it (``Offers``), which fails
    when the payload has more keys than the usual ones between ``result`` and ``reuse`` (the
    caller then decodes the payload)."""
    head = _STORED_HEAD.match(payload_json)
    cut = payload_json.rfind(',"reuse":{"inputs":"')
    tail = _STORED_TAIL.fullmatch(payload_json, cut) if head is not None and cut > head.end() else None
    if head is not None and tail is not None:
        try:
            name = json.loads(head.group(1))
            origin = json.loads(tail.group(3)) if tail.group(3) else None
        except ValueError:
            return None
        return name, tail.group(1), tail.group(2), origin, payload_json[head.end():cut]
    try:
        payload = json.loads(payload_json)
    except ValueError:
        return None
    reuse = payload.get("reuse") if isinstance(payload, dict) else None
    if not isinstance(reuse, dict) or not isinstance(payload.get("result"), dict):
        return None
    origin = payload.get("reused")
    return (str(payload.get("name")), str(reuse.get("key")), str(reuse.get("salt")),
            origin if isinstance(origin, dict) else None, None)


def reused_from(payload_json: str) -> dict[str, Any] | None:
    """The ``reused`` pointer of a stored ``step.done`` payload (where its result was first
    recorded), or None for a result computed by its own run; the result is not decoded."""
    if '"reused":' not in payload_json:
        return None
    stored = stored_step(payload_json)
    return stored[3] if stored is not None else None


def caught_worker(record: "Record") -> bool:
    """Says whether a record is the denial of a worker's message (a worker caught sending what
    its lease does not allow, which may have been taken over by a file it read): none of the
    run's results is offered for reuse, from the ledger or through the shared cache."""
    return record.kind == "policy.denied" and record.payload.get("action") == "worker message"


def record_problem(payload: dict[str, Any], sent: dict[str, Any] | None) -> str | None:
    """Checks what a worker's ``step.done`` says about reuse against what the coordinator sent
    with the assignment (``sent``: the ``reuse`` message, or None when it sent none).

    A result's reuse key must be the key of the salt the coordinator sent and of the step's own
    input hash (so a result cannot be filed under another sprint's code, another policy or
    other inputs), and a result claimed as reused must be one that was offered, with its key
    and origin. A worker that reads hostile files may have been taken over; what it could
    still do is record a wrong result for its true inputs, which the sandbox, not the ledger,
    prevents (runs where a worker was caught are never offered, ``Offers``).

    Returns:
        What is wrong, or None.
    """
    reuse, name = payload.get("reuse"), str(payload.get("name"))
    if reuse is None:
        return None if payload.get("reused") is None else f"claimed to reuse a result for step {name!r} without a key"
    if sent is None or not isinstance(reuse, dict) or reuse.get("salt") != sent.get("salt"):
        return f"keyed the result of step {name!r} under a salt the coordinator did not send"
    inputs = reuse.get("inputs")
    if not isinstance(inputs, str) or inputs[:16] != payload.get("input_hash") \
            or reuse.get("key") != reuse_key(sent["salt"], name, inputs):
        return f"keyed the result of step {name!r} under a key that is not its inputs'"
    claim = payload.get("reused")
    if claim is None:
        return None
    for offer in sent.get("offers", {}).get(name, ()):
        if offer["key"] == reuse["key"] and offer["from"] == claim \
                and canonical_json(offer["result"]) == canonical_json(payload.get("result")):
            return None
    return f"claimed to reuse a result for step {name!r} that was not offered to it"
