"""The microVM's egress channel, without a VM: the guest end (``GuestEnd``, the code the
guest's pid 1 runs) reads and writes a real unix socket in place of the virtio-serial port, and
the host end is the ``ChannelServer`` that QEMU's socket chardev connects to. Every byte goes
through a real ``EgressForwarder`` to a real TCP server.
"""

from __future__ import annotations

import fcntl
import json
import socket
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fleetledger.sandbox import egress
from fleetledger.sandbox.egress import Destination, EgressForwarder, connect
from fleetledger.sandbox.microvm import channel
from fleetledger.sandbox.microvm.channel import (CLOSE, DATA, EOF, HEADER, MAX_OPEN, MAX_PAYLOAD, OPEN, ROUTE,
                                                 ChannelServer, GuestEnd)

TIMEOUT_S = 30.0


@pytest.fixture
def echo_port() -> Iterator[int]:
    """A TCP server that echoes each connection until its client half-closes, then closes."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def echo(conn: socket.socket) -> None:
        with conn:
            try:
                while data := conn.recv(1 << 16):
                    conn.sendall(data)
            except OSError:  # the client went away (tests kill VMs)
                return

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            conn.settimeout(None)
            threading.Thread(target=echo, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


@dataclass
class Wiring:
    """A guest end and a host end joined by a unix socket, with the guest's egress table."""

    server: ChannelServer
    port: socket.socket
    reader: threading.Thread
    environ: dict[str, str]


@pytest.fixture
def wiring(tmp_path: Path, echo_port: int) -> Iterator[Wiring]:
    """Route 0 reaches the echo server; route 1's forwarder socket does not exist."""
    allowed = Destination(host="127.0.0.1", port=echo_port)
    with EgressForwarder(allowed, tmp_path / "0.sock") as forwarder:
        server = ChannelServer([str(forwarder.socket_path), str(tmp_path / "missing.sock")], str(tmp_path / "ch.sock"))
        server.start()
        port = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        port.connect(server.socket_path)
        inside = [str(tmp_path / "guest" / "0.sock"), str(tmp_path / "guest" / "1.sock")]
        reader = GuestEnd(port.fileno(), inside).start()
        environ = {"FLEETLEDGER_EGRESS": json.dumps({str(allowed): inside[0], "127.0.0.1:2": inside[1]})}
        try:
            yield Wiring(server=server, port=port, reader=reader, environ=environ)
        finally:
            server.stop()
            reader.join(TIMEOUT_S)
            port.close()


def round_trip(conn: socket.socket, data: bytes) -> bytes:
    """Sends ``data``, half-closes, and returns all that comes back until the other side closes."""
    conn.settimeout(TIMEOUT_S)
    sender = threading.Thread(target=lambda: (conn.sendall(data), conn.shutdown(socket.SHUT_WR)), daemon=True)
    sender.start()
    parts = []
    while chunk := conn.recv(1 << 16):
        parts.append(chunk)
    sender.join(TIMEOUT_S)
    return b"".join(parts)


def test_connections_reach_the_allowed_destination_intact_and_concurrently(wiring: Wiring, echo_port: int) -> None:
    payloads = [bytes([n]) * (n * 100_003 % 700_001 + 1) for n in range(12)]
    results: dict[int, bytes] = {}

    def one(n: int) -> None:
        with connect(f"127.0.0.1:{echo_port}", environ=wiring.environ) as conn:
            results[n] = round_trip(conn, payloads[n])

    threads = [threading.Thread(target=one, args=(n,)) for n in range(len(payloads))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT_S)
    assert {n: len(r) for n, r in results.items()} == {n: len(p) for n, p in enumerate(payloads)}
    assert all(results[n] == payloads[n] for n in range(len(payloads)))
    assert wiring.server.protocol_errors == []


def test_a_route_whose_forwarder_is_gone_is_closed_and_the_channel_goes_on(wiring: Wiring, echo_port: int) -> None:
    with connect("127.0.0.1:2", environ=wiring.environ) as refused:
        refused.settimeout(TIMEOUT_S)
        assert refused.recv(100) == b""
    with connect(f"127.0.0.1:{echo_port}", environ=wiring.environ) as conn:
        assert round_trip(conn, b"still here") == b"still here"


def test_stopping_the_server_ends_open_connections_and_the_guest_reader(wiring: Wiring, echo_port: int) -> None:
    with connect(f"127.0.0.1:{echo_port}", environ=wiring.environ) as conn:
        conn.settimeout(TIMEOUT_S)
        conn.sendall(b"ping")
        assert conn.recv(100) == b"ping"
        wiring.server.stop()
        assert conn.recv(100) == b""
    wiring.reader.join(TIMEOUT_S)
    assert not wiring.reader.is_alive()


def frame(conn_id: int, kind: int, payload: bytes = b"") -> bytes:
    return HEADER.pack(conn_id, kind, len(payload)) + payload


