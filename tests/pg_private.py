"""A PostgreSQL server of one test's own, for a test that restarts its server.

The shared test server (``FLEETLEDGER_TEST_POSTGRES``) is used by tests running at the same time
on other pytest-xdist workers; restarting it would drop their connections. ``private_server``
makes a throwaway cluster (``initdb``) in a new folder, starts it on a free loopback port and
stops it afterwards; ``PrivateServer.restart`` restarts it in fast mode (every connection is
dropped, as a host sees when its database restarts). Needs root (the cluster runs as the
``postgres`` user) and PostgreSQL's binaries, which ``.ci/start-postgres`` installs.
"""

from __future__ import annotations

import glob
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PrivateServer:
    """A running private cluster: ``url`` (of database ``postgres``, user ``postgres``, trust
    authentication on loopback), its data ``folder``, the ``bin`` folder of its binaries and its
    ``log`` file."""

    url: str
    folder: Path
    bin: Path
    log: Path

    def _pg_ctl(self, *args: str) -> None:
        done = subprocess.run(["runuser", "-u", "postgres", "--", str(self.bin / "pg_ctl"), "-D", str(self.folder),
                               *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise AssertionError(f"pg_ctl {' '.join(args)} failed: {done.stdout}{done.stderr}")

    def restart(self) -> None:
        """Restarts the server in fast mode and returns once it accepts connections again.

        Raises:
            AssertionError: ``pg_ctl`` failed (its output says why).
        """
        # The log file keeps the server's output off pg_ctl's, whose pipe it would hold open.
        self._pg_ctl("-l", str(self.log), "-m", "fast", "-w", "restart")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def private_server() -> Iterator[PrivateServer]:
    """Makes, starts, yields and finally stops and removes a private PostgreSQL cluster.

    Raises:
        AssertionError: PostgreSQL is not installed (run ``bash .ci/start-postgres``) or the
            cluster could not be made or started.
    """
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name))
    if not bins:
        raise AssertionError("PostgreSQL is not installed: run `bash .ci/start-postgres`")
    root = Path(tempfile.mkdtemp(prefix="fl-pg-"))
    folder = root / "data"
    try:
        folder.mkdir()
        shutil.chown(root, "postgres", "postgres")
        shutil.chown(folder, "postgres", "postgres")
        done = subprocess.run(["runuser", "-u", "postgres", "--", f"{bins[-1]}/initdb", "-D", str(folder),
                               "--auth=trust", "--no-sync"], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise AssertionError(f"initdb failed: {done.stdout}{done.stderr}")
        port = _free_port()
        server = PrivateServer(url=f"postgresql://postgres@127.0.0.1:{port}/postgres", folder=folder, bin=Path(bins[-1]),
                               log=root / "server.log")
        server._pg_ctl("-l", str(server.log), "-w", "-o",
                       f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off", "start")
        try:
            yield server
        finally:
            server._pg_ctl("-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)
