"""Reading the scanned repository's files safely, and its other modules for the taint engine.

``read_file`` reads one file of the scanned tree the way every reader here must: inside the
root (``realpath``), never through a symbolic link (``O_NOFOLLOW``), only a regular file, and
only when its size (``fstat``, before any read) is at most ``max_bytes``: a larger file is
neither read nor hashed. ``RepositoryModules`` gives the taint engine the other
modules a file imports: only files the policy lets the task read (``readable``), only at the
content the run planned (SHA-256 checked), parsed once per worker process (a small cache keyed
by path and hash), never raising for a file's content.
"""

from __future__ import annotations

import ast
import errno
import hashlib
import os
import stat
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from pathlib import Path

from . import source
from .plan import size_limit_reason

UNREAD_REASONS = ("outside the scanned root", "symbolic link", "unreadable:", "not a regular file", "exceeds size limit")
"""The reasons ``read_file`` gives for a file it did not read at all (its hash is then the empty
content's, or empty, which says nothing about the file)."""
_READ_CHUNK_BYTES = 1024 * 1024
_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_CACHED_MODULES = 256
_parsed: OrderedDict[tuple[str, str, str], tuple[ast.Module, list[str]] | None] = OrderedDict()
_UNREAD: set[tuple[str, str, str]] = set()
"""(root, path, planned SHA-256) of the files this process found not at their planned content
(``RepositoryModules.hashes``); at ``_MAX_UNREAD`` it is emptied with the engine's shared caches."""
_MAX_UNREAD = 10_000
_PATHS: dict[int, tuple[Mapping[str, str], tuple[str, ...]]] = {}
"""``id(readable)`` -> (readable, its Python files): the last worker's plan's files, sorted once
(``RepositoryModules.paths``, asked once per analysed file)."""


@dataclass(frozen=True, kw_only=True)
class Content:
    """One file as read: its hash and size always, its bytes only when it may be analysed.

    Attributes:
        path: The file's path.
        sha256: Hex SHA-256 of all its bytes; empty when it is over the size limit (not read).
        size_bytes: Its size.
        data: Its bytes, or None when it is not analysed (then ``problem`` says why).
        problem: Why it is not analysed, or None.
    """

    path: Path
    sha256: str
    size_bytes: int
    data: bytes | None
    problem: str | None = None


def read_file(root: Path, relpath: str, max_bytes: int, *, folders: dict[str, str] | None = None) -> Content:
    """Reads and hashes a file of the scanned tree once; never follows a link or leaves
    ``root``, and reads nothing of a file larger than ``max_bytes`` (``Content.problem`` says
    why a file is not read; ``sha256`` is then empty or the empty content's).

    ``folders`` (a dict the caller keeps) holds the real path of each folder resolved so far,
    for a caller that reads many files of one tree: the file's real path is then its folder's
    and its name (a file that is a link is refused when opened, as a "symbolic link" rather
    than as "outside the scanned root")."""
    path = root / relpath

    def unread(problem: str) -> Content:
        return Content(path=path, sha256=_EMPTY_SHA256, size_bytes=0, data=None, problem=problem)

    if folders is None:
        real_root, real_path = os.path.realpath(root), os.path.realpath(path)
    else:
        real_root, real_path = _real_folder(folders, str(root)), os.path.join(_real_folder(folders, str(path.parent)), path.name)
    if os.path.commonpath([real_root, real_path]) != real_root:
        return unread("outside the scanned root")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return unread("symbolic link (not followed)")
        return unread(f"unreadable: {error.strerror}")
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return unread("not a regular file")
    if info.st_size > max_bytes:  # by its size alone: not a byte of it is read or hashed
        os.close(fd)
        return Content(path=path, sha256="", size_bytes=info.st_size, data=None,
                       problem=size_limit_reason(info.st_size, max_bytes))
    with open(fd, "rb") as stream:
        digest = hashlib.sha256()
        kept: list[bytes] = []
        size = 0
        try:  # at most one chunk past the limit, should the file grow while it is read
            while size <= max_bytes and (chunk := stream.read(_READ_CHUNK_BYTES)):
                digest.update(chunk)
                size += len(chunk)
                kept.append(chunk)
        except OSError as error:
            return unread(f"unreadable: {error.strerror}")
    if size > max_bytes:
        return Content(path=path, sha256="", size_bytes=size, data=None, problem=size_limit_reason(size, max_bytes))
    return Content(path=path, sha256=digest.hexdigest(), size_bytes=size, data=b"".join(kept))


def _real_folder(folders: dict[str, str], folder: str) -> str:
    if folder not in folders:
        folders[folder] = os.path.realpath(folder)
    return folders[folder]


