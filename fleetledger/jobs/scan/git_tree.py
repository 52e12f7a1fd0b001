"""A git commit's tree, written into a folder, for ``scan --baseline REF`` (pull-request mode).

The scanned repository is untrusted, and its ``.git/config`` can name programs git runs (hooks,
``core.fsmonitor``, ``core.pager``, the ``tar.<format>.command`` of ``git archive``, clean and
smudge filters applied when files are written out). So git is called only for plumbing that
runs none of them (``rev-parse``, ``ls-tree``, ``cat-file --batch``: raw objects, no filters,
no pager, no hooks), with a fixed environment (no system or global config, no terminal prompt,
no replace objects, ``GIT_CEILING_DIRECTORIES`` at the root's parent) and with
``core.fsmonitor``, ``core.hooksPath`` and ``core.pager`` overridden on the command line.
``safe.directory`` is never widened: a repository git refuses as of dubious ownership stays
refused, and the error says so. The files are written here, by Python: regular files only
(symbolic links and submodules are left out, as the scan never follows them), every path checked
(no ``..``, no absolute path, no ``.git`` component), files over the scan's size limit left out
(the detect step would skip them unread).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ...errors import UsageError
from .plan import MAX_SOURCE_BYTES

GIT_TIMEOUT_S = 600
"""A git command that takes longer is stopped (a huge repository on a slow disk)."""
_SHA = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_OVERRIDES = ("-c", "core.fsmonitor=", "-c", "core.hooksPath=/dev/null", "-c", "core.pager=cat",
              "-c", "core.untrackedCache=false")


def _env(root: Path) -> dict[str, str]:
    keep = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR") if k in os.environ}
    return {**keep, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_REPLACE_OBJECTS": "1", "GIT_ATTR_NOSYSTEM": "1", "GIT_OPTIONAL_LOCKS": "0",
            "GIT_CEILING_DIRECTORIES": str(root.parent)}


def git(root: Path, *args: str, data: bytes | None = None) -> bytes:
    """Runs one git plumbing command in ``root`` with the fixed environment; returns its stdout.

    Raises:
        UsageError: git is missing, fails (its first error line is in the message) or times out.
    """
    if shutil.which("git") is None:
        raise UsageError("--baseline REF needs git on PATH (or give --baseline a SARIF file)")
    try:
        done = subprocess.run(["git", *_OVERRIDES, "-C", str(root), *args], input=data, capture_output=True,
                              env=_env(root), timeout=GIT_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise UsageError(f"git {args[0]} in {root} took over {GIT_TIMEOUT_S} s") from None
    if done.returncode != 0:
        first = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[0]
        raise UsageError(f"git {args[0]} in {root} failed: {first[:300]}")
    return done.stdout


def commit_of(root: Path, ref: str) -> str:
    """Returns the full commit id ``ref`` names in the repository at ``root``.

    Raises:
        UsageError: ``ref`` is empty, starts with "-", or names no commit there.
    """
    hint = f"--baseline {ref!r}: no such file, and no commit of that name in {root}: give a SARIF file or a git ref such " \
           "as origin/main"
    if not ref or ref.startswith("-") or "\0" in ref:
        raise UsageError(hint)
    try:
        out = git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}").strip()
    except UsageError as error:
        raise UsageError(f"{hint} ({error})") from None
    if not _SHA.fullmatch(out):
        raise UsageError(f"--baseline {ref}: git names no commit for it in {root}")
    return out.decode()


def materialise(root: Path, commit: str, dest: Path) -> tuple[int, int]:
    """Writes the regular files of ``commit``'s tree into ``dest`` (which must not exist).

    Written into a fresh temporary folder beside ``dest`` and renamed at the end, so an
    interrupted call leaves no half tree where a later run would take it for whole, and two
    processes writing the same commit at once do not mix (the second rename finds ``dest``
    there: its own copy is removed and the first one's kept). A file the file system refuses
    (a name too long for it) is left out and counted.

    Args:
        root: The repository's top folder.
        commit: A full commit id (``commit_of``).
        dest: Folder to create.

    Returns:
        ``(files written, entries left out)``: links, submodules, oversized files, bad paths.

    Raises:
        UsageError: a git command failed.
        OSError: a file could not be written.
    """
    listing = git(root, "ls-tree", "-r", "-z", "-l", "--full-tree", commit)
    wanted: list[tuple[str, str]] = []
    left_out = 0
    for entry in filter(None, listing.split(b"\0")):
        meta, _, raw_path = entry.partition(b"\t")
        mode, kind, sha, size = meta.split()
        parts = raw_path.split(b"/")
        if kind != b"blob" or mode not in (b"100644", b"100755") or int(size) > MAX_SOURCE_BYTES or \
                any(p in (b"", b".", b"..") or p.lower() == b".git" for p in parts):
            left_out += 1
            continue
        wanted.append((sha.decode(), os.fsdecode(raw_path)))
    refused = 0
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        with tempfile.TemporaryFile() as ids:
            ids.write(b"".join(sha.encode() + b"\n" for sha, _ in wanted))
            ids.seek(0)
            with subprocess.Popen(["git", *_OVERRIDES, "-C", str(root), "cat-file", "--batch"], stdin=ids,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env(root)) as proc:
                assert proc.stdout is not None
                for sha, path in wanted:  # streamed: one blob (at most MAX_SOURCE_BYTES) in memory at a time
                    header = proc.stdout.readline().split()
                    if len(header) != 3 or header[0].decode() != sha:
                        proc.kill()
                        raise UsageError(f"git cat-file in {root} gave {header!r} for {sha}")
                    body = proc.stdout.read(int(header[2]))
                    proc.stdout.read(1)
                    target = partial / path
                    try:
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(body)
                    except OSError as error:
                        if error.errno in (errno.ENOSPC, errno.EDQUOT):
                            raise
                        refused += 1
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    try:
        partial.rename(dest)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
        if not dest.is_dir():
            raise
    return len(wanted) - refused, left_out + refused
