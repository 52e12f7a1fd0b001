"""Where the microVM guest's parts are cached, and whether they match the code that runs now.

The guest is four files under ``~/.cache/fleetledger/microvm/`` (``$XDG_CACHE_HOME`` is honoured):
``vmlinux`` (Debian's kernel, decompressed), ``initramfs.cpio.gz`` (busybox-static, the kernel modules the
guest needs, and its ``/init``), ``base.img`` (a Debian root file system with Python 3, built by
debootstrap) and ``app.img`` (fleetledger and its dependencies, installed from their wheels).
``guest.json`` records what they were built from; ``app.img`` is stale when the fleetledger
source or its dependencies changed since (``source_digest``).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..layout import PACKAGE_DIR

PROJECT_DIR = PACKAGE_DIR.parent
"""The source checkout (holds ``pyproject.toml``) the guest's wheels are built from."""

SOURCE_SUFFIXES = (".py", ".sql", ".toml", ".json", ".md", ".txt")
GUEST_SITE = Path("/opt/fleetledger/site")
"""Where, inside the guest, the app image's packages are (its ``PYTHONPATH``)."""

GUEST_AGENT = Path("/opt/fleetledger/guest_init.py")
"""The guest's pid 1 after the initramfs (copied from ``guest_init.py`` into the app image)."""


def cache_dir() -> Path:
    """Returns ``~/.cache/fleetledger/microvm`` (or under ``$XDG_CACHE_HOME``)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "fleetledger" / "microvm"


@dataclass(frozen=True, kw_only=True)
class GuestFiles:
    """The paths of the guest's cached parts in ``root``."""

    root: Path

    @property
    def kernel(self) -> Path:
        return self.root / "vmlinux"

    @property
    def initramfs(self) -> Path:
        return self.root / "initramfs.cpio.gz"

    @property
    def base(self) -> Path:
        return self.root / "base.img"

    @property
    def app(self) -> Path:
        return self.root / "app.img"

    @property
    def manifest(self) -> Path:
        return self.root / "guest.json"

    def read_manifest(self) -> dict[str, Any]:
        """Returns ``guest.json`` (empty when missing or unreadable)."""
        try:
            data = json.loads(self.manifest.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return {}
        return data if isinstance(data, dict) else {}

    def missing(self) -> list[str]:
        """Returns what is not built yet, or is stale, in words; empty when the guest is ready."""
        gaps = [path.name for path in (self.kernel, self.initramfs, self.base, self.app) if not path.is_file()]
        if not gaps and self.read_manifest().get("source_digest") != source_digest():
            gaps.append("app.img is stale (fleetledger's source or dependencies changed since it was built)")
        return gaps


def source_digest() -> str:
    """Returns SHA-256 of fleetledger's source files and ``pyproject.toml`` (what app.img holds)."""
    digest = hashlib.sha256()
    files = sorted(p for p in PACKAGE_DIR.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES
                   and "__pycache__" not in p.parts)
    pyproject = PROJECT_DIR / "pyproject.toml"
    for path in [*files, *([pyproject] if pyproject.is_file() else [])]:
        digest.update(str(path.relative_to(PROJECT_DIR)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
