"""A TCP forwarder a test can cut: one host's road to the database, over real sockets.

``Link(target_port).cut()`` resets every connection through it and refuses new ones (what a
host sees when its network to the database goes away and its connections break);
``restore()`` lets connections through again.
"""

from __future__ import annotations

import socket
import struct
import threading


class Link:
    """Forwards ``127.0.0.1:port`` (an ephemeral port) to ``127.0.0.1:target_port``.

    Args:
        target_port: The port of the server behind the link.
    """

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._server.getsockname()[1]
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._up = True
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        """Resets every connection through the link; new ones are reset as they arrive."""
        with self._lock:
            self._up = False
            for sock in self._open:
                _reset(sock)
            self._open.clear()

    def restore(self) -> None:
        """Lets new connections through again."""
        with self._lock:
            self._up = True

    def close(self) -> None:
        """Stops the link for good."""
        self.cut()
        self._closed = True
        self._server.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                if not self._up:
                    _reset(client)
                    continue
                try:
                    upstream = socket.create_connection(("127.0.0.1", self.target_port))
                except OSError:
                    _reset(client)
                    continue
                self._open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        _reset(dst)


def _reset(sock: socket.socket) -> None:
    try:  # SO_LINGER 0: close with a RST, as a broken network path shows up to the peer
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RDWR)  # wakes the pump thread blocked reading it
    except OSError:
        pass
    sock.close()
