"""Egress: none by default; an allowed destination only through a forwarder on the host.

A sandbox has no network. For each ``host:port`` the policy allows, the coordinator starts an
``EgressForwarder``: it listens on a unix socket that the sandbox binds in, and connects every
client to exactly that destination and nothing else (the client never names a destination, so
it cannot pick another). Inside the sandbox, a tool finds the sockets through the
``FLEETLEDGER_EGRESS`` variable (``{"host:port": "/run/fleetledger/egress/0.sock"}``) and
calls ``connect("host:port")``.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .sockets import DRAIN_TIMEOUT_S, accept_loop, close, shut_down, wait_hangup

EGRESS_ENV = "FLEETLEDGER_EGRESS"
"""Variable naming, inside a sandbox, the socket of each allowed destination (JSON object)."""

INSIDE_DIR = Path("/run/fleetledger/egress")
"""Where a container-like sandbox binds the forwarders' sockets."""

MAX_CONNECTIONS = 32
CONNECT_TIMEOUT_S = 10.0
CHUNK_BYTES = 1 << 16


@dataclass(frozen=True, kw_only=True)
class Destination:
    """A network destination the policy allows: ``host`` and TCP ``port``."""

    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> "Destination":
        """Parses ``"host:port"`` (``"[::1]:443"`` for an IPv6 address).

        Raises:
            ValueError: the text has no port, or the port is not in 1..65535.
        """
        host, sep, port = text.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"egress destination {text!r} is not host:port with a port in 1..65535")
        return cls(host=host.removeprefix("[").removesuffix("]"), port=int(port))

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


@dataclass(frozen=True, kw_only=True)
class EgressRoute:
    """An allowed destination and the host path of the unix socket that reaches it."""

    destination: Destination
    socket_path: Path


def inside_paths(routes: Sequence[EgressRoute]) -> dict[Path, Path]:
    """Returns where each route's socket appears inside a container-like sandbox, by host path."""
    return {route.socket_path: INSIDE_DIR / f"{n}.sock" for n, route in enumerate(routes)}


def egress_env(routes: Sequence[EgressRoute], where: dict[Path, Path] | None = None) -> dict[str, str]:
    """Returns the ``FLEETLEDGER_EGRESS`` variable for ``routes`` (empty when there are none).

    Args:
        routes: The allowed destinations and their host sockets.
        where: Host socket path -> path inside the sandbox; None when the sandbox sees host paths.
    """
    if not routes:
        return {}
    table = {str(r.destination): str((where or {}).get(r.socket_path, r.socket_path)) for r in routes}
    return {EGRESS_ENV: json.dumps(table, sort_keys=True)}


def connect(destination: str, *, environ: dict[str, str] | None = None) -> socket.socket:
    """Connects, from inside a sandbox, to an allowed destination through its forwarder.

    Args:
        destination: ``"host:port"`` as written in the policy.
        environ: The environment to read (``os.environ`` by default).

    Returns:
        A connected stream socket; bytes go to and come from the destination.

    Raises:
        PermissionError: the destination is not allowed (no forwarder for it).
        OSError: the forwarder cannot be reached.
    """
    table = json.loads((os.environ if environ is None else environ).get(EGRESS_ENV, "{}"))
    path = table.get(str(Destination.parse(destination)))
    if path is None:
        raise PermissionError(f"egress to {destination} is not allowed by the policy")
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        raise
    return conn


