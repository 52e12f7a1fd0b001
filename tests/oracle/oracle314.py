"""Runs the CPython 3.14 oracle (``dump314.mjs`` under node) over Python files.

Pyodide (CPython 3.14 compiled to WebAssembly) is installed by ``bash .ci/install-pyodide``
into ``.cache/pyodide``; starting it takes about 4 s, so callers pass all their files at once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("dump314.mjs")
INSTALL = "bash .ci/install-pyodide"


class OracleUnavailable(RuntimeError):
    """The oracle cannot run: Pyodide or node is missing; run `bash .ci/install-pyodide`."""


def pyodide_home() -> Path:
    """Where Pyodide is installed (``$FLEETLEDGER_PYODIDE`` or ``.cache/pyodide``)."""
    return Path(os.environ.get("FLEETLEDGER_PYODIDE") or REPO / ".cache" / "pyodide")


def check_installed() -> None:
    """Raises OracleUnavailable, naming the install script, unless the oracle can run.

    Raises:
        OracleUnavailable: node or the Pyodide package is missing.
    """
    if shutil.which("node") is None:
        raise OracleUnavailable(f"node is not installed, so the CPython 3.14 oracle cannot run: run `{INSTALL}`")
    if not (pyodide_home() / "node_modules" / "pyodide" / "pyodide.mjs").is_file():
        raise OracleUnavailable(f"Pyodide is not installed at {pyodide_home()}, so the CPython 3.14 oracle "
                                f"cannot run: run `{INSTALL}`")


def results(paths: Iterable[str | os.PathLike[str]], *, timeout_s: float = 1800) -> Iterator[dict[str, Any]]:
    """Parses each file with CPython 3.14 and yields its result, in order, as they come.

    Args:
        paths: The files.
        timeout_s: How long to wait for node to exit once its output has ended.

    Yields:
        ``{"path": ..., "ok": True, "tree": records}`` (records of ``canon.canonical``) or
        ``{"path": ..., "ok": False, "error": "SyntaxError: ...", "line": N}``.

    Raises:
        OracleUnavailable: the oracle is not installed, or node failed.
    """
    check_installed()
    listing = "".join(f"{os.fspath(path)}\n" for path in paths)
    with subprocess.Popen(["node", str(SCRIPT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, encoding="utf-8") as process:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        process.stdin.write(listing)
        process.stdin.close()
        for line in process.stdout:
            yield json.loads(line)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            raise OracleUnavailable(f"the CPython 3.14 oracle did not exit {timeout_s} s after its output ended") from None
        if process.returncode != 0:
            raise OracleUnavailable(f"the CPython 3.14 oracle failed (exit {process.returncode}): "
                                    f"{process.stderr.read().strip()[-2000:]}")


def run(paths: Iterable[str | os.PathLike[str]], *, timeout_s: float = 1800) -> dict[str, dict[str, Any]]:
    """Like ``results``, but all at once: path (as given) -> result."""
    return {result["path"]: result for result in results(paths, timeout_s=timeout_s)}