def read_frame(conn: socket.socket) -> tuple[int, int, bytes]:
    header = conn.recv(HEADER.size, socket.MSG_WAITALL)
    conn_id, kind, length = HEADER.unpack(header)
    return conn_id, kind, conn.recv(length, socket.MSG_WAITALL) if length else b""


@pytest.fixture
def sink_port() -> Iterator[int]:
    """A TCP server that accepts connections and never reads them (a destination that hangs)."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    server.shutdown(socket.SHUT_RDWR)
    server.close()
    thread.join()
    for conn in held:
        conn.close()


def raw_session(server: ChannelServer) -> socket.socket:
    """A connection to the channel server as a VM's QEMU makes it, for a test playing a hostile guest."""
    raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    raw.connect(server.socket_path)
    raw.settimeout(TIMEOUT_S)
    return raw


@pytest.fixture
def host_end(tmp_path: Path, echo_port: int) -> Iterator[tuple[ChannelServer, socket.socket]]:
    """A channel server with one route (the echo server), and a raw connection to it as a
    hostile guest would have."""
    with EgressForwarder(Destination(host="127.0.0.1", port=echo_port), tmp_path / "0.sock") as forwarder:
        server = ChannelServer([str(forwarder.socket_path)], str(tmp_path / "ch.sock"))
        server.start()
        raw = raw_session(server)
        try:
            yield server, raw
        finally:
            raw.close()
            server.stop()


@pytest.mark.parametrize("bad", [
    pytest.param(frame(1, 9), id="unknown kind"),
    pytest.param(HEADER.pack(1, DATA, MAX_PAYLOAD + 1), id="oversized payload"),
    pytest.param(frame(1, OPEN, b"\x00"), id="open without a route number"),
    pytest.param(frame(1, OPEN, ROUTE.pack(0)) + frame(1, OPEN, ROUTE.pack(0)), id="open of an open connection"),
])
def test_a_frame_breaking_the_rules_ends_that_vms_channel(host_end: tuple[ChannelServer, socket.socket],
                                                          bad: bytes) -> None:
    server, raw = host_end
    raw.sendall(bad)
    while raw.recv(1 << 16):  # what the server sent before it hung up, then the end
        pass
    assert len(server.protocol_errors) == 1


def test_a_guest_can_name_only_a_route_number(host_end: tuple[ChannelServer, socket.socket]) -> None:
    """Route numbers past the table are refused with CLOSE; route 0 is the forwarder's echo."""
    server, raw = host_end
    raw.sendall(frame(7, OPEN, ROUTE.pack(1)) + frame(8, OPEN, struct.pack(">H", 65535)))
    assert {read_frame(raw)[:2] for _ in range(2)} == {(7, CLOSE), (8, CLOSE)}
    raw.sendall(frame(9, OPEN, ROUTE.pack(0)) + frame(9, DATA, b"hello"))
    assert read_frame(raw) == (9, DATA, b"hello")
    assert server.protocol_errors == []


def wait_until(predicate: Callable[[], bool], what: str, timeout_s: float = TIMEOUT_S) -> None:
    """Waits for a state to be reached (polling it), failing with ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout_s} s: {what}")
        time.sleep(0.02)


def test_a_guest_holds_at_most_max_open_connections(host_end: tuple[ChannelServer, socket.socket]) -> None:
    """Regression: every OPEN took a host descriptor and thread, with no cap, so one guest could
    exhaust the coordinator's file descriptors (found by trying to break it)."""
    server, raw = host_end
    extra = 40
    raw.sendall(b"".join(frame(n, OPEN, ROUTE.pack(0)) for n in range(1, MAX_OPEN + extra + 1)))
    closed = set()
    while len(closed) < extra:
        conn_id, kind, _ = read_frame(raw)
        if kind == CLOSE:
            closed.add(conn_id)
    assert closed == set(range(MAX_OPEN + 1, MAX_OPEN + extra + 1))
    assert server.protocol_errors == []


def test_reusing_an_id_right_after_close_leaves_the_new_connection_alone(
        host_end: tuple[ChannelServer, socket.socket]) -> None:
    """Regression: the old connection's pump, ending after CLOSE, dropped whatever connection
    then had its id; the new one lost its reply (1 in 50 in the report)."""
    server, raw = host_end
    for n in range(1, 51):
        reply = f"hello {n}".encode()
        raw.sendall(frame(n, OPEN, ROUTE.pack(0)) + frame(n, DATA, b"a") + frame(n, CLOSE)
                    + frame(n, OPEN, ROUTE.pack(0)) + frame(n, DATA, reply) + frame(n, EOF))
        got = b""
        while reply not in got:  # frames of the old connection may come first
            conn_id, kind, payload = read_frame(raw)
            assert (conn_id, kind) != (n, CLOSE), f"the new connection was closed (round {n})"
            got += payload if conn_id == n and kind == DATA else b""
    assert server.protocol_errors == []


