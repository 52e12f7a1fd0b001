"""Helpers for end-to-end tests: run the real CLI in a real process, read the real ledger."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fleetledger.ledger import Record, open_storage

MICROVM_ENV = "FLEETLEDGER_TEST_MICROVM"
BOOTS_A_VM = pytest.mark.skipif(os.environ.get(MICROVM_ENV) != "1",
                                reason=f"boots a VM (seconds under emulation); set {MICROVM_ENV}=1")
"""Marks a test that boots microVMs: run only with ``FLEETLEDGER_TEST_MICROVM=1`` (CI sets it)."""

REPO_ROOT = Path(__file__).resolve().parent.parent
FLASK = REPO_ROOT / ".cache" / "repos" / "flask-3.0.3"


def real_repo() -> Path:
    """The Flask 3.0.3 sdist (fetched by .ci/fetch-test-repos); fails loudly when missing."""
    if not (FLASK / "src" / "flask").is_dir():
        raise AssertionError(f"{FLASK} is missing: run .ci/fetch-test-repos first (CI's .ci/run does)")
    return FLASK


def real_library(where: Path) -> Path:
    """A copy at ``where`` of the real repository without its own tests, docs and examples
    (Flask's ``src/`` and top-level files: 24 of its 82 Python files, and most of its
    findings): the same real code in fewer tasks, for the tests that run several hosts on it.
    Returns ``where``."""
    root = real_repo()
    shutil.copytree(root, where, symlinks=True,
                    ignore=lambda folder, names: [n for n in names if Path(folder) == root and n in ("tests", "docs", "examples")])
    return where


CLI_BOOT = (f"import runpy, sys; sys.path.insert(0, {str(REPO_ROOT)!r}); "
            "runpy.run_module('fleetledger.cli', run_name='__main__', alter_sys=True)")
"""``python -m fleetledger.cli`` as the installed ``fleetledger`` command runs it: in isolated
mode, so a test's current folder (a repository built to attack the scan, with its own
``json.py``) is not on ``sys.path``; the checkout under test is put there explicitly."""


def cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-I", "-c", CLI_BOOT, *args]


def _env(env: dict[str, str] | None) -> dict[str, str]:
    """The environment of a started process. Runs that inject faults into workers use no
    sandbox (the fault's files and the test's view of the worker processes are on the host);
    every other run uses the default sandbox, bubblewrap."""
    full = {**os.environ, **(env or {})}
    if any(k.startswith("FLEETLEDGER_FAULT") for k in env or {}):
        full.setdefault("FLEETLEDGER_SANDBOX", "none")
    return full


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout_s: float = 240) -> subprocess.CompletedProcess[str]:
    """Runs ``fleetledger ARGS`` to completion in a new process and returns what it did."""
    return subprocess.run(cli_argv(*args), cwd=cwd, env=_env(env), capture_output=True, text=True, timeout=timeout_s)


def start_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Starts ``fleetledger ARGS`` in the background (end it with ``kill_cli``)."""
    return subprocess.Popen(cli_argv(*args), env=_env(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def kill_cli(proc: subprocess.Popen[str], sig: int = signal.SIGKILL) -> str:
    """Sends ``sig`` to a started CLI process, reaps it and returns its stderr."""
    os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=120)
    return err or ""


def records(workspace: Path) -> list[Record]:
    """Every record of the workspace's ledger, in order."""
    with open_storage(f"sqlite:///{workspace / 'ledger.sqlite3'}") as store:
        return list(store.read())


def wait_for(predicate: Callable[[], bool], *, timeout_s: float = 120, what: str = "condition",
             proc: subprocess.Popen[str] | None = None) -> None:
    """Polls ``predicate`` until it holds (an event: a record appearing, a file changing)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if proc is not None and proc.poll() is not None:
            _, err = proc.communicate()
            raise AssertionError(f"process ended (exit {proc.returncode}) before {what}: {err}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.02)


def count(workspace: Path, kind: str, prefix: str = "") -> int:
    """Number of records of ``kind`` whose key starts with ``prefix`` (0 when no ledger yet)."""
    if not (workspace / "ledger.sqlite3").exists():
        return 0
    return sum(1 for r in records(workspace) if r.kind == kind and (r.key or "").startswith(prefix))


def normalized_sarif(path: Path) -> dict[str, Any]:
    """The SARIF log without what differs between two runs of the same scan (run id, start time)."""
    log = copy.deepcopy(json.loads(path.read_text(encoding="utf-8")))
    for run in log["runs"]:
        run.get("properties", {}).pop("runId", None)
        for invocation in run.get("invocations", []):
            invocation.pop("startTimeUtc", None)
            invocation.pop("endTimeUtc", None)
    return log


def sarif_differences(actual: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """What differs between two normalised SARIF logs, one line per result or notification
    present in only one of them (``[]`` when the logs are equal); a readable assertion message."""
    def lines(log: dict[str, Any]) -> set[str]:
        out = set()
        for run in log["runs"]:
            for result in run.get("results", []):
                location = result.get("locations", [{}])[0].get("physicalLocation", {})
                whole = hashlib.sha256(json.dumps(result, sort_keys=True).encode()).hexdigest()[:8]
                out.add(f"result {result.get('ruleId')} {location.get('artifactLocation', {}).get('uri')}:"
                        f"{location.get('region', {}).get('startLine')} {result.get('level')} (content {whole}): "
                        f"{result.get('message', {}).get('text', '')[:300]}")
            for invocation in run.get("invocations", []):
                for note in invocation.get("toolExecutionNotifications", []):
                    out.add(f"notification {json.dumps(note, sort_keys=True)[:300]}")
        return out
    if actual == expected:
        return []
    mine, theirs = lines(actual), lines(expected)
    found = [f"only in actual: {line}" for line in sorted(mine - theirs)]
    found += [f"only in expected: {line}" for line in sorted(theirs - mine)]
    return found or ["the logs differ outside results and notifications"]


def synthetic_argv(workspace: Path, *args: str) -> list[str]:
    """The command that runs (or resumes) a synthetic fleet job in ``workspace``."""
    return [sys.executable, "-m", "fleetledger.jobs.synthetic", str(workspace), *args]


def run_synthetic(workspace: Path, *args: str, env: dict[str, str] | None = None,
                  timeout_s: float = 240) -> subprocess.CompletedProcess[str]:
    """Runs a synthetic job to its end in a new process."""
    return subprocess.run(synthetic_argv(workspace, *args), env=_env(env), capture_output=True, text=True,
                          timeout=timeout_s)


def start_synthetic(workspace: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Starts a synthetic job in the background (end it with ``kill_cli``)."""
    return subprocess.Popen(synthetic_argv(workspace, *args), env=_env(env), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def stopped_child(pid: int) -> "psutil.Process | None":
    """A child of process ``pid`` that is stopped (SIGSTOP), if any."""
    import psutil

    try:
        children = psutil.Process(pid).children()
    except psutil.NoSuchProcess:
        return None
    for child in children:
        try:
            if child.status() == psutil.STATUS_STOPPED:
                return child
        except psutil.NoSuchProcess:
            continue
    return None


def injection_repo(root: Path, files: int) -> Path:
    """A repository at ``root/repo`` of ``files`` Flask views, each with a command injection
    (``app/v<N>.py``): the planted findings of the end-to-end tests."""
    repo = root / "repo"
    (repo / "app").mkdir(parents=True)
    for n in range(files):
        (repo / "app" / f"v{n}.py").write_text(
            "import subprocess\nfrom flask import request\n\n\n"
            f"def run{n}():\n    return subprocess.check_output('ls ' + request.args['d'], shell=True)\n")
    return repo


def installed_copy(tmp_path: Path) -> Path:
    """A copy of the package, as an upgrade in place would leave it: returns its root."""
    root = tmp_path / "install"
    shutil.copytree(REPO_ROOT / "fleetledger", root / "fleetledger",
                    ignore=shutil.ignore_patterns("__pycache__", "demo_repo"))
    shutil.copytree(REPO_ROOT / "fleetledger" / "demo_repo", root / "fleetledger" / "demo_repo")
    return root


def cli_from(root: Path, *args: str, env: dict[str, str] | None = None, module: str = "fleetledger.cli") -> list[str]:
    """The argv that runs ``fleetledger ARGS`` (or ``python -m MODULE ARGS``) from the package
    copy at ``root`` (``installed_copy``)."""
    boot = (f"import runpy, sys; sys.path.insert(0, {str(root)!r}); "
            f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
    return [sys.executable, "-I", "-c", boot, *args]
