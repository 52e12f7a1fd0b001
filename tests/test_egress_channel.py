"""The microVM's egress channel, without a VM: the guest end (``GuestEnd``, the code the
guest's pid 1 runs) reads and writes a real unix socket in place of the virtio-serial port, and
the host end is the ``ChannelServer`` that QEMU's socket chardev connects to. Every byte goes
through a real ``EgressForwarder`` to a real TCP server.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fleetledger.sandbox.egress import Destination, EgressForwarder, connect
from fleetledger.sandbox.microvm.channel import CLOSE, DATA, HEADER, MAX_PAYLOAD, OPEN, ROUTE, ChannelServer, GuestEnd

TIMEOUT_S = 30.0


@pytest.fixture
def echo_port() -> Iterator[int]:
    """A TCP server that echoes each connection until its client half-closes, then closes."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def echo(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(1 << 16):
                conn.sendall(data)

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
def host_end(tmp_path: Path, echo_port: int) -> Iterator[tuple[ChannelServer, socket.socket]]:
    """A channel server with one route (the echo server), and a raw connection to it as a
    hostile guest would have."""
    with EgressForwarder(Destination(host="127.0.0.1", port=echo_port), tmp_path / "0.sock") as forwarder:
        server = ChannelServer([str(forwarder.socket_path)], str(tmp_path / "ch.sock"))
        server.start()
        raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        raw.connect(server.socket_path)
        raw.settimeout(TIMEOUT_S)
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