class EgressForwarder:
    """Forwards connections on a unix socket to one fixed ``host:port``, and nowhere else.

    Start it before the sandboxes that use it and stop it after them. Each accepted connection
    opens one TCP connection to the destination and copies bytes both ways, one thread per
    direction (a side that stops reading stalls only its own direction), until both sides
    close; an error on either side closes both. When the client hangs up (its sandbox died),
    what it sent has ``DRAIN_TIMEOUT_S`` to reach the destination, then both are closed, so a
    destination that stopped reading cannot hold the slot. A destination that cannot be reached
    closes the client's connection. At most ``MAX_CONNECTIONS`` are forwarded at once; more are closed at
    once. Running out of file descriptors pauses accepting; it never ends the forwarder.

    Args:
        destination: The one destination (from the policy).
        socket_path: Where to listen (a host path; bound into sandboxes by the backends).
    """

    def __init__(self, destination: Destination, socket_path: Path) -> None:
        self.destination = destination
        self.socket_path = Path(socket_path)
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._open: set[socket.socket] = set()
        self._active = 0
        self._lock = threading.Lock()

    @property
    def route(self) -> EgressRoute:
        """The route to hand to ``Sandbox.wrap``."""
        return EgressRoute(destination=self.destination, socket_path=self.socket_path)

    @property
    def active(self) -> int:
        """How many connections are being forwarded now."""
        with self._lock:
            return self._active

    def start(self) -> None:
        """Starts listening and serving in a daemon thread.

        The socket itself is connectable by any uid, because the unprivileged uid inside
        gVisor is checked against it; on the host, put it in a folder only the coordinator's
        user can enter (the workspace). It reaches only what the host can reach anyway.

        Raises:
            OSError: the socket cannot be created at ``socket_path`` (e.g. it exists).
        """
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(self.socket_path))
            os.chmod(self.socket_path, 0o666)
            listener.listen(MAX_CONNECTIONS)
        except OSError:
            listener.close()
            raise
        self._listener = listener
        self._thread = threading.Thread(target=accept_loop, args=(listener, self._admit),
                                        name=f"egress {self.destination}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stops listening, closes every forwarded connection (waking the threads blocked on
        them), and removes the socket file."""
        with self._lock:
            self._stopped = True
            conns, self._open = list(self._open), set()
        if self._listener is not None:
            close(self._listener)
        if self._thread is not None:
            self._thread.join(timeout=5)
        for conn in conns:
            shut_down(conn)  # its thread wakes and closes it (closing here could race its poll)
        self.socket_path.unlink(missing_ok=True)

    def __enter__(self) -> "EgressForwarder":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _admit(self, client: socket.socket) -> None:
        """Starts forwarding ``client``, or closes it when ``MAX_CONNECTIONS`` are forwarded."""
        with self._lock:
            if self._stopped or self._active >= MAX_CONNECTIONS:
                client.close()
                return
            self._active += 1
            self._open.add(client)
        threading.Thread(target=self._forward, args=(client,), daemon=True).start()

    def _forward(self, client: socket.socket) -> None:
        upstream = None
        try:
            upstream = socket.create_connection((self.destination.host, self.destination.port),
                                                timeout=CONNECT_TIMEOUT_S)
            upstream.settimeout(None)
            with self._lock:
                if self._stopped:
                    return
                self._open.add(upstream)
            directions = [threading.Thread(target=_copy, args=pair, daemon=True)
                          for pair in ((client, upstream), (upstream, client))]
            for thread in directions:
                thread.start()
            wait_hangup(client)  # both directions done, or the sandbox's end is gone
            directions[0].join(DRAIN_TIMEOUT_S)  # what the client sent still reaches the destination
            shut_down(client)
            shut_down(upstream)
            for thread in directions:
                thread.join()
        except OSError:
            return
        finally:
            pair = [conn for conn in (client, upstream) if conn is not None]
            with self._lock:
                self._open.difference_update(pair)
                self._active -= 1
            for conn in pair:
                close(conn)


def _copy(source: socket.socket, target: socket.socket) -> None:
    """Copies bytes from ``source`` to ``target`` until ``source`` ends, then ends ``target``'s
    writing side; on an error of either, shuts both down (which ends the other direction too)."""
    try:
        while data := source.recv(CHUNK_BYTES):
            target.sendall(data)
        target.shutdown(socket.SHUT_WR)
    except OSError:
        shut_down(source)
        shut_down(target)
