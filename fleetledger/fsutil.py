"""Durable file replacement: the one way fleetledger writes a file other than the ledger.

The method is the usual POSIX one (see e.g. the LWN article "Ensuring data reaches disk",
2011): write a temporary file in the same folder, ``fsync`` it, ``rename`` it over the target,
then ``fsync`` the folder so the rename itself is durable. A reader sees either the whole old
file or the whole new file, never a mix, at every moment including after a power cut.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import faults


def fsync_dir(folder: Path) -> None:
    """Makes the entries of ``folder`` (a new name, a rename) durable.

    Raises:
        OSError: the folder cannot be opened or synced (e.g. EIO from the disk).
    """
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path | str, data: bytes, *, fault_prefix: str = "atomic_write") -> None:
    """Replaces ``path`` with ``data`` atomically and durably.

    Args:
        path: The file to replace; its folder must exist.
        data: The whole new content.
        fault_prefix: Name prefix of the crash points hit on the way
            (``<prefix>.after_write``, ``.after_fsync``, ``.after_rename``), see ``faults``.

    Raises:
        OSError: writing, syncing or renaming failed; the old file is then untouched and the
            temporary file is removed where possible.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        faults.hit(f"{fault_prefix}.after_write")
        os.fsync(fd)
        faults.hit(f"{fault_prefix}.after_fsync")
    except BaseException:
        os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    os.close(fd)
    os.replace(tmp, path)
    faults.hit(f"{fault_prefix}.after_rename")
    fsync_dir(path.parent)
