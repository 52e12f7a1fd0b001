"""Socket helpers shared by the host's egress forwarder and the microVM's egress channel.

Standard library only, with no imports from the package: the microVM guest's pid 1 loads this
file on its own, beside ``microvm/channel.py``.
"""

from __future__ import annotations

import errno
import select
import socket
import time
from collections.abc import Callable

ACCEPT_BACKOFF_S = 0.1
"""How long an accept loop pauses when the process is out of file descriptors or memory."""

DRAIN_TIMEOUT_S = 10.0
"""After a peer hung up, how long what it sent before may still take to be passed on, before
every connection behind it is closed (a destination or worker that stopped reading must not
hold a forwarder slot, a thread and file descriptors for ever)."""

_EXHAUSTED = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


def shut_down(conn: socket.socket) -> None:
    """Shuts both directions of ``conn`` down, waking any thread blocked reading or writing it
    (a bare ``close`` wakes neither, and the peer sees no end while one is blocked); never raises."""
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def close(conn: socket.socket) -> None:
    """``shut_down``, then close ``conn``."""
    shut_down(conn)
    conn.close()


def accept_loop(listener: socket.socket, serve: Callable[[socket.socket], None]) -> None:
    """Accepts connections on ``listener`` and hands each to ``serve`` until the listener is
    shut down (``shut_down(listener)`` ends it). Running out of file descriptors or kernel
    memory only pauses it for ``ACCEPT_BACKOFF_S``: a flood must not end the service for
    everyone after it."""
    while True:
        try:
            conn, _ = listener.accept()
        except OSError as exc:
            if exc.errno in _EXHAUSTED:
                time.sleep(ACCEPT_BACKOFF_S)
                continue
            return
        serve(conn)


def wait_hangup(conn: socket.socket) -> None:
    """Blocks until ``conn`` is hung up: its peer closed it entirely, or both of its directions
    were shut down here (``POLLHUP``; a half-close, ``shutdown(SHUT_WR)``, is not a hang-up).
    Do not close ``conn`` while a thread waits here: shut it down instead."""
    poller = select.poll()
    poller.register(conn, 0)  # no event asked for: poll(2) still reports POLLHUP, POLLERR, POLLNVAL
    while not poller.poll():
        pass
