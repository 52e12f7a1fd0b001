"""The identity of the code that decides a run's results.

A run records, in every session's record (``run.started``, ``run.resumed``, ``run.joined``),
the identity of the code that produced its results: fleetledger's version, a SHA-256 over the
source of the job (and, for the scan, of the analyst: the taint engine and its library
models), the detectors' versions, and the model and prompt versions. Two sessions of one run
under different identities would mix results of both versions in one report, so the
coordinator refuses to continue a run recorded under another identity (``Coordinator``), and
the reports name every identity that contributed.

Hand-kept version constants (``DETECT_VERSION``, ``ANALYST_VERSION``) change only when someone
remembers to bump them; the source digests change with every edit of the code they cover.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
SOURCE_SUFFIXES = (".py", ".toml", ".json", ".sql")


@lru_cache(maxsize=None)
def source_digest(*parts: str) -> str:
    """Returns the SHA-256 (hex, first 16 digits) of the package's source under ``parts``
    (paths relative to the package folder: files, or folders taken whole), over each file's
    relative path and bytes in path order; caches, ``__pycache__`` and other suffixes are left
    out. Computed once per process (a few milliseconds).

    Raises:
        OSError: a file cannot be read.
    """
    digest = hashlib.sha256()
    for path in sorted(_files(PACKAGE_DIR / part for part in parts)):
        digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _files(roots: Iterable[Path]) -> set[Path]:
    found: set[Path] = set()
    for root in roots:
        if root.is_file():
            found.add(root)
        elif root.is_dir():
            found.update(p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES and "__pycache__" not in p.parts
                         and p.is_file())
    return found


def differences(recorded: dict[str, str], current: dict[str, str]) -> list[str]:
    """Returns ``"name: recorded -> current"`` for each part of two identities that differs."""
    names = sorted(set(recorded) | set(current))
    return [f"{name}: {recorded.get(name, '(none)')} -> {current.get(name, '(none)')}"
            for name in names if recorded.get(name) != current.get(name)]
