"""The microVM's egress channel: connections to allowed destinations, over one virtio-serial port.

The guest has no network device. A worker inside reaches an allowed destination exactly as in
the other sandboxes: it connects to a unix socket named in ``FLEETLEDGER_EGRESS``
(``/run/fleetledger/egress/N.sock``). The guest's pid 1 listens on those sockets and carries
each connection over the virtio-serial port ``fleetledger-egress``, whose host side is a QEMU
socket chardev connected to a ``ChannelServer`` in the coordinator. The server connects each
carried connection to route ``N``'s ``EgressForwarder``, which reaches exactly that ``host:port``.
The guest can only name a route number; it never names an address.

Frames, in both directions: a 9-byte header, big-endian ``connection id (u32), kind (u8),
payload length (u32)``, then the payload (at most ``MAX_PAYLOAD`` bytes). Kinds:

* ``OPEN`` (guest to host; payload: the route number as u16): a new connection. The host
  answers ``CLOSE`` when the route does not exist or its forwarder cannot be reached;
* ``DATA``: bytes of the connection;
* ``EOF``: the sender's side will send no more (``shutdown(SHUT_WR)`` on the other side); a
  connection ends when both sides have sent ``EOF``;
* ``CLOSE``: the connection is gone (an error, or the other end reset it).

A frame that breaks these rules (an unknown kind, an oversized payload, an ``OPEN`` sent to the
guest, an ``OPEN`` of an open connection) ends the whole channel: the host trusts nothing the
guest sends. A VM holds at most ``MAX_OPEN`` connections (each costs the host a thread and two
file descriptors). One connection that does not take its data stalls the VM's others (frames
are read by one thread), which suits a scanner's occasional API calls; when the VM goes away,
its connections are closed after ``DRAIN_TIMEOUT_S`` even if stalled, freeing the forwarders.

Standard library only, and from the package only ``sockets`` (also standalone): the guest's
pid 1 loads both files on their own (``guest_init``).
"""

from __future__ import annotations

import functools
import os
import socket
import struct
import threading
from collections.abc import Callable, Sequence

try:
    from ..sockets import DRAIN_TIMEOUT_S, accept_loop, close, shut_down, wait_hangup
except ImportError:  # loaded on its own by the guest's pid 1, beside sockets.py
    from sockets import DRAIN_TIMEOUT_S, accept_loop, close, shut_down, wait_hangup  # type: ignore[no-redef]

HEADER = struct.Struct(">IBI")
ROUTE = struct.Struct(">H")
OPEN, DATA, EOF, CLOSE = 1, 2, 3, 4
MAX_PAYLOAD = 1 << 16
MAX_OPEN = 64
"""Connections one channel (one VM) carries at once."""
PORT_NAME = "fleetledger-egress"
"""The name of the virtio-serial port that carries the channel."""


class ProtocolError(ValueError):
    """The other end sent a frame that breaks the channel's rules; the channel ends."""


