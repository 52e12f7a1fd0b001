"""The gVisor backend: ``runsc``, a user-space kernel between the worker and the host kernel.

The worker runs in an OCI container under ``runsc run`` on the ptrace platform (no KVM needed),
with no network (``--network=none``), as uid/gid 65534 with no capabilities and
``noNewPrivileges``, and sees of the file system what ``layout`` binds, read-only, on an empty
read-only root. The worker runs under ``layout.WORKER_SHIM`` (not as the container's pid 1).
The sandbox is attached to ``runsc run`` (it dies with it), and ``runsc run`` ends when the
worker does.

Scratch is a private, size-limited tmpfs at the scratch path: gVisor checks permissions itself,
against host ownership and without a uid map, so an unprivileged uid inside could not write a
host folder owned by root, and handing that folder to "nobody" on the host would break the other
backends that share it. Workers talk to the coordinator over stdin/stdout only, so nothing in
scratch is needed outside. Host unix sockets are reachable only when egress routes are given
(``--host-uds=open``), and then only the forwarders' sockets are bound in.

Bundles (``config.json`` + an empty root with the merged-/usr symlinks) are content-addressed
under ``~/.cache/fleetledger/gvisor/bundles`` and reused; container state lives beside them.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import Launch, Sandbox, SandboxUnavailable
from .egress import EgressRoute
from .layout import Layout, plan, shimmed

INSIDE_UID = 65534
"""uid and gid inside the container ("nobody")."""

SCRATCH_SIZE_BYTES = 256 * 1024 * 1024
TMP_SIZE_BYTES = 64 * 1024 * 1024
MAX_OPEN_FILES = 4096
BUNDLE_MAX_AGE_S = 24 * 3600.0
"""Bundles unused this long are removed when the backend is checked."""

RUNSC_ENV = {"PATH": "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
"""The environment of ``runsc`` itself (its sandbox uses ``TMPDIR``, so not the worker's scratch)."""

PROBE_TIMEOUT_S = 60.0
INSTALL_HINT = ("install it with `apt-get install runsc` (Debian 12 and later), or from gVisor's own apt "
                "repository (https://gvisor.dev/docs/user_guide/install/)")


def cache_dir() -> Path:
    """Returns the folder for bundles and container state (``~/.cache/fleetledger/gvisor``)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "fleetledger" / "gvisor"


class GVisor(Sandbox):
    """Runs a worker under ``runsc`` (ptrace platform).

    Args:
        runsc: The ``runsc`` program (looked up on ``PATH``).
        root: Folder for bundles and container state (``cache_dir()`` by default).
    """

    name = "gvisor"
    signal_status_base = 128

    def __init__(self, runsc: str = "runsc", root: Path | None = None) -> None:
        self.runsc = runsc
        self.root = root or cache_dir()

    def check_available(self) -> None:
        """Checks ``runsc`` exists and can start a container here, by starting Python in one.

        Also removes the state of containers whose ``runsc run`` was killed, and old bundles.

        Raises:
            SandboxUnavailable: ``runsc`` is not installed (the message gives the install
                command), or it cannot start a sandbox here (its error is quoted).
        """
        program = shutil.which(self.runsc)
        if program is None:
            raise SandboxUnavailable(f"the gvisor sandbox needs `runsc`, which is not installed: {INSTALL_HINT}; "
                                     "or choose another backend with --sandbox")
        self._tidy()
        with tempfile.TemporaryDirectory(prefix="fleetledger-probe-") as scratch:
            launch = self.wrap([sys.executable, "-c", "pass"], read_only=[], scratch=Path(scratch))
            try:
                done = subprocess.run(launch.argv, env=launch.env, stdin=subprocess.DEVNULL, capture_output=True,
                                      timeout=PROBE_TIMEOUT_S, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise SandboxUnavailable(f"gVisor ({program}) could not start a sandbox: {exc}") from exc
        if done.returncode != 0:
            detail = done.stderr.decode(errors="replace").strip()[-800:] or f"exit status {done.returncode}"
            raise SandboxUnavailable(f"gVisor ({program}) cannot start a sandbox here: {detail}. It needs the "
                                     "ptrace platform (ptrace allowed; inside a container, seccomp unconfined) "
                                     "and, when not run as root, user namespaces; or choose another backend "
                                     "with --sandbox")

    def wrap(self, argv: list[str], *, read_only: list[Path], scratch: Path,
             egress: Sequence[EgressRoute] = ()) -> Launch:
        layout = plan(read_only, scratch, egress)
        bundle = self._bundle(layout, argv)
        cmd = [self.runsc, "--root", str(self.root / "state"), "--network=none", "--platform=ptrace"]
        if egress:
            cmd.append("--host-uds=open")
        if os.geteuid() != 0:
            cmd.append("--rootless")
        cmd += ["run", "--bundle", str(bundle), f"fleetledger-{secrets.token_hex(8)}"]
        return Launch(argv=cmd, env=RUNSC_ENV)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": _version(self.runsc), "platform": "ptrace", "uid": INSIDE_UID,
                "capabilities": [], "network": "none (egress only through host forwarders)",
                "scratch": "private tmpfs"}

    def _bundle(self, layout: Layout, argv: list[str]) -> Path:
        """Writes (once) and returns the bundle folder for this layout and command."""
        spec = _spec(layout, argv)
        text = json.dumps(spec, indent=1, sort_keys=True)
        bundle = self.root / "bundles" / hashlib.sha256(text.encode()).hexdigest()[:24]
        if bundle.is_dir():
            os.utime(bundle)
            return bundle
        bundle.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=bundle.parent))
        (staging / "rootfs").mkdir(mode=0o755)
        for path, target in layout.links:
            (staging / "rootfs" / path.relative_to("/")).symlink_to(target)
        (staging / "config.json").write_text(text, encoding="utf-8")
        try:
            staging.rename(bundle)
        except OSError:  # another process wrote the same bundle first: same content
            shutil.rmtree(staging, ignore_errors=True)
        return bundle

    def _tidy(self) -> None:
        """Deletes stopped containers' state and bundles unused for ``BUNDLE_MAX_AGE_S``."""
        state = self.root / "state"
        if state.is_dir():
            try:
                listing = subprocess.run([self.runsc, "--root", str(state), "list", "--format=json"],
                                         capture_output=True, text=True, timeout=30, check=False)
                containers = json.loads(listing.stdout or "null") or []
                stopped = [c["id"] for c in containers if c.get("status") == "stopped"]
                if stopped:
                    subprocess.run([self.runsc, "--root", str(state), "delete", "--force", *stopped],
                                   capture_output=True, timeout=30, check=False)
            except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError, TypeError, KeyError):
                pass  # tidying is best effort; the probe below says whether runsc works
        bundles = self.root / "bundles"
        if bundles.is_dir():
            for bundle in bundles.iterdir():
                if time.time() - bundle.stat().st_mtime > BUNDLE_MAX_AGE_S:
                    shutil.rmtree(bundle, ignore_errors=True)


