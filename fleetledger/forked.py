"""Worker processes forked from the coordinator instead of started by exec (``--sandbox none``
only, and only when ``FLEETLEDGER_FORK_WORKERS=1`` asks for it: the chaos harness's fork server).

An exec'd worker pays for an interpreter and its imports (about 60 ms of CPU); a forked one
starts with what its parent has imported. The child is set up as ``subprocess.Popen`` would set
up the exec'd worker (its stdin and stdout the coordinator's pipes, its stderr the worker's log,
every other descriptor closed, the scratch folder as its working directory, the launch's
environment and nothing else), re-arms the fault points from that environment
(``faults.rearm``), runs ``worker.main`` and leaves by ``os._exit``: no ``finally`` or atexit
handler of the coordinator's runs in it. Crash-only holds as for an exec'd worker: it dies with
its parent (``PR_SET_PDEATHSIG``), and a SIGKILL is a SIGKILL.

Only a single-threaded coordinator forks (``can_fork``): a thread of the parent may hold a lock
(of the import system, of a logging handler) that the child would wait on forever.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

FORK_ENV = "FLEETLEDGER_FORK_WORKERS"
"""``1``: with ``--sandbox none``, workers are forked from the coordinator (``start_worker``)."""


def can_fork(sandbox_name: str) -> bool:
    """Whether a worker may be forked here: asked for (``FORK_ENV``), unconfined
    (``--sandbox none``: a confined worker is started by its sandbox's own command), on a
    platform with ``fork``, from a process that runs no other thread."""
    return (os.environ.get(FORK_ENV) == "1" and sandbox_name == "none" and hasattr(os, "fork")
            and threading.active_count() == 1)


class ForkedProcess:
    """The part of ``subprocess.Popen``'s interface the worker pool uses, for a forked child.

    Attributes:
        pid: The child's process id.
        stdin: Binary writer to the child's standard input.
        stdout: Binary reader of the child's standard output.
        returncode: None while it runs; its exit status, or minus the signal that killed it.
    """

    def __init__(self, pid: int, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """Reaps the child if it has ended; returns ``returncode``."""
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Waits for the child to end, up to ``timeout`` seconds (None: without limit).

        Raises:
            subprocess.TimeoutExpired: it still runs after ``timeout`` seconds.
        """
        import subprocess

        if self.returncode is not None:
            return self.returncode
        if timeout is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
            return self.returncode
        deadline = time.monotonic() + timeout
        pidfd = os.pidfd_open(self.pid)
        try:
            import select

            while self.poll() is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise subprocess.TimeoutExpired(f"worker pid {self.pid}", timeout)
                select.select([pidfd], [], [], remaining)  # readable when the child ends
        finally:
            os.close(pidfd)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        """Sends SIGKILL (nothing when it has already been reaped)."""
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def start_worker(args: Sequence[str], *, env: Mapping[str, str], cwd: Path, stderr_fd: int) -> ForkedProcess:
    """Forks a worker running ``worker.main(args)`` (``args``: worker id, job module, heartbeat).

    Args:
        args: ``worker.main``'s arguments.
        env: The child's whole environment (the sandbox launch's).
        cwd: Its working directory (its scratch folder).
        stderr_fd: Descriptor of its log; the child's standard error.

    Returns:
        The child, as the pool keeps an exec'd one.

    Raises:
        OSError: the pipes or the fork could not be made.
    """
    from . import worker  # imported before the fork, so that the child does not import it

    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    for stream in (sys.stdout, sys.stderr):  # nothing of the parent's buffers may reach the child's pipe
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            become_child(in_read, out_write, stderr_fd, cwd=cwd, env=env)
            code = worker.main(list(args))
        except BaseException:  # noqa: BLE001 - whatever it is, the child says it and leaves
            try:
                traceback.print_exc()
                sys.stderr.flush()
            except BaseException:  # noqa: BLE001
                pass
        finally:
            os._exit(code if isinstance(code, int) else 1)
    os.close(in_read)
    os.close(out_write)
    return ForkedProcess(pid, os.fdopen(in_write, "wb"), os.fdopen(out_read, "rb", buffering=0))


def become_child(stdin_fd: int, stdout_fd: int, stderr_fd: int, *, cwd: Path | str, env: Mapping[str, str]) -> None:
    """Sets up a freshly forked child as ``subprocess.Popen`` sets up an exec'd one: its
    standard streams on the given descriptors (and ``sys.std*`` over them), every other
    descriptor closed, ``cwd`` as its folder, ``env`` as its whole environment, SIGINT and
    SIGTERM at their defaults, and the fault points re-armed from ``env`` (``faults.rearm``).
    Used by ``start_worker`` and by the chaos harness's fork server.

    Raises:
        OSError: a descriptor or the folder cannot be used.
    """
    os.dup2(stdin_fd, 0)
    os.dup2(stdout_fd, 1)
    os.dup2(stderr_fd, 2)
    os.closerange(3, _max_fd())
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", line_buffering=True)
    from . import faults

    faults.rearm()


def _max_fd() -> int:
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (OSError, ValueError):
        return 4096