class Channel:
    """One end of the channel: connections multiplexed over one byte stream.

    At most ``MAX_OPEN`` connections are carried at once: past that, the guest end closes new
    clients and the host end answers ``OPEN`` with ``CLOSE``, so a guest cannot exhaust the
    coordinator's file descriptors or threads (each connection holds one of each).

    Args:
        read: Reads up to ``n`` bytes of the stream; ``b""`` at its end.
        write: Writes all of ``data`` to the stream; raises OSError when it is gone.
        connect: At the host end, route number -> a socket connected to that route's forwarder
            (raising OSError or IndexError when it cannot be reached or does not exist). None at
            the guest end, which opens connections and refuses ``OPEN``.
    """

    def __init__(self, read: Callable[[int], bytes], write: Callable[[bytes], None],
                 connect: Callable[[int], socket.socket] | None = None) -> None:
        self._read = read
        self._write = write
        self._connect = connect
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._conns: dict[int, socket.socket] = {}
        self._eofs: dict[int, set[str]] = {}
        self._next_id = 1
        self._ended = False

    def open(self, client: socket.socket, route: int) -> None:
        """Guest end: carries ``client`` (an accepted connection) to route number ``route``;
        closes it at once when the channel has ended or carries ``MAX_OPEN`` connections."""
        with self._lock:
            if self._ended or len(self._conns) >= MAX_OPEN:
                client.close()
                return
            conn_id, self._next_id = self._next_id, self._next_id + 1
            self._add(conn_id, client)
        if self._send(conn_id, OPEN, ROUTE.pack(route)):
            self._start_pump(conn_id, client)

    def serve(self) -> None:
        """Reads and applies frames until the stream ends or breaks the rules, then closes
        every carried connection.

        Raises:
            ProtocolError: a frame broke the rules (the connections are closed first).
        """
        try:
            while True:
                header = self._read_exact(HEADER.size)
                if header is None:
                    return
                conn_id, kind, length = HEADER.unpack(header)
                if length > MAX_PAYLOAD or kind not in (OPEN, DATA, EOF, CLOSE):
                    raise ProtocolError(f"frame of kind {kind} with {length} bytes")
                payload = self._read_exact(length) if length else b""
                if payload is None:
                    return
                self._apply(conn_id, kind, payload)
        except OSError:
            return
        finally:
            self.abort()

    def abort(self) -> None:
        """Ends the channel: closes every carried connection (waking a thread blocked on one)
        and refuses new ones. Idempotent."""
        with self._lock:
            self._ended = True
            conns, self._conns = list(self._conns.values()), {}
            self._eofs.clear()
        for conn in conns:
            close(conn)

    def _apply(self, conn_id: int, kind: int, payload: bytes) -> None:
        """Applies one frame to the connection it names (frames of a gone connection are dropped)."""
        if kind == OPEN:
            self._accept(conn_id, payload)
            return
        with self._lock:
            conn = self._conns.get(conn_id)
        if conn is None:
            return
        try:
            if kind == DATA:
                conn.sendall(payload)
            elif kind == EOF:
                conn.shutdown(socket.SHUT_WR)
                self._half_closed(conn_id, conn, "received")
            else:
                self._drop(conn_id, conn, tell=False)
        except OSError:
            self._drop(conn_id, conn, tell=True)

    def _accept(self, conn_id: int, payload: bytes) -> None:
        """Host end: connects a new connection to its route, or answers ``CLOSE``."""
        if self._connect is None or len(payload) != ROUTE.size:
            raise ProtocolError("OPEN sent to the guest, or without a route number")
        with self._lock:
            if conn_id in self._conns:
                raise ProtocolError(f"OPEN of connection {conn_id}, which is open")
            full = len(self._conns) >= MAX_OPEN
        try:
            if full:
                raise OSError(f"{MAX_OPEN} connections are open")
            upstream = self._connect(ROUTE.unpack(payload)[0])
        except (OSError, IndexError):
            self._send(conn_id, CLOSE)
            return
        with self._lock:
            if self._ended:
                upstream.close()
                return
            self._add(conn_id, upstream)
        self._start_pump(conn_id, upstream)

    def _add(self, conn_id: int, conn: socket.socket) -> None:
        self._conns[conn_id] = conn
        self._eofs[conn_id] = set()

    def _start_pump(self, conn_id: int, conn: socket.socket) -> None:
        threading.Thread(target=self._pump, args=(conn_id, conn), name=f"egress channel {conn_id}",
                         daemon=True).start()

    def _pump(self, conn_id: int, conn: socket.socket) -> None:
        """Sends what ``conn`` receives as ``DATA`` frames, then ``EOF``; on an error of
        ``conn``, ``CLOSE``; when the stream is gone, closes ``conn`` (which wakes a thread
        blocked writing to it, and frees the forwarder's slot behind it)."""
        try:
            while data := conn.recv(MAX_PAYLOAD):
                if not self._send(conn_id, DATA, data):
                    self._drop(conn_id, conn, tell=False)
                    return
        except OSError:
            self._drop(conn_id, conn, tell=True)
            return
        with self._lock:
            if self._conns.get(conn_id) is not conn:
                return  # dropped meanwhile: its id is not this connection's any more
        if self._send(conn_id, EOF):
            self._half_closed(conn_id, conn, "sent")
        else:
            self._drop(conn_id, conn, tell=False)

    def _half_closed(self, conn_id: int, conn: socket.socket, side: str) -> None:
        """Notes an ``EOF`` sent or received on ``conn``; closes it once both are."""
        with self._lock:
            if self._conns.get(conn_id) is not conn:
                return  # gone, and its id perhaps reused by the other end
            sides = self._eofs[conn_id]
            sides.add(side)
            if len(sides) < 2:
                return
            del self._conns[conn_id], self._eofs[conn_id]
        conn.close()

    def _drop(self, conn_id: int, conn: socket.socket, *, tell: bool) -> None:
        """Closes ``conn``, telling the other end with ``CLOSE`` when ``tell`` and it was still
        carried under ``conn_id``."""
        with self._lock:
            carried = self._conns.get(conn_id) is conn
            if carried:
                del self._conns[conn_id], self._eofs[conn_id]
        close(conn)
        if carried and tell:
            self._send(conn_id, CLOSE)

    def _send(self, conn_id: int, kind: int, payload: bytes = b"") -> bool:
        """Writes one frame; returns False when the stream is gone (the channel is ending)."""
        try:
            with self._send_lock:
                self._write(HEADER.pack(conn_id, kind, len(payload)) + payload)
        except OSError:
            return False
        return True

    def _read_exact(self, size: int) -> bytes | None:
        """Returns exactly ``size`` bytes of the stream, or None at its end."""
        parts, left = [], size
        while left:
            data = self._read(left)
            if not data:
                return None
            parts.append(data)
            left -= len(data)
        return b"".join(parts)


