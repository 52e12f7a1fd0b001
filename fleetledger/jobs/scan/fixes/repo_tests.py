"""The repository's own tests, run on a scratch copy with and without a patch (only when the
user's policy lists the ``pytest`` tool; in the worker, so inside its sandbox: no network, no
credentials).

The copy holds the repository's files (bounded), the patched file replaced; ``pytest`` runs in
it with the worker's interpreter, a bounded time, no cache and no bytecode written. The result
compares with the run without the patch, so a suite that fails already says nothing against
the patch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..plan import EXCLUDED_DIRS

MAX_COPY_FILES = 5_000
MAX_COPY_BYTES = 100 * 1024 * 1024
MAX_FILE_BYTES = 5 * 1024 * 1024
TESTS_TIMEOUT_S = 300.0
"""Longest run of the suite (each of the two); a suite that takes longer is reported so."""


@dataclass(frozen=True, kw_only=True)
class SuiteRun:
    """One run of the suite: pytest's exit ``code`` (None when it did not finish or could not
    start) and what to say about it (``note``)."""

    code: int | None
    note: str


def has_tests(root: Path) -> bool:
    """True when the tree has a pytest test module (``test_*.py`` or ``*_test.py``), looked for
    within the copy's bounds."""
    seen = 0
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if d not in EXCLUDED_DIRS]
        seen += len(files)
        if any(f.endswith(".py") and (f.startswith("test_") or f.endswith("_test.py")) for f in files):
            return True
        if seen > MAX_COPY_FILES:
            return False
    return False


def copy_tree(root: Path, into: Path) -> str | None:
    """Copies the repository's regular files (not links, not over ``MAX_FILE_BYTES``, not in
    version-control or cache folders) into ``into``; returns why it could not (too many files or
    bytes), else None."""
    files = total = 0
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if d not in EXCLUDED_DIRS and not (Path(folder) / d).is_symlink()]
        for name in names:
            source = Path(folder) / name
            if source.is_symlink() or not source.is_file():
                continue
            size = source.stat().st_size
            if size > MAX_FILE_BYTES:
                continue
            files, total = files + 1, total + size
            if files > MAX_COPY_FILES or total > MAX_COPY_BYTES:
                return f"the repository is larger than a test copy may be ({MAX_COPY_FILES} files, {MAX_COPY_BYTES} bytes)"
            target = into / source.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    return None


def run_suite(tree: Path, *, timeout_s: float = TESTS_TIMEOUT_S) -> SuiteRun:
    """Runs ``python -m pytest`` in ``tree`` (a scratch copy) and returns how it ended.

    The suite is the repository's code, run by the worker's user: it gets no stdin (the
    worker's is the coordinator's command pipe), and the worker makes itself non-dumpable first,
    so the suite cannot open the worker's pipes through ``/proc/PPID/fd`` and speak for it (a
    forged ``fix-check`` record saying a patch passed)."""
    from ....sandbox import shield_from_same_user

    shield_from_same_user()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tree), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONHASHSEED": "0", "LANG": "C.UTF-8"}
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--no-header"],
                              cwd=tree, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return SuiteRun(code=None, note=f"did not finish in {timeout_s:g} s")
    except OSError as exc:
        return SuiteRun(code=None, note=f"could not start: {exc}")
    last = (done.stdout.strip().splitlines() or [""])[-1][:200]
    return SuiteRun(code=done.returncode, note=last)


def pytest_available() -> bool:
    """True when the worker's interpreter can import pytest."""
    import importlib.util

    return importlib.util.find_spec("pytest") is not None


def compare(before: SuiteRun, after: SuiteRun) -> str:
    """What the suite says about a patch: ``passed``, ``failed: ...`` (it passed without the
    patch), or ``not comparable: ...`` (it did not pass without the patch either)."""
    if before.code != 0:
        return (f"not comparable: the tests do not pass without the patch either (pytest exit {before.code}: "
                f"{before.note})")
    if after.code == 0:
        return f"passed ({after.note})"
    return f"failed: pytest exit {after.code} with the patch, 0 without ({after.note})"
