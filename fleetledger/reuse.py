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
    """The recorded results a run may reuse, indexed by ``(salt, step name)``.

    Args:
        storage: The ledger; every run's ``step.done`` records with a ``reuse`` key are read
            once, at the first ``offers`` call (one pass over the ledger per session).
        cache: A shared result cache, or None.
    """

    def __init__(self, storage: "Storage", cache: "ResultCache | None" = None) -> None:
        self.storage = storage
        self.cache = cache
        self._index: dict[tuple[str, str], list[dict[str, Any]]] | None = None

    def offers(self, salt: str, names: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """Returns ``{step name: [{"key", "result", "from"}]}`` for the steps among ``names``
        that have recorded results under ``salt`` (read-only; the cache's files are read).

        Raises:
            LedgerError: the ledger cannot be read.
        """
        index = self._load()
        out: dict[str, list[dict[str, Any]]] = {}
        for name in names:
            found = list(index.get((salt, name), ()))
            if self.cache is not None:
                keys = {o["key"] for o in found}
                found += [o for o in self.cache.offers(salt, name)[:MAX_OFFERS] if o["key"] not in keys]
            if found:
                out[name] = found
        return out

    def _load(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        if self._index is not None:
            return self._index
        index: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for run_id, *_ in reversed(self.storage.runs()):
            found: dict[tuple[str, str], list[dict[str, Any]]] = {}
            caught = False
            for record in self.storage.read(run_id):
                if caught_worker(record):
                    caught = True  # a worker of this run was caught overreaching: none of its results is offered
                    break
                if record.kind != "step.done":
                    continue
                payload = record.payload
                reuse = payload.get("reuse")
                if not isinstance(reuse, dict) or not isinstance(payload.get("result"), dict):
                    continue
                origin = payload.get("reused") or {"run": record.run_id, "seq": record.seq}
                found.setdefault((reuse.get("salt"), payload.get("name")), []).append(
                    {"key": reuse.get("key"), "result": payload["result"], "from": origin})
            if caught:
                continue
            for step, offers in found.items():
                kept = index.setdefault(step, [])
                for offer in reversed(offers):  # the run's last result of a step first
                    if len(kept) < MAX_OFFERS and all(o["key"] != offer["key"] for o in kept):
                        kept.append(offer)
        self._index = index
        return index


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
