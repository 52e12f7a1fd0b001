"""The tool-execution seam: how a worker process that reads the untrusted repository is started.

A ``Sandbox`` turns the worker's command line into one that runs confined, and gives it a
clean environment (the host's environment, credentials included, never reaches a worker).
The backend in use is recorded in the ledger at every start (``describe()``).

Backends: ``bubblewrap`` (namespaces; the default on Linux), ``gvisor`` (runsc, a user-space
kernel), ``microvm`` (QEMU's microvm machine, one VM per worker process) and ``none`` (no
confinement; only when asked for). A backend that cannot run here says so and how to install it
(``check_available``); nothing ever downgrades silently to another backend.
"""

from __future__ import annotations

import abc
import importlib
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import errors
from .egress import EgressRoute, egress_env

PASSTHROUGH_ENV = ("FLEETLEDGER_FAULT", "FLEETLEDGER_FAULT_LOG", "FLEETLEDGER_FAULT_ONCE", "FLEETLEDGER_FAULT_COUNTER")
"""Test-only variables that reach workers; everything else of the host environment does not."""


@dataclass(frozen=True, kw_only=True)
class Launch:
    """A command ready to start: ``argv`` and the complete environment ``env``."""

    argv: list[str]
    env: dict[str, str]


class Sandbox(abc.ABC):
    """A way to run a worker process confined.

    Attributes:
        name: Backend name as given to ``--sandbox`` and recorded in the ledger.
        signal_status_base: When the launcher reports a worker killed by signal N as exit
            status base + N (bubblewrap and runsc give 128 + N), that base; None when the
            launched process itself dies by the signal.
    """

    name: str
    signal_status_base: int | None = None

    @abc.abstractmethod
    def check_available(self) -> None:
        """Checks the backend can run here.

        Raises:
            SandboxUnavailable: it cannot; the message says how to install it.
        """

    @abc.abstractmethod
    def wrap(self, argv: list[str], *, read_only: list[Path], scratch: Path,
             egress: Sequence[EgressRoute] = ()) -> Launch:
        """Returns the confined launch of ``argv``.

        Args:
            argv: The worker command (``python -m fleetledger.worker ...``).
            read_only: Folders the worker may read (the scan target).
            scratch: A folder the worker may write (its temporary files).
            egress: Allowed destinations, each reached only through its forwarder's socket
                (see ``egress``); empty means no network at all.

        Raises:
            SandboxUnavailable: the backend cannot run here (its guest does not boot).
        """

    def close(self) -> None:
        """Releases what ``wrap`` started on the host (the microVM's egress channel); call it
        after the workers stopped and before the egress forwarders stop. Idempotent."""
        return None

    def describe(self) -> dict[str, Any]:
        """Returns what the ledger records of this backend (name, version, isolation)."""
        return {"name": self.name}

    def describe_exit(self, returncode: int | None) -> str:
        """Says how a worker ended from its launcher's status: ``"exit status 3"`` or
        ``"killed by SIGKILL"`` (also when the signal struck inside the sandbox)."""
        if returncode is None:
            return "still running"
        base = self.signal_status_base
        if returncode < 0:
            return f"killed by {_signal_name(-returncode)}"
        if base is not None and base < returncode <= base + signal.NSIG:
            return f"killed by {_signal_name(returncode - base)}"
        return f"exit status {returncode}"


class SandboxUnavailable(errors.FleetledgerError):
    """The configured sandbox cannot run on this machine; install it or choose another with --sandbox."""

    exit_code = 2


def _signal_name(number: int) -> str:
    """Returns ``"SIGKILL"`` for 9, or ``"signal 99"`` for a number with no name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def clean_env(scratch: Path) -> dict[str, str]:
    """Returns the minimal environment a worker gets: no credentials, no host variables."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    for name in PASSTHROUGH_ENV:
        if name in os.environ:
            env[name] = os.environ[name]
    return env


PR_SET_DUMPABLE = 4
"""``prctl`` option (linux/prctl.h)."""


def shield_from_same_user() -> bool:
    """Makes this process non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``): its ``/proc/PID``
    files (``environ``, ``mem``, ``fd``...) then belong to root, so another process of the same
    user (an unconfined worker) cannot read the API keys in its environment or its memory, nor
    ptrace it. Root, or a holder of CAP_SYS_PTRACE, still can.

    Returns:
        True when the call succeeded (Linux), False elsewhere.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class NoSandbox(Sandbox):
    """No confinement: the worker runs as a plain process of this user.

    Only when asked for (``--sandbox none``); every start records it and warns. What it keeps:
    isolated mode and an empty private scratch folder as the current folder (``pool``), a clean
    environment, and a coordinator made non-dumpable (``shield_from_same_user``). What it does
    not protect: everything this user can read or write (the workspace key and the ledger
    included), the network and loopback services, and other processes of this user.
    """

    name = "none"

    def check_available(self) -> None:
        return None

    def wrap(self, argv: list[str], *, read_only: list[Path], scratch: Path,
             egress: Sequence[EgressRoute] = ()) -> Launch:
        shield_from_same_user()
        return Launch(argv=list(argv), env=clean_env(scratch) | egress_env(egress))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "isolation": "none: the worker runs as a plain host process of this user, "
                "in isolated mode in a private scratch folder, with a clean environment"}


BACKENDS = {
    "bubblewrap": "fleetledger.sandbox.bubblewrap:Bubblewrap",
    "gvisor": "fleetledger.sandbox.gvisor:GVisor",
    "microvm": "fleetledger.sandbox.microvm:MicroVM",
    "none": "fleetledger.sandbox:NoSandbox",
}
"""Backend name (``--sandbox``) -> ``module:class``, imported when chosen."""


def get_sandbox(name: str) -> Sandbox:
    """Returns the sandbox backend called ``name``.

    Raises:
        UsageError: no backend has that name.
    """
    if name not in BACKENDS:
        raise errors.UsageError(f"unknown sandbox {name!r}; available: {', '.join(sorted(BACKENDS))}")
    module, _, cls = BACKENDS[name].partition(":")
    backend: Sandbox = getattr(importlib.import_module(module), cls)()
    return backend
