"""The bubblewrap backend: Linux namespaces, the default on Linux.

Every namespace is unshared (user, mount, pid, network, ipc, uts, cgroup), so the worker has no
network at all, sees only its own processes, and sees of the file system only what ``layout``
binds. Inside, it runs as uid/gid 65534 with every capability dropped and ``no_new_privs`` set,
also when the coordinator runs as root (without ``--uid`` and ``--cap-drop ALL`` a root caller's
sandbox would be real root). It may not create further user namespaces (``--disable-userns``),
runs in a new session (no terminal injection), and is killed when the coordinator dies
(bubblewrap's own init reaps, and the worker runs under ``layout.WORKER_SHIM``). Its scratch
folder is a private tmpfs (``SCRATCH_SIZE_BYTES``); the host folder of that name stays empty.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import Launch, Sandbox, SandboxUnavailable, clean_env
from .egress import EgressRoute
from .layout import plan, shimmed

INSIDE_UID = 65534
"""uid and gid inside the sandbox ("nobody"): never 0, whoever starts it."""

TMP_SIZE_BYTES = 64 * 1024 * 1024
"""Size of the private, memory-backed /tmp (workers write to their scratch folder instead)."""

SCRATCH_SIZE_BYTES = 256 * 1024 * 1024
"""Size of the worker's scratch folder: a private tmpfs at the scratch path (as gVisor's and the
microVM's), so nothing the worker writes reaches the host: no file survives it, and no setuid
binary can be left on the host (bubblewrap mounts its tmpfs ``nosuid,nodev``, and the sandbox's
uid, mapped back to the caller, would otherwise own host files)."""

HOSTNAME = "sandbox"
INSTALL_HINT = "install it with `apt-get install bubblewrap` (Debian, Ubuntu) or `dnf install bubblewrap` (Fedora)"
PROBE_TIMEOUT_S = 30.0


class Bubblewrap(Sandbox):
    """Runs a worker under ``bwrap``.

    Args:
        bwrap: The ``bwrap`` program (looked up on ``PATH``).
    """

    name = "bubblewrap"
    signal_status_base = 128

    def __init__(self, bwrap: str = "bwrap") -> None:
        self.bwrap = bwrap

    def check_available(self) -> None:
        """Checks ``bwrap`` exists and can build the sandbox here, by starting Python in one.

        Raises:
            SandboxUnavailable: ``bwrap`` is not installed (the message gives the install
                command), or it cannot create the namespaces (e.g. user namespaces disabled).
        """
        program = shutil.which(self.bwrap)
        if program is None:
            raise SandboxUnavailable(f"the bubblewrap sandbox needs `bwrap`, which is not installed: {INSTALL_HINT}; "
                                     "or choose another backend with --sandbox")
        with tempfile.TemporaryDirectory(prefix="fleetledger-probe-") as scratch:
            launch = self.wrap([sys.executable, "-c", "pass"], read_only=[], scratch=Path(scratch))
            try:
                done = subprocess.run(launch.argv, env=launch.env, capture_output=True, timeout=PROBE_TIMEOUT_S,
                                      check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise SandboxUnavailable(f"bubblewrap ({program}) could not start a sandbox: {exc}") from exc
        if done.returncode != 0:
            detail = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
            raise SandboxUnavailable(
                f"bubblewrap ({program}) cannot create its namespaces here: {detail}. User namespaces must be "
                "allowed (sysctl user.max_user_namespaces > 0; on Debian kernel.unprivileged_userns_clone=1; "
                "on Ubuntu 24.04 an AppArmor profile for bwrap); inside a container, run it with "
                "--security-opt seccomp=unconfined or choose another backend with --sandbox")

    def wrap(self, argv: list[str], *, read_only: list[Path], scratch: Path,
             egress: Sequence[EgressRoute] = ()) -> Launch:
        layout = plan(read_only, scratch, egress)
        cmd = [self.bwrap, "--unshare-all", "--unshare-user", "--disable-userns",
               "--uid", str(INSIDE_UID), "--gid", str(INSIDE_UID), "--cap-drop", "ALL",
               "--die-with-parent", "--new-session", "--hostname", HOSTNAME, "--clearenv"]
        for key, value in layout.env:
            cmd += ["--setenv", key, value]
        cmd += ["--proc", "/proc", "--dev", "/dev", "--size", str(TMP_SIZE_BYTES), "--tmpfs", "/tmp"]
        for bind in layout.binds:
            if bind.writable:  # scratch: a private tmpfs, never the host folder (see the module docstring)
                cmd += ["--size", str(SCRATCH_SIZE_BYTES), "--perms", "1777", "--tmpfs", str(bind.target)]
            else:
                cmd += ["--ro-bind", str(bind.source), str(bind.target)]
        for path, target in layout.links:
            cmd += ["--symlink", target, str(path)]
        cmd += ["--chdir", str(layout.workdir), "--remount-ro", "/", "--", *shimmed(argv)]
        return Launch(argv=cmd, env=clean_env(scratch))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": _version(self.bwrap), "uid": INSIDE_UID, "capabilities": [],
                "namespaces": "all unshared", "network": "none (egress only through host forwarders)"}


def _version(bwrap: str) -> str:
    """Returns ``bwrap --version``'s answer, or "unknown" when it cannot be run."""
    try:
        done = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip() or "unknown"
