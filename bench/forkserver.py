"""A fork server for the chaos harness: a process that has imported fleetledger once and forks
each run of a scenario (a coordinator: ``python -m MODULE ARGS``) from that state.

    server = ForkServer()                      # one per harness thread
    code = server.run(["fleetledger.jobs.synthetic", ws, ...], env=env, cwd=ROOT, stderr=path,
                      timeout_s=300)

The server is started by exec (``python bench/forkserver.py``) and reads one request per line
on its standard input (JSON: ``module``, ``args``, ``env``, ``cwd``, ``stderr``, ``timeout_s``).
For each it forks a child that takes the request's environment as its whole environment,
re-arms the fault points from it (``faults.rearm``), sets its standard streams (stdin and
stdout ``/dev/null``, stderr the request's file), closes every other descriptor, and runs the
module as ``__main__`` (``runpy``), leaving by ``os._exit`` with the module's exit status. The
server waits for it (killing it after ``timeout_s``: status -999, as the harness's exec path
says) and answers one line: ``{"exit": status}``, minus the signal's number when a signal
killed it, as ``subprocess`` says. A fault's ``kill`` is the child's own real SIGKILL: no
``finally``, no atexit handler and no flush runs, and the next run of the scenario is another
child, which sees only the files. With ``FLEETLEDGER_FORK_WORKERS=1`` in the request's
environment, the child's workers are forked from it too (``fleetledger.forked``).

The server never runs a job itself: every child starts from the state right after the imports.
"""

from __future__ import annotations

import json
import os
import runpy
import select
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

PRELOAD = ("fleetledger.cli", "fleetledger.coordinator", "fleetledger.jobs.synthetic", "fleetledger.jobs.scan",
           "fleetledger.worker", "fleetledger.forked", "fleetledger.verify")
"""What the server imports before its first fork: the coordinator, both workloads' jobs (their
worker side included) and the commands the harness runs."""

TIMED_OUT = -999


class ForkServer:
    """The harness's side: starts a server and sends it runs, one at a time (not thread-safe:
    one per harness thread)."""

    def __init__(self, preload: Sequence[str] = ()) -> None:
        """Starts a server that imports ``PRELOAD`` and ``preload`` (module names: what the
        workload's processes would import at their start, its worker's analysis for the scan).

        Raises:
            OSError: the server could not be started.
        """
        self._proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), *preload],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=str(ROOT), text=True)

    def run(self, module_args: list[str], *, env: dict[str, str], cwd: Path, stderr: Path | None,
            timeout_s: float) -> int:
        """Runs ``python -m MODULE ARGS`` (``module_args``: the module, then its arguments) in a
        fork of the server. Returns its exit status: minus the signal's number when a signal
        ended it, ``TIMED_OUT`` when it was killed after ``timeout_s`` seconds.

        Raises:
            RuntimeError: the server died (its own crash, not the child's).
        """
        request = {"module": module_args[0], "args": module_args[1:], "env": env, "cwd": str(cwd),
                   "stderr": str(stderr) if stderr else None, "timeout_s": timeout_s}
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        except (BrokenPipeError, OSError) as exc:
            raise RuntimeError(f"the fork server died ({exc})") from exc
        if not line:
            raise RuntimeError(f"the fork server died (exit {self._proc.wait()})")
        return int(json.loads(line)["exit"])

    def close(self) -> None:
        """Ends the server (idempotent)."""
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None and not stream.closed:
                stream.close()


def _child(request: dict[str, Any]) -> None:
    """The forked child: sets itself up as the exec'd command would be, runs the module, and
    leaves by ``os._exit``. Never returns."""
    from fleetledger.forked import become_child

    code = 1
    try:
        null = os.open(os.devnull, os.O_RDWR)
        err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if request["stderr"] else null
        become_child(null, null, err, cwd=request["cwd"], env=request["env"])
        sys.argv = [request["module"], *request["args"]]
        try:
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
    except BaseException:  # noqa: BLE001 - a traceback, as the interpreter would print it
        try:
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001
                pass
        os._exit(code)


def _wait(pid: int, timeout_s: float) -> int:
    """Waits for the child ``pid`` (its pidfd is readable when it ends); kills it after
    ``timeout_s`` seconds. Returns its status as ``subprocess`` gives it, or ``TIMED_OUT``."""
    pidfd = os.pidfd_open(pid)
    try:
        readable, _, _ = select.select([pidfd], [], [], timeout_s)
        timed_out = not readable
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(pidfd)
    return TIMED_OUT if timed_out else os.waitstatus_to_exitcode(status)


def serve(preload: Sequence[str]) -> None:
    """The server's loop: one run per request line, until its input ends. ``preload``: modules
    imported besides ``PRELOAD``."""
    sys.path.insert(0, str(ROOT))
    import gc
    import importlib

    for name in (*PRELOAD, *preload):
        importlib.import_module(name)
    gc.freeze()  # what was imported stays out of the children's collections (fewer pages copied)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)
        started = time.monotonic()
        status = _wait(pid, float(request["timeout_s"]))
        sys.stdout.write(json.dumps({"exit": status, "seconds": round(time.monotonic() - started, 3)}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve(sys.argv[1:])
