"""The workspace: the one folder fleetledger writes (``.run/`` by default).

It holds the ledger (``ledger.sqlite3``), the run-state file, the run lock, worker logs and the
exported reports. The run lock (``flock`` on ``lock``) makes the coordinator that holds it the
single writer of the workspace; the kernel drops it when the process dies, however it dies.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import secrets
import shutil
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import errors, fsutil
from .runstate import STATE_FILE

LEDGER_FILE = "ledger.sqlite3"
LEDGER_ENV = "FLEETLEDGER_LEDGER"
"""Environment variable (and ``--ledger`` option) naming a ledger URL other than the workspace's SQLite file."""
LOCK_FILE = "lock"
OWNER_FILE = "owner"
"""HMAC-SHA256, under this user's ``owner_key()``, of the workspace's path: written when the
workspace's ledger is created, so a workspace a repository ships can be told from one made here."""


@dataclass(frozen=True)
class Workspace:
    """Paths of a workspace folder (nothing is created until ``ensure`` or ``lock``).

    Attributes:
        root: The workspace folder, absolute, symlinks resolved.
        given: The folder as the user named it, absolute but unresolved (None: ``root``): where
            the workspace's own entry is, which may be a symbolic link a repository planted.
    """

    root: Path
    given: Path | None = field(default=None, compare=False)

    @classmethod
    def at(cls, path: str | Path) -> "Workspace":
        """Returns the workspace at ``path`` (made absolute, symlinks resolved)."""
        absolute = Path(os.path.abspath(Path(path).expanduser()))
        return cls(absolute.resolve(), given=absolute)

    @property
    def entry(self) -> Path:
        """The workspace's own folder entry: its parent resolved, its last name kept, so a
        symbolic link there is seen as a link and not as the folder it points to."""
        given = self.given or self.root
        return Path(os.path.realpath(given.parent)) / given.name

    @property
    def ledger_url(self) -> str:
        """The ledger URL: ``$FLEETLEDGER_LEDGER`` when set (a PostgreSQL ledger shared by
        coordinators on several hosts, say), else ``sqlite:///<root>/ledger.sqlite3``."""
        return os.environ.get(LEDGER_ENV) or f"sqlite:///{self.root / LEDGER_FILE}"

    @property
    def member(self) -> str:
        """``host:workspace``: where a coordinator runs. On a ledger shared by several hosts,
        the coordinator sessions of one member follow each other (the run lock), so once a
        coordinator holds the lock every earlier session of its member is gone."""
        return f"{socket.gethostname()}:{self.root}"

    @property
    def state_path(self) -> Path:
        """The run-state file."""
        return self.root / STATE_FILE

    @property
    def logs(self) -> Path:
        """Folder of the worker processes' stderr logs."""
        return self.root / "logs"

    def exists(self) -> bool:
        """True when the workspace has a ledger: its SQLite file, or a ledger URL in
        ``$FLEETLEDGER_LEDGER`` (whose runs are then looked up in that ledger)."""
        return bool(os.environ.get(LEDGER_ENV)) or (self.root / LEDGER_FILE).exists()

    def config_file(self, name: str, scanned: Sequence[Path], *, instead: str) -> Path | None:
        """Returns ``<root>/<name>`` (``policy.toml``, ``models.toml``) when it exists, else None.

        Args:
            name: The file's name in the workspace.
            scanned: The folders the job reads (the untrusted repository).
            instead: How the user names the file explicitly (``--policy FILE``), for the error.

        Raises:
            UsageError: the file exists but the workspace lies inside a scanned folder: the
                repository may have shipped it (with its own policy, or a model endpoint that
                would receive the API key), so it is not read unless named explicitly.
        """
        path = self.root / name
        if not path.is_file():
            return None
        folder = self.inside(scanned)
        if folder is not None:
            raise errors.UsageError(
                f"{path} is not read: the workspace is inside the scanned folder {folder}, and a repository can "
                f"ship a workspace with its own {name} (a wider policy, or a model endpoint that would receive "
                f"your API key); if the file is yours, name it with {instead}, or put the workspace elsewhere "
                "(--workspace DIR)")
        return path

    def inside(self, scanned: Sequence[Path]) -> Path | None:
        """Returns the first of the ``scanned`` folders that holds the workspace (its folder, or
        its entry when that is a symbolic link pointing elsewhere), or None."""
        places = (self.root, self.entry)
        return next((Path(folder) for folder in scanned
                     if any(p.is_relative_to(Path(folder).resolve()) for p in places)), None)

    def ensure(self) -> None:
        """Creates the workspace folders if missing, and marks a workspace whose ledger does
        not exist yet as made here (``OWNER_FILE``).

        A new workspace folder appears whole: it is made under a temporary name beside its
        place, marked, and renamed into place, so no crash leaves an unmarked workspace that a
        later run would refuse. Every folder is checked to be a real folder of this user.

        Raises:
            UsageError: the workspace or one of its folders is a symbolic link, not a folder, or
                another user's.
            OSError: the folder cannot be created.
        """
        if not os.path.lexists(self.root):
            self.root.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{self.root.name}.", dir=self.root.parent))
            try:
                self._write_mark(staging)
                os.rename(staging, self.root)
            except OSError:
                shutil.rmtree(staging, ignore_errors=True)
                if not self.root.is_dir():
                    raise
                # else made by another process meanwhile; it is checked below like any other
        fsutil.private_dir(self.root)
        fsutil.private_dir(self.logs)
        if not (self.root / LEDGER_FILE).exists():
            self._write_mark(self.root)

    def _write_mark(self, folder: Path) -> None:
        fd = fsutil.open_nofollow(folder / OWNER_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(self._owner_mark() + "\n")

    def _read_mark(self, folder: Path) -> str:
        """Returns the owner mark in ``folder`` ("" when missing, a link, or unreadable)."""
        try:
            fd = os.open(folder / OWNER_FILE, os.O_RDONLY | fsutil.NOFOLLOW)
        except OSError:
            return ""
        with os.fdopen(fd, "rb") as handle:
            return handle.read(256).decode("ascii", "replace").strip()

    def check_made_here(self, scanned: Sequence[Path], *, near: Sequence[Path] = ()) -> None:
        """Refuses a workspace inside a scanned folder that was not made here by this user,
        before anything in it is read, opened or written, whatever it holds; and refuses an
        SQLite ledger inside a scanned folder that was not made here (the workspace's own, or
        one ``$FLEETLEDGER_LEDGER`` names).

        A repository can ship a ``.run/``: a forged history that hides findings (steps recorded
        as done with nothing found) or shows a finished run, a wider ``policy.toml``, modules in
        ``scratch/`` for the workers to import, or symbolic links that make the coordinator
        write outside the workspace. Only a real folder of this user carrying this user's
        ``OWNER_FILE`` mark for its own path is used; a missing workspace is made here.

        Args:
            scanned: The folders the job reads (the untrusted repository): a workspace there is
                refused whatever it holds, an empty folder included.
            near: Other folders a repository may have put there (the current folder, a
                checkout being worked in): the same, except that an empty real folder of this
                user is accepted (one made by hand for ``--workspace``; there is nothing in it
                to trust) and marked when the run starts.

        Raises:
            UsageError: such a workspace or ledger is there; the message says how to go on.
        """
        folder = self.inside(scanned)
        if folder is not None:
            self._check_shipped(folder, empty_ok=False)
        elif (folder := self.inside(near)) is not None:
            self._check_shipped(folder, empty_ok=True)
        scanned = [*scanned, *near]
        url = self.ledger_url
        if not url.startswith("sqlite:///"):
            return  # a shared database is the user's own; nothing in a checkout can be it
        ledger = Path(url.removeprefix("sqlite:///")).expanduser().resolve()
        home = Workspace(ledger.parent)  # the workspace that made the file, for FLEETLEDGER_LEDGER too
        if not ledger.exists() or home.inside(scanned) is None:
            return
        if not hmac.compare_digest(home._read_mark(home.root), home._owner_mark()):
            raise errors.UsageError(
                f"{ledger} was not created here by this user, and it is inside the scanned folder: a repository "
                "can ship a workspace with a forged history that hides findings; move that folder out of the way, "
                "or scan with --workspace DIR elsewhere")

    def _check_shipped(self, folder: Path, *, empty_ok: bool) -> None:
        entry = self.entry
        try:
            info = os.lstat(entry)
        except FileNotFoundError:
            return  # made here when the run starts
        if (empty_ok and stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
                and not os.listdir(entry)):
            return
        advice = ("move it out of the way, or scan with --workspace DIR elsewhere; nothing in it was read, "
                  "opened or written")
        if stat.S_ISLNK(info.st_mode):
            raise errors.UsageError(
                f"{entry} is a symbolic link inside the scanned folder {folder}: a repository can ship one that "
                f"points at a workspace of its choosing (its policy, its history) or at files to overwrite; {advice}")
        mark = self._read_mark(entry) if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() else ""
        if not hmac.compare_digest(mark, self._owner_mark()):
            raise errors.UsageError(
                f"{entry} was not created here by this user, and it is inside the scanned folder {folder}: a "
                "repository can ship a workspace to run code in the workers, widen the policy or forge a history "
                f"that hides findings; {advice}")

    def _owner_mark(self) -> str:
        return hmac.new(owner_key(), str(self.root).encode(), hashlib.sha256).hexdigest()

    @contextmanager
    def lock(self, session: str) -> Iterator[None]:
        """Holds the run lock: the holder is the workspace's single writer.

        Args:
            session: This coordinator session's id, written into the lock file with the pid.

        Raises:
            RunLockedError: another live process holds the lock (its pid is in the message).
        """
        self.ensure()
        fd = fsutil.open_nofollow(self.root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = self.lock_holder()
                pid = holder.get("pid", "?") if holder else "?"
                raise errors.RunLockedError(
                    f"workspace {self.root} is in use by fleetledger pid {pid}; it is running the run "
                    "now (see `fleetledger status`), or stop it with `fleetledger halt`",
                    pid=pid) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps({"pid": os.getpid(), "session": session}).encode(), 0)
            yield
        finally:
            os.close(fd)

    def lock_holder(self) -> dict | None:
        """Returns ``{"pid", "session"}`` of the process holding the run lock, or None if free."""
        path = self.root / LOCK_FILE
        try:
            fd = os.open(path, os.O_RDONLY | fsutil.NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError:  # a symbolic link: no fleetledger process holds it
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                try:
                    return json.loads(os.pread(fd, 4096, 0) or b"{}")
                except json.JSONDecodeError:
                    return {}
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)


def owner_key() -> bytes:
    """Returns this user's secret for ``OWNER_FILE`` marks (32 random bytes in
    ``~/.config/fleetledger/workspace-key``, mode 0600, made on first use; ``$XDG_CONFIG_HOME``
    is honoured).

    Raises:
        OSError: the file cannot be read or created.
    """
    path = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "fleetledger" / "workspace-key"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # made by another process meanwhile
        return path.read_bytes()
    with os.fdopen(fd, "wb") as handle:
        handle.write(secrets.token_bytes(32))
    return path.read_bytes()
