"""The worker processes of one coordinator: start, talk to, notice the death of.

Each logical worker (``w01``...) is one OS process started through the sandbox seam, speaking
JSON lines (see ``worker``). The pool reads every worker's output with one ``selectors`` loop,
so the coordinator wakes as soon as any worker says something or dies.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import forked, fsutil
from .sandbox import Sandbox
from .sandbox.egress import EgressRoute

MAX_LINE_BYTES = 64 * 1024 * 1024

WORKER_BOOT = ("import os, sys; sys.path[:0] = [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]; "
               "from fleetledger.worker import main_and_exit; main_and_exit()")
"""What a worker's interpreter runs: ``python -I -c WORKER_BOOT ID MODULE HEARTBEAT``.

Isolated mode (``-I``) keeps the current folder, the script's folder, ``PYTHON*`` variables and
the user's site-packages off ``sys.path``, so a module the repository ships (``json.py``,
``ast.py``, ``bandit.py``) or one planted in the scratch folder is never imported in place of
the library's. Only the package's own folder, which the sandbox names in ``PYTHONPATH``, is put
in front, explicitly."""


def worker_argv(worker_id: str, job_module: str, heartbeat_s: float) -> list[str]:
    """Returns the command line of a worker process (host paths; a sandbox maps them)."""
    return [sys.executable, "-I", "-c", WORKER_BOOT, worker_id, job_module, str(heartbeat_s)]


@dataclass(eq=False)
class WorkerProc:
    """One worker process and what the coordinator knows of it.

    Attributes:
        id: Logical worker id.
        proc: The OS process.
        ready: True when the worker said it is idle and nothing was assigned since.
        task: ``(task id, epoch)`` currently assigned, or None.
        lost: True when its lease was taken back while the process lives (paused or stuck);
            it gets no work until it says ``ready`` again.
        started: True once the process said ``hello`` (it imported and runs).
        assigned: Every ``(task id, epoch)`` ever assigned to it, the only ones it may speak for,
            with the names of the steps that task may run (None: any).
        asked: The model-call keys it asked the coordinator for, per ``(task id, epoch)``.
        offered: The ``reuse`` message of its current task's assignment (salt and offered
            results), per ``(task id, epoch)`` (``reuse.record_problem``).
        rejected: True once it sent a message no worker may send; it is killed, and nothing
            more it sent is appended.
        sent: Per context key, the digest of the large value it holds (sent once per process).
        scratch: Its scratch folder on the host, made empty at its start and removed at its end.
        forked: True when it was forked from the coordinator (``forked.can_fork``), False when
            started by exec, as always outside the chaos harness.
    """

    id: str
    proc: "subprocess.Popen[bytes] | forked.ForkedProcess"
    scratch: Path | None = None
    forked: bool = False
    ready: bool = False
    task: tuple[str, int] | None = None
    lost: bool = False
    started: bool = False
    assigned: dict[tuple[str, int], frozenset[str] | None] = field(default_factory=dict)
    asked: dict[tuple[str, int], set[str]] = field(default_factory=dict)
    offered: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    sent: dict[str, str] = field(default_factory=dict)

    def compact(self, context: dict[str, Any], digests: dict[str, str]) -> dict[str, Any]:
        """The context as it goes to this worker: a large value (``digests``: key -> digest of
        its value) the worker already holds is sent as ``{"$same": digest}``, and a new one as
        ``{"$value": value, "$digest": digest}`` (the worker keeps it; ``worker.resolve``)."""
        out: dict[str, Any] = {}
        for key, value in context.items():
            digest = digests.get(key)
            if digest is None:
                out[key] = value
            elif self.sent.get(key) == digest:
                out[key] = {"$same": digest}
            else:
                out[key] = {"$value": value, "$digest": digest}
                self.sent[key] = digest
        return out
    rejected: bool = False
    buffer: bytearray = field(default_factory=bytearray)

    @property
    def pid(self) -> int:
        """The OS process id."""
        return self.proc.pid


class WorkerPool:
    """Starts and watches the worker processes.

    Args:
        sandbox: How to start a worker confined.
        job_module: Module the workers run tasks from.
        read_only: Folders workers may read.
        scratch: Folder of the workers' scratch folders (``<scratch>/<worker id>``, each made
            empty when its worker starts and removed when it ends; whatever an earlier run or a
            crashed coordinator left there is removed first).
        logs: Folder where each worker's stderr goes (``<id>.log``).
        heartbeat_s: Seconds between a busy worker's heartbeats.
        egress: Allowed destinations, each through its forwarder (none by default).
    """

    def __init__(self, *, sandbox: Sandbox, job_module: str, read_only: list[Path], scratch: Path,
                 logs: Path, heartbeat_s: float, egress: Sequence[EgressRoute] = ()) -> None:
        self.sandbox = sandbox
        self.egress = list(egress)
        self.job_module = job_module
        self.read_only = read_only
        self.scratch = scratch
        self.logs = logs
        self.heartbeat_s = heartbeat_s
        self.workers: dict[str, WorkerProc] = {}
        self._selector = selectors.DefaultSelector()
        fsutil.private_dir(self.scratch)
        for left in os.listdir(self.scratch):
            _remove(self.scratch / left)

    def start(self, worker_id: str) -> WorkerProc:
        """Starts (or restarts) the process of logical worker ``worker_id``.

        Raises:
            OSError: the process could not be started.
        """
        scratch = self.scratch / worker_id
        _remove(scratch)
        fsutil.private_dir(scratch)
        package_root = str(Path(__file__).resolve().parent.parent)
        argv = worker_argv(worker_id, self.job_module, self.heartbeat_s)
        launch = self.sandbox.wrap(argv, read_only=self.read_only, scratch=scratch, egress=self.egress)
        env = dict(launch.env)
        env["PYTHONPATH"] = package_root
        log = fsutil.open_nofollow(self.logs / f"{worker_id}.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fork = forked.can_fork(self.sandbox.name)  # the chaos harness: no interpreter to start
            if fork:
                proc: subprocess.Popen[bytes] | forked.ForkedProcess = forked.start_worker(
                    argv[-3:], env=env, cwd=scratch, stderr_fd=log)
            else:
                proc = subprocess.Popen(launch.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=log, env=env, close_fds=True, cwd=scratch)
        finally:
            os.close(log)
        os.set_blocking(proc.stdout.fileno(), False)  # type: ignore[union-attr]
        worker = WorkerProc(id=worker_id, proc=proc, scratch=scratch, forked=fork)
        self.workers[worker_id] = worker
        self._selector.register(proc.stdout, selectors.EVENT_READ, worker)  # type: ignore[arg-type]
        return worker

    def send(self, worker: WorkerProc, message: dict[str, Any]) -> bool:
        """Sends one command; returns False when the worker's input is closed (it died)."""
        try:
            worker.proc.stdin.write((json.dumps(message, separators=(",", ":")) + "\n").encode())  # type: ignore[union-attr]
            worker.proc.stdin.flush()  # type: ignore[union-attr]
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def poll(self, timeout_s: float) -> tuple[list[tuple[WorkerProc, dict[str, Any]]], list[WorkerProc]]:
        """Waits up to ``timeout_s`` for output, then returns ``(messages, dead workers)``.

        Messages come in arrival order per worker. A dead worker is unregistered and reaped;
        its complete lines sent before death are still returned.
        """
        messages: list[tuple[WorkerProc, dict[str, Any]]] = []
        dead: list[WorkerProc] = []
        for key, _ in self._selector.select(timeout_s):
            worker: WorkerProc = key.data
            eof = False
            while True:
                try:
                    chunk = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    break
                if not chunk:
                    eof = True
                    break
                worker.buffer += chunk
            messages.extend((worker, message) for message in take_messages(worker.buffer))
            if eof or len(worker.buffer) > MAX_LINE_BYTES:
                self._forget(worker)
                dead.append(worker)
        return messages, dead

    def _forget(self, worker: WorkerProc) -> None:
        try:
            self._selector.unregister(worker.proc.stdout)  # type: ignore[arg-type]
        except (KeyError, ValueError):
            pass
        for stream in (worker.proc.stdin, worker.proc.stdout):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass
        try:
            worker.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            worker.proc.kill()
            worker.proc.wait()
        if self.workers.get(worker.id) is worker:
            del self.workers[worker.id]
        if worker.scratch is not None:
            _remove(worker.scratch)

    def log_tail(self, worker_id: str, lines: int = 5) -> str:
        """Returns the last ``lines`` lines of a worker's stderr log, joined by " | "."""
        try:
            text = (self.logs / f"{worker_id}.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])

    def stop_all(self, grace_s: float = 5.0) -> None:
        """Asks every worker to stop, waits up to ``grace_s`` seconds, then kills the rest."""
        for worker in list(self.workers.values()):
            self.send(worker, {"op": "stop"})
        deadline = time.monotonic() + grace_s
        for worker in list(self.workers.values()):
            remaining = max(0.0, deadline - time.monotonic())
            try:
                worker.proc.wait(timeout=remaining)
            except subprocess.TimeoutExpired:
                worker.proc.kill()
            self._forget(worker)
        self._selector.close()


def take_messages(buffer: bytearray) -> list[dict[str, Any]]:
    """Takes every complete line out of a worker's output ``buffer`` (the rest of a line stays
    for the next read) and returns the JSON objects among them, in order.

    A worker reads hostile files and may have been taken over, so a line that is not a JSON
    object (not UTF-8, not JSON, a list or a number, nested past the decoder's depth) is
    dropped, never allowed to stop the coordinator. The coordinator reads thousands of lines a
    second, so the lines of one read are decoded in one call, as the elements of one JSON
    array; only when that fails (a line that is not JSON) are they decoded one by one. A
    malformed line can then be read as part of another element (``[1`` and ``2]``), but only
    as a message the same worker could have sent as a line of its own, and every message is
    checked as any other (``run.workers._worker_overreach``; what is stored, for its depth
    too: ``MAX_DEPTH``).
    """
    end = buffer.rfind(b"\n")
    if end < 0:
        return []
    chunk = bytes(buffer[:end])
    del buffer[: end + 1]
    try:
        values = _decode("[" + chunk.replace(b"\n", b",").decode("utf-8") + "]")
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, nested past the decoder's depth
        values = []
        for line in chunk.split(b"\n"):
            try:
                values.append(_decode(line.decode("utf-8")))
            except (ValueError, RecursionError):
                continue
    return [value for value in values if isinstance(value, dict)]


_decode = json.JSONDecoder().decode


MAX_DEPTH = 100
"""The deepest nesting of arrays and objects a worker's payload may have. A record's payload is
encoded, hashed and decoded again by every reader of the ledger, at whatever depth of their own
calls; a payload nested near the interpreter's recursion limit would be stored and then fail
there (a ledger that cannot be replayed), so the coordinator refuses it
(``run.workers._payload_text``)."""


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Says whether a decoded JSON value nests arrays and objects more than ``limit`` deep
    (level by level, without recursion: a value that is too deep must not exhaust the stack
    that checks it)."""
    level, depth = [value], 1
    while level:
        if depth > limit:
            return True
        deeper = []
        for item in level:
            for child in item.values() if type(item) is dict else item if type(item) is list else ():
                if type(child) is dict or type(child) is list:
                    deeper.append(child)
        level, depth = deeper, depth + 1
    return False


def _remove(path: Path) -> None:
    """Removes a scratch folder (or a file or link in its place) and everything in it, never
    following a link; a missing one is fine."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