class GuestEnd:
    """Guest end: listens on ``socket_paths`` (route N at index N, connectable by any uid) and
    carries every connection over the open virtio-serial port ``port_fd``.

    The constructor only opens sockets (so pid 1 can fail cleanly before it starts the worker,
    and fork it with no thread running); ``start`` starts the threads. Both file descriptors are
    not inherited across ``exec``, so the worker never holds them.

    Raises:
        OSError: a socket cannot be created.
    """

    def __init__(self, port_fd: int, socket_paths: Sequence[str]) -> None:
        self.port_fd = port_fd
        self.channel = Channel(self._read, self._write)
        self.listeners: list[socket.socket] = []
        for path in socket_paths:
            os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.listeners.append(listener)
            listener.bind(path)
            os.chmod(path, 0o666)
            listener.listen(16)

    def start(self) -> threading.Thread:
        """Starts accepting and carrying; returns the (daemon) thread reading the port, which
        ends when the host side goes away."""
        for route, listener in enumerate(self.listeners):
            threading.Thread(target=accept_loop, args=(listener, functools.partial(self.channel.open, route=route)),
                             daemon=True).start()
        reader = threading.Thread(target=self.channel.serve, name="egress channel", daemon=True)
        reader.start()
        return reader

    def _read(self, size: int) -> bytes:
        return os.read(self.port_fd, size)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.port_fd, view):]


class ChannelServer:
    """Host end: listens on a unix socket for the QEMU processes of microVMs (one connection
    each, from ``-chardev socket``) and carries their connections to the routes' forwarders.

    Args:
        forwarders: Route number -> the unix socket of that route's ``EgressForwarder``.
        socket_path: Where to listen (a folder only the coordinator's user can enter).

    Attributes:
        protocol_errors: What each channel ended by a frame breaking the rules was told.
    """

    def __init__(self, forwarders: Sequence[str], socket_path: str) -> None:
        self.forwarders = list(forwarders)
        self.socket_path = socket_path
        self.protocol_errors: list[str] = []
        self._listener: socket.socket | None = None
        self._sessions: dict[socket.socket, Channel] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        """Starts listening and serving in daemon threads.

        Raises:
            OSError: the socket cannot be created at ``socket_path`` (e.g. it exists).
        """
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.socket_path)
            os.chmod(self.socket_path, 0o600)
            listener.listen(64)
        except OSError:
            listener.close()
            raise
        self._listener = listener
        threading.Thread(target=accept_loop, args=(listener, self._start_session), name="egress channel server",
                         daemon=True).start()

    def stop(self) -> None:
        """Stops listening, ends every VM's channel (closing its connections, which wakes every
        thread blocked on one), and removes the socket."""
        if self._listener is not None:
            close(self._listener)
        with self._lock:
            sessions, self._sessions = dict(self._sessions), {}
        for session, channel in sessions.items():
            channel.abort()
            shut_down(session)  # its thread sees the end, then closes the session
        try:
            os.unlink(self.socket_path)
        except FileNotFoundError:
            pass

    def _start_session(self, session: socket.socket) -> None:
        threading.Thread(target=self._run_session, args=(session,), name="egress channel session",
                         daemon=True).start()

    def _run_session(self, session: socket.socket) -> None:
        """Serves one VM's channel in a second thread, and ends it when the VM goes away: what
        the VM sent before has ``DRAIN_TIMEOUT_S`` to be passed on, then every connection is
        closed (the reader may be blocked writing to a destination that stopped reading)."""
        channel = Channel(session.recv, session.sendall, self._connect)
        with self._lock:
            self._sessions[session] = channel
        serving = threading.Thread(target=self._serve, args=(session, channel), name="egress channel reader",
                                   daemon=True)
        serving.start()
        wait_hangup(session)
        serving.join(DRAIN_TIMEOUT_S)
        channel.abort()
        serving.join()
        with self._lock:
            self._sessions.pop(session, None)
        session.close()

    def _serve(self, session: socket.socket, channel: Channel) -> None:
        try:
            channel.serve()
        except ProtocolError as exc:
            self.protocol_errors.append(str(exc))
        finally:
            shut_down(session)  # the session's end, for ``_run_session``

    def _connect(self, route: int) -> socket.socket:
        """Connects to route ``route``'s forwarder (IndexError: no such route)."""
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(self.forwarders[route])
        except (OSError, IndexError):
            upstream.close()
            raise
        return upstream
