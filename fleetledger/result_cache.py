"""A shared result cache: step results that runs on several hosts (or in several workspaces)
reuse (``reuse``), in a folder given with ``--cache DIR``.

Layout: ``DIR/v1/<h[:2]>/<h>/<reuse key>.json`` with ``h`` the SHA-256 of the sprint's salt and
the step's name, so that the offers for one step are one folder listing. Each file is one
entry, ``{"format": 1, "salt", "name", "key", "result", "from", "digest"}``, where ``digest`` is
the SHA-256 of the canonical JSON of the other fields: a torn or damaged file is skipped (a
cache miss), never used. Entries are written to a temporary file in the same folder and
renamed into place (atomic on a POSIX file system, and on NFS for a rename within one
folder), so several hosts can fill and read one cache at the same time: two hosts writing
the same key write the same result, and the last rename wins.

The cache is not the record: a run's ledger says what it reused and from which run; losing the
cache only costs work. It is trusted like the code: whoever can write it decides what later
scans report for unchanged files, so give it the permissions of the scanners' own workspace. A
cache inside the scanned folder (outside the workspace) is refused (``ReuseMixin._check_cache``):
the repository would write it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .ledger.records import canonical_json

FORMAT = 1


class ResultCache:
    """A result cache folder.

    Args:
        root: The folder (created on the first write).
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _folder(self, salt: str, name: str) -> Path:
        h = hashlib.sha256(f"{salt}\0{name}".encode("utf-8", "surrogateescape")).hexdigest()
        return self.root / f"v{FORMAT}" / h[:2] / h

    def offers(self, salt: str, name: str) -> list[dict[str, Any]]:
        """Returns the entries for a step as ``[{"key", "result", "from"}]``, newest first;
        unreadable, damaged or foreign entries are left out (never raises for the cache's
        content or a missing folder)."""
        folder = self._folder(salt, name)
        try:
            files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        except OSError:
            return []
        out = []
        for file in files:
            entry = _load(file)
            if entry is not None and entry["salt"] == salt and entry["name"] == name:
                out.append({"key": entry["key"], "result": entry["result"],
                            "from": {**entry["from"], "cache": str(self.root)}})
        return out

    def put(self, salt: str, name: str, key: str, result: dict[str, Any], origin: dict[str, Any]) -> bool:
        """Writes one entry unless one with this key exists; returns True when it wrote it.

        Raises:
            OSError: the folder cannot be created or written (a full disk, permissions).
        """
        folder = self._folder(salt, name)
        target = folder / f"{key}.json"
        if target.exists() or not all(c in "0123456789abcdef" for c in key):
            return False
        body = {"format": FORMAT, "salt": salt, "name": name, "key": key, "result": result,
                "from": {k: v for k, v in origin.items() if k != "cache"}}
        body["digest"] = hashlib.sha256(canonical_json(body).encode()).hexdigest()
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(canonical_json(body))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return True


def _load(file: Path) -> dict[str, Any] | None:
    try:
        body = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        return None
    digest = body.pop("digest", None)
    if digest != hashlib.sha256(canonical_json(body).encode()).hexdigest():
        return None
    if not isinstance(body.get("result"), dict) or not isinstance(body.get("from"), dict):
        return None
    return body