def _spec(layout: Layout, argv: list[str]) -> dict[str, Any]:
    """Returns the OCI runtime spec of a worker container for ``layout``."""
    mounts: list[dict[str, Any]] = [
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
         "options": ["nosuid", "nodev", f"size={TMP_SIZE_BYTES}", "mode=1777"]},
    ]
    for bind in layout.binds:
        if bind.writable:
            mounts.append({"destination": str(bind.target), "type": "tmpfs", "source": "tmpfs",
                           "options": ["nosuid", "nodev", f"size={SCRATCH_SIZE_BYTES}", "mode=1777"]})
        else:
            mounts.append({"destination": str(bind.target), "type": "bind", "source": str(bind.source),
                           "options": ["rbind", "ro", "nosuid", "nodev"]})
    no_caps: list[str] = []
    return {
        "ociVersion": "1.0.2",
        "process": {
            "terminal": False, "user": {"uid": INSIDE_UID, "gid": INSIDE_UID}, "args": shimmed(argv),
            "env": [f"{k}={v}" for k, v in layout.env], "cwd": str(layout.workdir),
            "capabilities": {k: no_caps for k in ("bounding", "effective", "inheritable", "permitted", "ambient")},
            "noNewPrivileges": True,
            "rlimits": [{"type": "RLIMIT_NOFILE", "hard": MAX_OPEN_FILES, "soft": MAX_OPEN_FILES}],
        },
        "root": {"path": "rootfs", "readonly": True},
        "hostname": "sandbox",
        "mounts": mounts,
        "linux": {"namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount")]},
    }


def _version(runsc: str) -> str:
    """Returns the first line of ``runsc --version``, or "unknown" when it cannot be run."""
    try:
        done = subprocess.run([runsc, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (done.stdout.strip().splitlines() or ["unknown"])[0]
