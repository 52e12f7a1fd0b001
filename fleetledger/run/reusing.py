"""Result reuse on the coordinator: the offers made with each assignment and the shared cache
filled when a run finishes (``fleetledger.reuse`` says how a result is keyed and when it is
reused; ``run.workers`` checks a worker's reuse claims)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .. import errors
from ..jobs.base import TaskSpec
from ..reuse import Offers, caught_worker, sprint_salt
from ..result_cache import ResultCache


class ReuseMixin:
    """Result reuse (mixed into ``Coordinator``, whose state it uses)."""

    def _offers(self) -> Offers | None:
        """The session's ``Offers`` (None when reuse is off, ``RunOptions.reuse``)."""
        if not self.options.reuse:
            return None
        if getattr(self, "_offers_index", None) is None:
            cache = ResultCache(Path(self.options.cache)) if self.options.cache else None
            self._offers_index = Offers(self.storage, cache)
        return self._offers_index

    def _check_cache(self) -> None:
        """Refuses a result cache (``--cache``) inside a folder the job reads, before anything
        in it is read: the repository would control it, and a cache decides what later scans
        report for unchanged files (an entry is checked for damage, not for who wrote it). A
        cache inside the workspace is accepted: the workspace was checked to be made here by
        this user (``Workspace.check_made_here``, called first).

        Raises:
            UsageError: the cache folder (or what its path resolves to) is inside a scanned
                folder; the message says how to go on.
        """
        if not self.options.cache or not self.options.reuse:
            return
        cache = Path(self.options.cache).expanduser()
        places = (cache.absolute(), cache.resolve())
        if all(place.is_relative_to(self.workspace.root.resolve()) for place in places):
            return
        for folder in (Path(p).resolve() for p in self.job.read_only_paths()):
            if any(place.is_relative_to(folder) for place in places):
                raise errors.UsageError(
                    f"the result cache {self.options.cache} is inside the scanned folder {folder}: a repository can "
                    "ship a cache whose entries hide findings in its files; give --cache a folder outside the "
                    "scanned tree (nothing in it was read)")

    def _salt(self, sprint: str) -> str | None:
        """The sprint's salt (``reuse.sprint_salt``), or None when the job does not say which
        code decides the sprint (its results are then never reused)."""
        parts = self.job.sprint_code().get(sprint)
        return None if parts is None else sprint_salt(self.code, parts, self.policy.hash)

    def _reuse_message(self, spec: TaskSpec, sprint: str) -> dict[str, Any] | None:
        """The assignment's ``reuse``: ``{"salt", "offers"}`` for the task's steps that have
        recorded results under this session's salt; ``{"salt"}`` alone when none has (the
        worker still keys what it records); None when results of this sprint are not keyed.

        Raises:
            LedgerError: the ledger cannot be read.
        """
        salt = self._salt(sprint)
        if salt is None:
            return None
        offers = self._offers()
        names = self.job.step_names(spec)
        found = offers.offers(salt, sorted(names)) if offers is not None and names else {}
        return {"salt": salt, "offers": found}

    def _fill_cache(self) -> None:
        """Writes this run's keyed step results into the shared cache (``--cache``), once the
        run finished. A cache that cannot be written is a warning: the run's results are in
        its ledger, and only a later run's reuse is lost. A run where a worker was caught
        (``reuse.caught_worker``) adds nothing, as its ledger offers nothing.

        Raises:
            LedgerError: the ledger cannot be read.
        """
        if not self.options.cache or not self.options.reuse:
            return
        if any(caught_worker(record) for record in self.storage.read(self.view.run_id)):
            return
        cache = ResultCache(Path(self.options.cache))
        try:
            for record in self.storage.read(self.view.run_id):
                payload = record.payload
                reuse = payload.get("reuse") if record.kind == "step.done" else None
                if isinstance(reuse, dict) and isinstance(payload.get("result"), dict):
                    origin = payload.get("reused") or {"run": record.run_id, "seq": record.seq}
                    cache.put(reuse["salt"], payload["name"], reuse["key"], payload["result"], origin)
        except OSError as exc:
            print(f"warning: the result cache {self.options.cache} could not be filled ({exc}); later runs will "
                  "redo this run's work", file=sys.stderr)
