"""Planning the scan: which files, in which blocks, and the tasks of each sprint.

Every function here is deterministic: the same tree (or the same run view) gives the same plan,
so a plan lost in a crash is made again identically. Files are listed sorted by path, grouped
by folder into blocks (a block is one task), and fingerprinted (SHA-256 of their bytes) so that
a step's key names exactly the content it measured.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .shapes import Candidate

SOURCE_SUFFIXES = (".py", ".pyw")
EXCLUDED_DIRS = frozenset({".git", ".hg", ".svn", "CVS", ".bzr", "__pycache__", ".tox", ".eggs", ".nox",
                           ".mypy_cache", ".pytest_cache", ".ruff_cache"})
"""Folders never scanned (version control and tool caches; bandit excludes the same)."""
TEMPLATE_SUFFIXES = (".html", ".htm", ".xhtml", ".xml", ".jinja", ".jinja2", ".j2", ".djhtml")
"""Template files the taint engine may read to see what a view's render call writes unescaped."""
MAX_TEMPLATE_BYTES = 1024 * 1024

BLOCK_FILES = 32
BLOCK_MIN_FILES = 8
BLOCK_BYTES = 4 * 1024 * 1024
BLOCK_CANDIDATES = 24


@dataclass(frozen=True, kw_only=True)
class PlannedFile:
    """A file the scan covers: ``path`` relative (forward slashes), ``sha256`` of its bytes
    (empty for a symbolic link, which is not followed), ``size_bytes``, ``link``."""

    path: str
    sha256: str
    size_bytes: int
    link: bool = False

    def to_json(self) -> dict[str, Any]:
        """Returns the JSON form stored in ``task.planned``."""
        return {"path": self.path, "sha256": self.sha256, "size_bytes": self.size_bytes, "link": self.link}


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def discover(target: Path, *, exclude: tuple[Path, ...] = (), suffixes: tuple[str, ...] = SOURCE_SUFFIXES) -> list[PlannedFile]:
    """Lists the Python source files (or the files with other ``suffixes``) under ``target``,
    sorted by relative path (read-only).

    Symbolic links are listed but never followed (a link may point outside the repository);
    folders in ``EXCLUDED_DIRS`` and the folders in ``exclude`` (the workspace, when it sits
    inside the target) are left out.

    Args:
        target: The scanned root (absolute).
        exclude: Absolute folders to leave out.

    Returns:
        The files, fingerprinted.

    Raises:
        OSError: ``target`` cannot be listed.
    """
    excluded = {p.resolve() for p in exclude}
    found: list[PlannedFile] = []

    def onerror(exc: OSError) -> None:
        raise exc

    for folder, dirs, files in os.walk(target, onerror=onerror, followlinks=False):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if d not in EXCLUDED_DIRS and (here / d).resolve() not in excluded
                         and not (here / d).is_symlink())
        for name in sorted(files):
            if not name.endswith(suffixes):
                continue
            path = here / name
            rel = path.relative_to(target).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                found.append(PlannedFile(path=rel, sha256="", size_bytes=0, link=True))
            elif stat.S_ISREG(info.st_mode):
                found.append(PlannedFile(path=rel, sha256=_sha256_file(path), size_bytes=info.st_size))
    found.sort(key=lambda f: f.path)
    return found


def blocks(files: list[PlannedFile], *, max_files: int = BLOCK_FILES, max_bytes: int = BLOCK_BYTES,
           min_files: int = BLOCK_MIN_FILES) -> list[list[PlannedFile]]:
    """Groups files (sorted by path) into blocks of neighbouring folders, split when a block
    would exceed ``max_files`` files or ``max_bytes`` bytes; a folder's files stay together as
    far as the limits allow. A new folder starts a new block once the block holds
    ``min_files`` files: small neighbouring folders (a locale per folder, a package per folder)
    share a block, so a repository of many tiny folders is not many tiny tasks."""
    out: list[list[PlannedFile]] = []
    current: list[PlannedFile] = []
    current_dir: str | None = None
    size = 0
    for f in files:
        folder = posixpath.dirname(f.path)
        new_folder = folder != current_dir and len(current) >= min_files
        if current and (new_folder or len(current) >= max_files or size + f.size_bytes > max_bytes):
            out.append(current)
            current, size = [], 0
        current.append(f)
        current_dir = folder
        size += f.size_bytes
    if current:
        out.append(current)
    return out


def candidate_blocks(candidates: list[Candidate], *, max_items: int = BLOCK_CANDIDATES) -> list[list[Candidate]]:
    """Groups candidates (any order) by folder, sorted by (path, line, col, rule), into blocks of
    at most ``max_items``; a file's candidates stay in one block where the limit allows."""
    ordered = sorted(candidates, key=lambda c: (c.path, c.line, c.col, c.rule_id, c.id))
    out: list[list[Candidate]] = []
    current: list[Candidate] = []
    current_dir: str | None = None
    for c in ordered:
        folder = posixpath.dirname(c.path)
        if current and (folder != current_dir or len(current) >= max_items):
            out.append(current)
            current = []
        current.append(c)
        current_dir = folder
    if current:
        out.append(current)
    return out
