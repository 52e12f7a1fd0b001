"""Durable file replacement: the one way fleetledger writes a file other than the ledger.

The method is the usual POSIX one (see e.g. the LWN article "Ensuring data reaches disk",
2011): write a temporary file in the same folder, ``fsync`` it, ``rename`` it over the target,
then ``fsync`` the folder so the rename itself is durable. A reader sees either the whole old
file or the whole new file, never a mix, at every moment including after a power cut.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from . import errors, faults

NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
"""Flags every workspace file is opened with: a symbolic link planted in the workspace is
refused (ELOOP), never followed to a file outside it."""


def open_nofollow(path: Path | str, flags: int, mode: int = 0o600) -> int:
    """Opens a workspace file without following a symbolic link at its last component.

    Args:
        path: The file.
        flags: ``os.open`` flags; ``NOFOLLOW`` is added.
        mode: Permission bits of a file created.

    Returns:
        The open file descriptor.

    Raises:
        UsageError: ``path`` is a symbolic link (it may point anywhere on the host); the message
            says to remove it.
        OSError: any other failure to open.
    """
    try:
        return os.open(path, flags | NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise errors.UsageError(
                f"{path} is a symbolic link; fleetledger never follows links in its workspace (a repository "
                "can plant one to make it overwrite or read a file elsewhere): remove it and run again") from None
        raise


def private_dir(path: Path) -> bool:
    """Makes ``path`` a folder of the workspace: created (mode 0700) when missing, else checked
    to be a real folder, not a symbolic link, owned by this user.

    Returns:
        True when the folder was created now.

    Raises:
        UsageError: ``path`` is a symbolic link, not a folder, or owned by another user.
        OSError: it cannot be created (its parent is missing, the disk is full...).
    """
    try:
        os.mkdir(path, 0o700)
        return True
    except FileExistsError:
        pass
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise errors.UsageError(f"{path} is a symbolic link; fleetledger never follows links in its workspace "
                                "(a repository can plant one that points outside it): remove it and run again")
    if not stat.S_ISDIR(info.st_mode):
        raise errors.UsageError(f"{path} is not a folder; remove it and run again")
    if info.st_uid != os.geteuid():
        raise errors.UsageError(f"{path} belongs to uid {info.st_uid}, not to this user ({os.geteuid()}); "
                                "fleetledger keeps its workspace only in folders of its own: remove it, or "
                                "choose another --workspace")
    return False


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

    The temporary file is created exclusively and never through a symbolic link, and the rename
    replaces a link at ``path`` rather than writing where it points.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        os.unlink(tmp)  # left by a crash of an earlier process with this pid (a link is removed, not followed)
    except FileNotFoundError:
        pass
    fd = open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
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
