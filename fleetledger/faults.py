"""Named crash points, for tests and the chaos harness (the method of DBOS's debug triggers).

Production code calls ``hit("ledger.after_commit")`` at the places where a crash matters. In a
normal run no point is armed and ``hit`` is one global lookup and a ``None`` test.

A test arms one point for a child process through the environment::

    FLEETLEDGER_FAULT="ledger.after_commit:3:kill"

meaning: the 3rd time the point is reached, act. Actions:

* ``kill``  -- SIGKILL this process (a real crash: no ``finally``, no atexit, no flush);
* ``stop``  -- SIGSTOP this process (a pause, for fencing tests; SIGCONT resumes it);
* ``eio``   -- raise ``OSError(EIO)`` at the point (a failing disk);
* ``enospc`` -- raise ``OSError(ENOSPC)`` at the point (a full disk);
* ``exit``  -- ``os._exit(86)``.

An action ending in ``+`` (``eio+``) acts at that occurrence and at every later one ("fail
forever", the SQLite testing method's second mode); without it, it acts once.

``FLEETLEDGER_FAULT_ONCE=path`` makes the action fire in one process only, across all the
processes that inherit the variable: the first to reach its occurrence creates ``path``
(``O_EXCL``) and acts (with ``+``, at every later occurrence too); the others carry on.

The name ``*`` arms every point: ``*:K:kill`` acts at the K-th point reached, whichever it
is. With ``FLEETLEDGER_FAULT_COUNTER=path`` the occurrences are counted across every process
that inherits the variables (coordinator, workers, the recovery's fresh processes): each hit
appends one byte to ``path`` (``O_APPEND``, so concurrent appends never share a position) and
its index is the file's size just after its own byte, which ``lseek`` reports for that
process's open file description alone. So ``*:K:kill`` with a counter kills at the K-th event
of the whole run, in whichever process reaches it: the chaos harness draws K uniformly over a
reference run's events (kills land in the middle of work, not during start-up) and any
scenario replays from its K.

``FLEETLEDGER_FAULT_AFTER=NAME`` counts the armed point's occurrences only after this process
reached the point ``NAME`` (a phase of the run, whatever the timing before it): with
``export.findings.json.after_rename``, ``head.after_write:1:enospc`` fails the first head write
after the export, however many periodic writes came before.

``FLEETLEDGER_FAULT_LOG=path`` appends the name of every point reached (one per line, with the
process id) so a harness can enumerate the points a workload passes through.
"""

from __future__ import annotations

import errno
import os
import signal

_ENV = "FLEETLEDGER_FAULT"
_LOG_ENV = "FLEETLEDGER_FAULT_LOG"
_ONCE_ENV = "FLEETLEDGER_FAULT_ONCE"
_COUNTER_ENV = "FLEETLEDGER_FAULT_COUNTER"
_AFTER_ENV = "FLEETLEDGER_FAULT_AFTER"


class _Armed:
    __slots__ = ("name", "remaining", "action", "forever", "won")

    def __init__(self, spec: str) -> None:
        parts = spec.rsplit(":", 2)
        if len(parts) == 3 and not parts[2].rstrip("+").isalpha():
            parts = spec.rsplit(":", 1)
        if len(parts) not in (2, 3) or not parts[1].isdigit():
            raise ValueError(f"{_ENV}={spec!r}: expected NAME:COUNT[:ACTION], e.g. ledger.after_commit:3:kill")
        self.name = parts[0]
        self.remaining = int(parts[1])
        action = parts[2] if len(parts) == 3 else "kill"
        self.forever = action.endswith("+")
        self.won = False  # this process acted first under FLEETLEDGER_FAULT_ONCE: it goes on acting (with +)
        self.action = action.rstrip("+")
        if self.action not in ("kill", "stop", "eio", "enospc", "exit"):
            raise ValueError(f"{_ENV}={spec!r}: action must be kill, stop, eio, enospc or exit (optionally with +)")


_armed: _Armed | None = None
_log_path: str | None = None
_once_path: str | None = None
_counter_path: str | None = None
_after: str | None = None  # the point that opens the count (None: open)


def rearm() -> None:
    """Arms this process from its environment's ``FLEETLEDGER_FAULT*`` variables, as importing
    the module does: for a process forked from a parent that had imported it under another
    environment (the chaos harness's fork server, a forked worker), which must act on its own
    variables, not inherit its parent's armed point and counts.

    Raises:
        ValueError: ``FLEETLEDGER_FAULT`` is malformed.
    """
    global _armed, _log_path, _once_path, _counter_path, _after
    _armed = _Armed(os.environ[_ENV]) if os.environ.get(_ENV) else None
    _after = os.environ.get(_AFTER_ENV) or None
    _log_path = os.environ.get(_LOG_ENV) or None
    _once_path = os.environ.get(_ONCE_ENV) or None
    _counter_path = os.environ.get(_COUNTER_ENV) or None


rearm()


def arm(spec: str | None) -> None:
    """Arms a point in this process (``"NAME:COUNT[:ACTION]"``), or disarms with ``None``.

    Raises:
        ValueError: the spec is malformed.
    """
    global _armed
    _armed = _Armed(spec) if spec else None


def hit(name: str) -> None:
    """Marks that execution reached the crash point ``name``; acts if it is the armed one.

    Raises:
        OSError: with errno EIO or ENOSPC, when the armed action is ``eio`` or ``enospc`` and
            this is its occurrence (or a later one, with ``+``).
    """
    if _log_path is not None:
        with open(_log_path, "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()} {name}\n")
    global _after
    if _after is not None:
        if name == _after:
            _after = None  # the count opens after this point
        return
    armed = _armed
    if armed is None or (armed.name != name and armed.name != "*"):
        return
    if _counter_path is not None:
        if _event_index(_counter_path) < armed.remaining:
            return
    else:
        armed.remaining -= 1
        if armed.remaining > 0:
            return
    if _once_path is not None and not armed.won:
        try:
            os.close(os.open(_once_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            arm(None)
            return
        armed.won = True
    action = armed.action
    if not armed.forever:
        arm(None)
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
    elif action == "exit":
        os._exit(86)
    elif action in ("eio", "enospc"):
        code = errno.EIO if action == "eio" else errno.ENOSPC
        raise OSError(code, f"injected {os.strerror(code)} at {name}")


def _event_index(path: str) -> int:
    """Appends this hit to the shared counter file and returns its 1-based index among every
    hit of every process counting into the file (see the module docstring)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, b".")
        return os.lseek(fd, 0, os.SEEK_CUR)
    finally:
        os.close(fd)