def outgoing_queue(conn: socket.socket) -> int:
    """Bytes written to ``conn`` that its peer has not read yet (SIOCOUTQ)."""
    return struct.unpack("i", fcntl.ioctl(conn.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]


def reader_blocked_on_a_connection() -> bool:
    """True when the channel server's reader is inside ``Channel._apply`` (writing a DATA frame
    to a connection that does not take it)."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    return any(names.get(ident) == "egress channel reader" and frame.f_code.co_name == "_apply"
               for ident, frame in sys._current_frames().items())


@pytest.mark.parametrize("destination", ["echo", "sink"])
def test_a_vm_gone_while_its_connection_is_wedged_frees_the_forwarder(
        tmp_path: Path, echo_port: int, sink_port: int, destination: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: a worker that writes and never reads wedges its connection (the echo comes
    back to a VM that does not read; a sink never reads at all). When its VM died, the host's
    threads stayed blocked and the forwarder's slot stayed taken for the pool's life."""
    monkeypatch.setattr(channel, "DRAIN_TIMEOUT_S", 0.5)
    monkeypatch.setattr(egress, "DRAIN_TIMEOUT_S", 0.5)
    port = echo_port if destination == "echo" else sink_port
    with EgressForwarder(Destination(host="127.0.0.1", port=port), tmp_path / "0.sock") as wedged, \
            EgressForwarder(Destination(host="127.0.0.1", port=echo_port), tmp_path / "1.sock") as healthy:
        server = ChannelServer([str(wedged.socket_path), str(healthy.socket_path)], str(tmp_path / "ch.sock"))
        server.start()
        try:
            raw = raw_session(server)
            raw.sendall(frame(1, OPEN, ROUTE.pack(0)))

            def flood() -> None:
                try:
                    for _ in range(4096):  # 256 MiB, far past every buffer on the way
                        raw.sendall(frame(1, DATA, b"w" * MAX_PAYLOAD))
                except OSError:
                    return

            threading.Thread(target=flood, daemon=True).start()
            wait_until(lambda: reader_blocked_on_a_connection() and outgoing_queue(raw) >= MAX_PAYLOAD,
                       "the channel wedged on the connection")
            assert wedged.active == 1
            raw.shutdown(socket.SHUT_RDWR)
            raw.close()  # the VM dies
            wait_until(lambda: wedged.active == 0, "the forwarder's slot freed")
            wait_until(lambda: not server._sessions, "the VM's session ended")
            with raw_session(server) as again:
                again.sendall(frame(1, OPEN, ROUTE.pack(1)) + frame(1, DATA, b"next VM"))
                assert read_frame(again) == (1, DATA, b"next VM")
        finally:
            server.stop()


def test_a_sandbox_gone_while_its_destination_does_not_read_frees_the_forwarder(
        tmp_path: Path, sink_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for bubblewrap and gVisor, whose workers connect to the forwarder directly."""
    monkeypatch.setattr(egress, "DRAIN_TIMEOUT_S", 0.5)
    with EgressForwarder(Destination(host="127.0.0.1", port=sink_port), tmp_path / "0.sock") as forwarder:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(str(forwarder.socket_path))

        def flood() -> None:
            try:
                while True:
                    client.sendall(b"w" * (1 << 16))
            except OSError:
                return

        threading.Thread(target=flood, daemon=True).start()
        wait_until(lambda: forwarder.active == 1 and outgoing_queue(client) >= 1 << 16, "the forwarder wedged")
        client.shutdown(socket.SHUT_RDWR)
        client.close()  # the sandbox dies
        wait_until(lambda: forwarder.active == 0, "the forwarder's slot freed")


EXHAUSTION = r"""
import errno, json, os, resource, socket, sys, threading
from fleetledger.sandbox.sockets import accept_loop

failures, served, exhausted = [], [], threading.Event()


class Listener(socket.socket):
    def accept(self):
        try:
            return super().accept()
        except OSError as exc:
            failures.append(exc.errno)
            exhausted.set()
            raise


listener = Listener(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
listener.listen(8)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
fillers = []
try:
    while True:
        fillers.append(os.open("/dev/null", os.O_RDONLY))
except OSError:
    os.close(fillers.pop())
client = socket.socket(socket.AF_UNIX)  # takes the one free descriptor: none is left to accept it
client.connect(sys.argv[1])
loop = threading.Thread(target=accept_loop, args=(listener, lambda conn: (served.append(1), listener.shutdown(socket.SHUT_RDWR))))
loop.start()
exhausted.wait(60)
for fd in fillers:
    os.close(fd)
loop.join(60)
print(json.dumps({"emfile": errno.EMFILE in failures, "served": len(served), "ended": not loop.is_alive()}))
"""


def test_running_out_of_file_descriptors_pauses_accepting_and_never_ends_it(tmp_path: Path) -> None:
    """Regression: an accept failing with EMFILE ended the accept loops of the channel server,
    the guest's end and the forwarder, so egress stayed dead for every VM after one flood. The
    shared loop is run alone in a process whose descriptors are used up, then freed."""
    done = subprocess.run([sys.executable, "-c", EXHAUSTION, str(tmp_path / "l.sock")],
                          capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"emfile": True, "served": 1, "ended": True}
