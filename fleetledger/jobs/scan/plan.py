"""Planning the scan: which files, in which blocks, and the tasks of each sprint.

Every function here is deterministic: the same tree (or the same run view) gives the same plan,
so a plan lost in a crash is made again identically. Files are listed sorted by path, grouped
by folder into blocks (a block is one task), and fingerprinted (SHA-256 of their bytes) so that
a step's key names exactly the content it measured. The walk is bounded against a hostile
tree (``MAX_DEPTH``, ``MAX_WALK_ENTRIES``, ``MAX_SOURCE_BYTES``); what it cuts is planned as an
entry that the detect step reports as skipped, with the reason, never silently dropped.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import stat
import time
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

MAX_SOURCE_BYTES = 2 * 1024 * 1024
"""Larger source files are listed as not scanned and never read or hashed (``lstat`` decides).
2 MiB: real modules above 1 MiB exist (generated code, big test data) and are scanned; minified
bundles and data dumps (tens of MB) are not. ``detect.DetectLimits.max_bytes`` defaults to it."""
LINKED_FOLDER = "folder not walked: a symbolic link to a folder (never followed: it may point outside the repository)"
"""The skip reason of a link to a folder, listed so that what it holds is not silently missing."""

MAX_DEPTH = 64
"""Folders nested deeper below the scanned root are not walked (each is reported). Real
repositories rarely pass 30 levels (Java-style package trees, vendored node_modules); 64 leaves
room for those and stops a hostile nesting (1,000 levels) at once."""
MAX_WALK_ENTRIES = 1_000_000
"""Folder entries (files and folders, of any name) the walk lists in all; a folder whose listing
would pass it is not listed and is reported. A large monorepo has a few hundred thousand; the
bound stops a folder of millions of entries before it fills memory."""

BLOCK_FILES = 32
BLOCK_MIN_FILES = 16
BLOCK_BYTES = 128 * 1024
BLOCK_CANDIDATES = 24
BLOCK_MIN_CANDIDATES = 12
"""A task costs the run about 15 ms besides its steps (its lease and result recorded, its
assignment sent and read), while a step of a small file or a candidate's model pass takes a few:
small neighbouring folders share a task up to these sizes (``bench/scan_time.py``). A lost
task redoes only its steps not yet recorded, so a larger task costs a resumed run nothing more. ``BLOCK_BYTES`` bounds a detect task's work,
which grows with its files' size: a sprint ends when its last task does, and a 17-file block
of 470 KB (Django's ``db/models``) took 6 s, alone at the end of detect while the other worker
waited (``run.locality`` gives each worker its own part of the plan, so the costly folders may
come last). Django 5.1.4 has 196 detect tasks (255 with 8-file blocks and no byte bound)."""


@dataclass(frozen=True, kw_only=True)
class PlannedFile:
    """A file the scan covers, or a part of the tree the walk reports as not scanned.

    Attributes:
        path: Relative to the scanned root (forward slashes); a folder's path for a folder the
            walk did not enter.
        sha256: Hex SHA-256 of its bytes; empty for a link (not followed) or a skipped entry
            (never read).
        size_bytes: Its size by ``lstat`` (0 for a folder).
        link: True for a symbolic link.
        skip_reason: Why it is not scanned (``"exceeds size limit (N bytes > M)"``, ``"folder not
            walked: nested deeper than 64 levels"``...), or None for a file to scan.
    """

    path: str
    sha256: str
    size_bytes: int
    link: bool = False
    skip_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Returns the JSON form stored in ``task.planned`` (a file to scan keeps the form it had
        before ``skip_reason`` existed, so its task's inputs are unchanged)."""
        data: dict[str, Any] = {"path": self.path, "sha256": self.sha256, "size_bytes": self.size_bytes, "link": self.link}
        if self.skip_reason is not None:
            data["skip_reason"] = self.skip_reason
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlannedFile:
        """Builds an entry from ``to_json()`` output."""
        return cls(path=data["path"], sha256=data["sha256"], size_bytes=data["size_bytes"], link=data.get("link", False),
                   skip_reason=data.get("skip_reason"))


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True, kw_only=True, slots=True)
class Hashed:
    """A file as ``discover`` hashed it: its ``lstat`` signature (``file_signature``), the
    SHA-256 of its bytes, and when it was looked at (``time.time_ns()``, just after the
    ``lstat`` and before the read)."""

    signature: tuple[int, int, int, int, int]
    sha256: str
    looked_ns: int


def file_signature(info: os.stat_result) -> tuple[int, int, int, int, int]:
    """Device, inode, size, and modification and change times (ns) of a file's ``lstat``: a
    write changes the times, and no program sets the change time, so an equal signature is the
    same content (as git's index assumes), unless a write fell within the clock's resolution
    of the look (``current_hashes`` reads such a file again)."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def size_limit_reason(size_bytes: int, max_bytes: int) -> str:
    """The reason given for a file over the size limit, the same at planning and at detect."""
    return f"exceeds size limit ({size_bytes} bytes > {max_bytes})"


def discover(target: Path, *, exclude: tuple[Path, ...] = (), suffixes: tuple[str, ...] = SOURCE_SUFFIXES,
             max_bytes: int = MAX_SOURCE_BYTES, hashed: dict[str, Hashed] | None = None) -> list[PlannedFile]:
    """Lists the Python source files (or the files with other ``suffixes``) under ``target``,
    sorted by relative path (read-only, deterministic).

    The walk is iterative (a stack, not recursion), in sorted order, and bounded: a folder
    nested deeper than ``MAX_DEPTH`` levels is not entered, a folder whose listing would take
    the walk past ``MAX_WALK_ENTRIES`` entries is not listed, and a file larger than
    ``max_bytes`` (by ``lstat``) is neither read nor hashed. Each of these is returned as an
    entry with ``skip_reason`` set (a folder's path for a folder), so the run reports it as not
    scanned. Symbolic links are listed but never followed (a link may point outside the
    repository, or make a loop); folders in ``EXCLUDED_DIRS`` and the folders in ``exclude``
    (the workspace, when it sits inside the target) are left out.

    Args:
        target: The scanned root (absolute).
        exclude: Absolute folders to leave out.
        suffixes: The endings of the file names listed.
        max_bytes: Larger files are listed as not scanned, unread (bytes).
        hashed: Filled with each file hashed, by relative path: the ``lstat`` it was hashed
            under and when (``Hashed``), so that a later reader can tell it unchanged by its
            ``lstat`` alone (``step_inputs.current_hashes``).

    Returns:
        The files, fingerprinted (SHA-256 of their bytes; empty for a link or a skipped entry).

    Raises:
        OSError: ``target`` cannot be listed (a folder under it that cannot be listed is
            returned as an entry with its reason).
    """
    excluded = {p.resolve() for p in exclude}
    found: list[PlannedFile] = []
    listed = 0
    # (folder, its path relative to target, depth): popped in sorted order (pushed reversed).
    stack: list[tuple[Path, str, int]] = [(Path(target), "", 0)]
    while stack:
        here, rel_here, depth = stack.pop()
        if depth > MAX_DEPTH:
            found.append(PlannedFile(path=rel_here, sha256="", size_bytes=0,
                                     skip_reason=f"folder not walked: nested deeper than {MAX_DEPTH} levels"))
            continue
        try:
            entries = _list_folder(here, MAX_WALK_ENTRIES - listed)
        except OSError as error:
            if not rel_here:
                raise
            found.append(PlannedFile(path=rel_here, sha256="", size_bytes=0,
                                     skip_reason=f"folder not walked: unreadable: {error.strerror}"))
            continue
        if entries is None:
            found.append(PlannedFile(path=rel_here or ".", sha256="", size_bytes=0,
                                     skip_reason=f"folder not walked: the walk lists at most {MAX_WALK_ENTRIES} entries"))
            continue
        listed += len(entries)
        folders = []
        for name, is_dir, is_link in sorted(entries):
            if not is_dir and not name.endswith(suffixes):
                continue
            path = here / name
            rel = f"{rel_here}/{name}" if rel_here else name
            if is_dir and is_link:  # never followed (it may point outside the repository), always reported
                found.append(PlannedFile(path=rel, sha256="", size_bytes=0, link=True, skip_reason=LINKED_FOLDER))
                continue
            if is_dir:
                if name not in EXCLUDED_DIRS and not (excluded and path.resolve() in excluded):
                    folders.append((path, rel, depth + 1))
                continue
            try:
                info = path.lstat()
            except OSError as error:  # a name that takes the path past PATH_MAX, a file gone
                found.append(PlannedFile(path=rel, sha256="", size_bytes=0, skip_reason=f"unreadable: {error.strerror}"))
                continue
            if stat.S_ISLNK(info.st_mode):
                found.append(PlannedFile(path=rel, sha256="", size_bytes=0, link=True))
            elif stat.S_ISREG(info.st_mode):
                if info.st_size > max_bytes:
                    found.append(PlannedFile(path=rel, sha256="", size_bytes=info.st_size,
                                             skip_reason=size_limit_reason(info.st_size, max_bytes)))
                else:
                    looked_ns = time.time_ns()
                    digest = _sha256_file(path)
                    found.append(PlannedFile(path=rel, sha256=digest, size_bytes=info.st_size))
                    if hashed is not None:
                        hashed[rel] = Hashed(signature=file_signature(info), sha256=digest, looked_ns=looked_ns)
        stack.extend(reversed(folders))
    found.sort(key=lambda f: f.path)
    return found


def _list_folder(folder: Path, at_most: int) -> list[tuple[str, bool, bool]] | None:
    """``(name, is a folder or a link to one, is a link)`` of each entry of ``folder``, or None
    when it has more than ``at_most`` entries (it is then not read to the end).

    Raises:
        OSError: the folder cannot be listed.
    """
    entries: list[tuple[str, bool, bool]] = []
    with os.scandir(folder) as listing:
        for entry in listing:
            if len(entries) >= at_most:
                return None
            try:
                is_dir = entry.is_dir()
            except OSError:  # a link loop or a dangling link: not a folder
                is_dir = False
            entries.append((entry.name, is_dir, entry.is_symlink()))
    return entries


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
        read_bytes = 0 if f.skip_reason else f.size_bytes  # a skipped entry is never read
        new_folder = folder != current_dir and len(current) >= min_files
        if current and (new_folder or len(current) >= max_files or size + read_bytes > max_bytes):
            out.append(current)
            current, size = [], 0
        current.append(f)
        current_dir = folder
        size += read_bytes
    if current:
        out.append(current)
    return out


def candidate_blocks(candidates: list[Candidate], *, max_items: int = BLOCK_CANDIDATES,
                     min_items: int = BLOCK_MIN_CANDIDATES) -> list[list[Candidate]]:
    """Groups candidates (any order) by folder, sorted by (path, line, col, rule), into blocks of
    at most ``max_items``; a file's candidates stay in one block where the limit allows. A new
    folder starts a new block once the block holds ``min_items`` (as ``blocks`` does)."""
    ordered = sorted(candidates, key=lambda c: (c.path, c.line, c.col, c.rule_id, c.id))
    out: list[list[Candidate]] = []
    current: list[Candidate] = []
    current_dir: str | None = None
    for c in ordered:
        folder = posixpath.dirname(c.path)
        if current and (folder != current_dir and len(current) >= min_items or len(current) >= max_items):
            out.append(current)
            current = []
        current.append(c)
        current_dir = folder
    if current:
        out.append(current)
    return out


def nothing_to_scan(target: Path, workspace: Path, planned: int, skipped: int) -> str | None:
    """Says why a finished scan scanned no file (None when it scanned one): the target holds no
    Python file (with the number of other files there, the workspace left out), or every one
    was skipped.

    Args:
        target: The scanned folder.
        workspace: The run's workspace (not counted when inside the target).
        planned: Python files planned.
        skipped: Of those, skipped.
    """
    if planned and skipped < planned:
        return None
    if planned:
        return (f"nothing to scan: all {planned} Python file(s) under {target} were skipped "
                "(see the skip reasons in findings.md)")
    others = 0
    for folder, dirs, files in os.walk(target, followlinks=False):
        here = Path(folder)
        dirs[:] = [d for d in dirs if d not in EXCLUDED_DIRS and (here / d).resolve() != workspace]
        others += len(files)
    there = f"{others} other file(s) there, none of them Python" if others else "the folder is empty"
    return f"nothing to scan: no Python file ({', '.join(SOURCE_SUFFIXES)}) under {target} ({there})"