MODULE_SUFFIXES = (".py", ".pyw", ".pyi")
"""Files the taint engine may load as modules."""


def python_paths(readable: Iterable[str]) -> tuple[str, ...]:
    """The module files among ``readable`` paths, sorted."""
    return tuple(sorted(p for p in readable if p.endswith(MODULE_SUFFIXES)))


def still_holds(result: Mapping[str, Any], planned: Mapping[str, Any], readable: Mapping[str, str],
                module_paths: tuple[str, ...], on_disk: Callable[[str], str] | None = None,
                index: tuple[dict[str, str], dict[str, str]] | None = None) -> bool:
    """Says whether a detect result recorded by an earlier scan is this scan's result for the
    same file: the file was read at the hash this scan planned, and everything the analysis
    depended on (``FileReport.depends``) holds here: each other file it read has the same
    hash among the files this scan may read, each import and template name it looked up
    resolves to the same file (or to none) among them, and each module it loaded (itself
    included) has the same import name. With ``on_disk``, the file and each file it read must
    also still be at their planned hashes now, as an analysis run now would find them (a file
    changed since the run was planned, say between a crash and the resume, is reported by the
    analysis as changed during the scan, or not used; a reused result must not hide that).

    Args:
        result: The recorded ``FileReport.to_json()``.
        planned: This scan's planned file (``path``, ``sha256``).
        readable: Path -> planned SHA-256 of every file this scan's engine may read.
        module_paths: ``python_paths(readable)``.
        on_disk: Path -> the SHA-256 of the file as it is now ("" when it cannot be read),
            or None to check the plan only (a pure function of its arguments then).
        index: ``module_index(module_paths)``, when the caller has it (computed otherwise).

    Returns:
        True when the result may be reused; False when it was not read at the planned hash
        (changed during its scan, unread), any dependency differs, or a file it read is no
        longer at its planned hash. A result without ``depends`` holds only when it is a skip
        decided by the file's own content.
    """
    from ...analysis.definitions import module_index

    if not planned.get("sha256") or result.get("sha256") != planned["sha256"]:
        return False
    if on_disk is not None and on_disk(str(planned["path"])) != planned["sha256"]:
        return False
    depends = result.get("depends")
    if not isinstance(depends, dict):
        return result.get("status") == "skipped" and not str(result.get("reason", "")).startswith(UNREAD_REASONS)
    if any(readable.get(path) != sha for path, sha in depends.get("files", {}).items()):
        return False
    if on_disk is not None and any(on_disk(path) != sha for path, sha in depends.get("files", {}).items()):
        return False
    names, own = depends.get("names", {}), depends.get("modules", {})
    if names or own:
        if planned["path"] in readable or not planned["path"].endswith(MODULE_SUFFIXES):
            by_name, by_path = index if index is not None else module_index(module_paths)
        else:
            by_name, by_path = module_index(tuple(sorted({*module_paths, planned["path"]})))
        if any(by_name.get(name) != path for name, path in names.items()) \
                or any(by_path.get(path) != name for path, name in own.items()):
            return False
    return all(template_path(readable, name) == path for name, path in depends.get("templates", {}).items())


def template_path(paths: Iterable[str], name: str) -> str | None:
    """The file of ``paths`` that a view rendering the template ``name`` gets: one whose path
    ends with ``name``, one under a ``templates`` folder first, the shortest first; None when
    there is none or the name is absolute or climbs (``..``). A pure function of the paths, so
    that a later scan can check that a name still resolves to the same file (``reuse``)."""
    from .plan import TEMPLATE_SUFFIXES

    if not name or name.startswith("/") or ".." in name.split("/"):
        return None
    matches = [p for p in paths if p.endswith(TEMPLATE_SUFFIXES) and (p == name or p.endswith("/" + name))]
    return min(matches, key=lambda p: ("/templates/" not in "/" + p, len(p), p), default=None)


def disk_hashes(root: Path, max_bytes: int) -> Callable[[str], str]:
    """Returns a function giving the SHA-256 of a file of ``root`` as it is now (``read_file``:
    never through a link, never outside the root), or "" when it cannot be read whole (a
    link, unreadable, over ``max_bytes``); each path is read once per returned function."""
    known: dict[str, str] = {}
    folders: dict[str, str] = {}

    def sha(relpath: str) -> str:
        if relpath not in known:
            content = read_file(root, relpath, max_bytes, folders=folders)
            known[relpath] = content.sha256 if content.problem is None else ""
        return known[relpath]

    return sha


