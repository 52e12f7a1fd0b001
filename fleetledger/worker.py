"""A worker process: runs the tasks the coordinator assigns, one at a time.

Started by the coordinator as ``python -m fleetledger.worker WORKER_ID JOB_MODULE`` (inside the
sandbox), it speaks JSON lines: commands on stdin, messages on a private copy of stdout (the real
fd 1 is pointed at stderr so a library that prints cannot corrupt the protocol).

Messages to the coordinator: ``hello``, ``ready``, ``record``, ``heartbeat``, ``model`` (a
model call for the coordinator to make on the host), ``finished``, ``failed``, ``released``.
Commands: ``assign``, ``fenced``, ``stop``, and the replies ``model.answer`` / ``model.error``.

The worker holds no state that matters: everything it learns is sent as records, and it dies
with its coordinator (``PR_SET_PDEATHSIG``, and end of input on stdin).
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import json
import os
import queue
import signal
import sys
import threading
import traceback
from typing import Any, NoReturn

from . import errors
from .steps import Fenced, OutOfCalls, OutOfSpace, TaskContext

PR_SET_PDEATHSIG = 1


class _Channel:
    def __init__(self, fd: int) -> None:
        self._out = os.fdopen(fd, "w", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":")) + "\n"
        with self._lock:
            self._out.write(line)
            self._out.flush()


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:
        os._exit(0)


def _reader(commands: "queue.Queue[dict[str, Any] | None]", fenced: dict[str, threading.Event],
            replies: "queue.Queue[dict[str, Any]]") -> None:
    """Routes the coordinator's lines: fences set events, model replies go to the step waiting
    for them (a fence or a stop also ends that wait), everything else is a command."""
    for line in sys.stdin:
        message = json.loads(line)
        op = message.get("op")
        if op in ("model.answer", "model.error"):
            replies.put(message)
            continue
        if op == "fenced":
            event = fenced.get(message["task"])
            if event is not None:
                event.set()
            replies.put(message)
            continue
        if op == "stop":
            replies.put(message)
        commands.put(message)
    replies.put({"op": "stop"})
    commands.put(None)


def _heartbeat(channel: _Channel, current: dict[str, Any], interval_s: float, stop: threading.Event) -> None:
    while not stop.wait(interval_s):
        held = current.get("task")
        if held is not None:
            try:
                channel.send({"op": "heartbeat", "task": held[0], "epoch": held[1]})
            except OSError:
                return


def _discard(replies: "queue.Queue[dict[str, Any]]") -> None:
    """Drops replies left from an earlier task (late answers, old fences) before a new one; a
    stop is kept, so that a wait that starts after it still ends."""
    stop = False
    while True:
        try:
            stop = replies.get_nowait().get("op") == "stop" or stop
        except queue.Empty:
            break
    if stop:
        replies.put({"op": "stop"})


def main(argv: list[str] | None = None) -> int:
    """Runs the worker loop until ``stop`` or end of input. Returns the exit status."""
    args = sys.argv[1:] if argv is None else argv
    worker_id, job_module = args[0], args[1]
    heartbeat_s = float(args[2]) if len(args) > 2 else 5.0
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    channel = _Channel(os.dup(1))
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    job = importlib.import_module(job_module)
    # A worker builds and drops many syntax trees: the default thresholds run a collection every
    # 700 allocations, which costs the scan about a tenth of its time; collect less often, and
    # leave what was imported out of every collection.
    gc.freeze()
    gc.set_threshold(100_000, 50, 50)
    commands: queue.Queue[dict[str, Any] | None] = queue.Queue()
    replies: queue.Queue[dict[str, Any]] = queue.Queue()
    fenced: dict[str, threading.Event] = {}
    current: dict[str, Any] = {"task": None}
    held: dict[str, tuple[str, Any]] = {}
    stop = threading.Event()
    threading.Thread(target=_reader, args=(commands, fenced, replies), daemon=True).start()
    if heartbeat_s > 0:
        threading.Thread(target=_heartbeat, args=(channel, current, heartbeat_s, stop), daemon=True).start()
    channel.send({"op": "hello", "worker": worker_id, "pid": os.getpid()})
    channel.send({"op": "ready"})
    try:
        while True:
            message = commands.get()
            if message is None or message.get("op") == "stop":
                return 0
            if message.get("op") != "assign":
                continue
            task, epoch = message["task"], message["epoch"]
            message["context"] = resolve(message.get("context", {}), held)
            event = fenced.setdefault(task, threading.Event())
            event.clear()
            _discard(replies)
            current["task"] = (task, epoch)
            ctx = TaskContext(channel, worker_id, message, event, replies)
            try:
                summary = job.run_task(ctx)
                ctx.check_fenced()
                if ctx.failed_steps:
                    channel.send({"op": "failed", "task": task, "epoch": epoch, "retry": True,
                                  "error": f"{len(ctx.failed_steps)} step(s) failed: {', '.join(ctx.failed_steps[:5])}"})
                else:
                    result = dict(summary or {})
                    if ctx.given_up:
                        result["given_up"] = ctx.given_up
                    if ctx.denied_steps:
                        result["denied"] = ctx.denied_steps
                    channel.send({"op": "finished", "task": task, "epoch": epoch, "result": result})
            except Fenced:
                pass
            except OutOfCalls as exc:
                channel.send({"op": "released", "task": task, "epoch": epoch, "reason": "quota", "why": exc.why})
            except OutOfSpace as exc:
                channel.send({"op": "released", "task": task, "epoch": epoch, "reason": "disk", "why": exc.why})
            except errors.FleetledgerError as exc:
                channel.send({"op": "failed", "task": task, "epoch": epoch, "retry": False,
                              "error": f"{type(exc).__name__}: {exc}"})
            except Exception as exc:  # noqa: BLE001 - reported to the coordinator, recorded there
                traceback.print_exc()
                channel.send({"op": "failed", "task": task, "epoch": epoch, "retry": True,
                              "error": f"{type(exc).__name__}: {exc}"})
            current["task"] = None
            fenced.pop(task, None)
            channel.send({"op": "ready"})
    except (BrokenPipeError, OSError):
        return 0
    finally:
        stop.set()


def resolve(context: dict[str, Any], held: dict[str, tuple[str, Any]]) -> dict[str, Any]:
    """The context with large values restored: ``{"$value", "$digest"}`` is kept in ``held`` and
    ``{"$same": digest}`` is replaced by the value kept (``pool.WorkerProc.compact``); the same
    object is handed to every task, so tasks may cache what they derive from it.

    Raises:
        KeyError: a ``$same`` names a value this process never received (a protocol error).
    """
    out = {}
    for key, value in context.items():
        if isinstance(value, dict) and "$digest" in value and "$value" in value:
            held[key] = (value["$digest"], value["$value"])
            out[key] = value["$value"]
        elif isinstance(value, dict) and set(value) == {"$same"}:
            digest, kept = held[key]
            if digest != value["$same"]:
                raise KeyError(f"context {key!r}: the coordinator named a value this worker does not hold")
            out[key] = kept
        else:
            out[key] = value
    return out


def main_and_exit() -> NoReturn:
    """Runs ``main`` and ends the process by ``os._exit`` once its output is flushed: a worker
    that analysed thousands of files holds millions of objects (syntax trees, summaries), and
    the interpreter's orderly shutdown frees them one by one (about 4 s of a two-worker scan
    of Django spent after the last step, with nothing left to do). Nothing is lost: every
    result has been sent and acknowledged through the ledger, and crash-only holds as for a
    SIGKILL. An exception out of ``main`` is printed to the worker's log (exit status 1)."""
    try:
        code = main()
    except SystemExit as exit_:
        code = 0 if exit_.code is None else exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # noqa: BLE001 - the process ends here either way
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    main_and_exit()