class RepositoryModules:
    """The taint engine's loader: reads, checks and parses another module of the repository.

    Args:
        root: The scanned root.
        readable: Repository-relative path -> planned SHA-256, for every file the task may read
            (read, not copied: the same mapping serves every file of a worker's tasks).
        max_bytes: Larger files are not read.
        own: The path of the file being analysed, which is not loaded as another module.

    Attributes:
        lines: Path -> the lines of every module loaded (for columns and snippets).
        problems: One line per module that could not be used, and why.
        unread: The files that were not at their planned content when read (changed since
            planned, unreadable, a link now): what an analysis found without them says
            nothing about their planned content (``hashes``).
    """

    def __init__(self, root: Path, readable: Mapping[str, str], max_bytes: int, own: str = "") -> None:
        self.root = root
        self.readable = readable
        self.own = own
        self.max_bytes = max_bytes
        self.lines: dict[str, list[str]] = {}
        self.problems: list[str] = []
        self.unread: set[str] = set()

    def hashes(self, paths: Iterable[str]) -> dict[str, str]:
        """Path -> the hash an analysis that used this loader read each of ``paths`` at (those
        it may read): the planned one, or "" for a file that was not at its planned content
        when this loader, or any other of this process for the same root and plan, read it (an
        analysis may adopt a summary computed without that file, ``_UNREAD``). A result that
        depends on such a file then never holds (``still_holds``), since "" is no file's
        planned hash."""
        root = str(self.root)
        return {path: "" if path in self.unread or (root, path, sha) in _UNREAD else sha
                for path in paths if (sha := self.readable.get(path)) is not None}

    def _not_at_plan(self, relpath: str) -> None:
        self.unread.add(relpath)
        if len(_UNREAD) >= _MAX_UNREAD:  # forgetting them is safe only with what was computed without them
            from ...analysis import program, summary_sharing

            _UNREAD.clear()
            summary_sharing._SHARED.clear()
            program._SHARED_MODULES.clear()
        _UNREAD.add((str(self.root), relpath, self.readable[relpath]))

    def paths(self) -> list[str]:
        """The Python files the engine may load, sorted (the analysed one left out)."""
        known = _PATHS.get(id(self.readable))
        if known is None or known[0] is not self.readable:
            _PATHS.clear()
            known = _PATHS[id(self.readable)] = (self.readable, python_paths(self.readable))
        return [path for path in known[1] if path != self.own]

    def find_template(self, name: str) -> tuple[str, str] | None:
        """The template a view renders as ``name``: the readable file whose path ends with it,
        one under a ``templates`` folder first, the shortest first; ``(path, text)`` or None.
        Read like a module (planned hash checked, never through a link)."""
        from .plan import MAX_TEMPLATE_BYTES

        path = template_path(self.readable, name)
        if path is None:
            return None
        content = read_file(self.root, path, MAX_TEMPLATE_BYTES)
        if content.data is None or content.sha256 != self.readable[path]:
            self._not_at_plan(path)
            self.problems.append(f"{path}: template not read ({content.problem or 'changed since planned'})")
            return None
        return path, content.data.decode("utf-8", "replace")

    def lines_of(self, relpath: str) -> list[str]:
        """The lines of a readable module, read now when the engine did not load it here (it
        may have taken the module from the process's shared cache); ``[]`` when it cannot be
        read. Columns and snippets of a candidate in another file never depend on which files
        this process analysed before."""
        if relpath not in self.lines:
            self(relpath)
        return self.lines.get(relpath, [])

    def __call__(self, relpath: str) -> tuple[str, ast.Module] | None:
        """Returns ``(relpath, tree)``, or None when the file may not be read, changed since it
        was planned, or does not parse (a note in ``problems`` says which)."""
        from ...analysis import parser

        planned = self.readable.get(relpath) if relpath != self.own else None
        if planned is None:
            return None
        key = (str(self.root), relpath, planned)
        if key in _parsed:
            _parsed.move_to_end(key)
            cached = _parsed[key]
        else:
            cached = None
            content = read_file(self.root, relpath, self.max_bytes)
            if content.data is None or content.sha256 != planned:
                self._not_at_plan(relpath)
                self.problems.append(f"{relpath}: not used for cross-file flows ({content.problem or 'changed since planned'})")
                return None
            try:
                text = source.decode_source(content.data).text
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cached = (parser.parse_module(text).module, source.split_lines(text))
            except (source.UndecodableSourceError, parser.ParseError, ValueError) as error:
                self.problems.append(f"{relpath}: not used for cross-file flows ({error})")
            _parsed[key] = cached
            while len(_parsed) > _CACHED_MODULES:
                _parsed.popitem(last=False)
        if cached is None:
            return None
        tree, lines = cached
        self.lines[relpath] = lines
        return relpath, tree
