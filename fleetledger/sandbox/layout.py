"""What a container-like sandbox (bubblewrap, gVisor) shows of the host, and nothing more.

A worker needs its Python runtime and the scan target, read-only, and its scratch folder,
writable. Everything else of the host stays out: no /home, no /root beyond the interpreter's own
prefix, no /etc at all (Python, bandit and the analyst read nothing there: no user database is
needed for an anonymous uid, no resolver files without a network, and the dynamic linker finds
the system libraries in its built-in directories without ``ld.so.cache``), no /var, no /run.
Only /usr is bound whole: it holds the distribution's code and shared libraries, no user data.
Every path is bound at its own host path, so the paths the coordinator hands a worker are the
same inside.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import clean_env
from .egress import EgressRoute, egress_env, inside_paths

PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The fleetledger package folder; its parent goes on the worker's ``PYTHONPATH``."""

SYSTEM_DIRS = (Path("/usr"),)
"""Bound read-only whole: the distribution's programs and shared libraries."""

ROOT_ENTRIES = tuple(Path(p) for p in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"))
"""Re-created as the same symlinks (merged /usr) or bound read-only (split /usr)."""


WORKER_SHIM = ("/bin/sh", "-c", '("$@"; exit $?); exit $?', "sh")
"""Runs the command as a grandchild of the sandbox's first process, and waits for it.

Inside a pid namespace the first process is pid 1, which the kernel shields from the signals
its own namespace sends (a tool's ``kill(getpid(), SIGSTOP)`` or ``SIGKILL`` would do nothing),
and whose children see ``getppid() == 1``, the worker's sign of being orphaned. Under this shim
the worker is an ordinary process whose parent is alive, as outside a sandbox.
"""


def shimmed(argv: Sequence[str]) -> list[str]:
    """Returns ``argv`` run under ``WORKER_SHIM``."""
    return [*WORKER_SHIM, *argv]


@dataclass(frozen=True, kw_only=True)
class Bind:
    """One host path shown inside at ``target``; ``writable`` False means read-only."""

    source: Path
    target: Path
    writable: bool = False


@dataclass(frozen=True, kw_only=True)
class Layout:
    """The file system a sandboxed worker sees, and its environment.

    Attributes:
        binds: Bind mounts, parents before children (a later mount covers an earlier one).
        links: Symlinks to create at the root, ``(path, link target)``.
        env: The complete environment of the worker.
        workdir: The worker's current folder (its scratch folder).
    """

    binds: tuple[Bind, ...]
    links: tuple[tuple[Path, str], ...]
    env: tuple[tuple[str, str], ...]
    workdir: Path


def runtime_paths() -> list[Path]:
    """Returns the host folders the worker's Python needs: prefixes, site-packages, the package."""
    candidates = [Path(sys.base_prefix), Path(sys.prefix), PACKAGE_DIR,
                  Path(sys.executable).parent, Path(os.path.realpath(sys.executable)).parent, *_library_dirs()]
    return [p for p in candidates if p.is_dir()]


@functools.cache
def _library_dirs() -> tuple[Path, ...]:
    """The interpreter's library folders (``sysconfig``, which expands its path templates anew
    at every call: a few milliseconds of the coordinator's CPU for each worker it starts)."""
    return tuple(Path(sysconfig.get_path(key)) for key in ("stdlib", "platstdlib", "purelib", "platlib"))


def worker_env(scratch: Path, egress: Sequence[EgressRoute], where: dict[Path, Path] | None) -> dict[str, str]:
    """Returns the worker's whole environment: ``clean_env``, ``PYTHONPATH``, the egress table."""
    return clean_env(scratch) | {"PYTHONPATH": str(PACKAGE_DIR.parent)} | egress_env(egress, where)


def plan(read_only: Sequence[Path], scratch: Path, egress: Sequence[EgressRoute] = ()) -> Layout:
    """Plans what the sandbox shows: the runtime and ``read_only`` read-only, ``scratch`` writable.

    Args:
        read_only: Folders the worker may read (the scan target), bound at their own paths.
        scratch: The folder the worker may write.
        egress: Allowed destinations; their sockets appear under ``egress.INSIDE_DIR``.

    Returns:
        The layout; binds already covered by an enclosing bind of the same kind are left out.
    """
    links: list[tuple[Path, str]] = []
    binds = [Bind(source=d, target=d) for d in SYSTEM_DIRS]
    for entry in ROOT_ENTRIES:
        if entry.is_symlink():
            links.append((entry, os.readlink(entry)))
        elif entry.is_dir():
            binds.append(Bind(source=entry, target=entry))
    for path in [*runtime_paths(), *read_only]:
        absolute = Path(os.path.abspath(path))
        binds.append(Bind(source=absolute, target=absolute))
    scratch = Path(os.path.abspath(scratch))
    binds.append(Bind(source=scratch, target=scratch, writable=True))
    where = inside_paths(egress)
    binds += [Bind(source=host, target=inside) for host, inside in where.items()]
    return Layout(binds=tuple(_without_redundant(binds)), links=tuple(links),
                  env=tuple(sorted(worker_env(scratch, egress, where).items())), workdir=scratch)


def _without_redundant(binds: list[Bind]) -> list[Bind]:
    """Orders binds parents first and drops those an enclosing bind already provides the same way."""
    ordered = sorted(set(binds), key=lambda b: (len(b.target.parts), str(b.target), b.writable))
    kept: list[Bind] = []
    for bind in ordered:
        enclosing = [k for k in kept if bind.target.is_relative_to(k.target)]
        nearest = max(enclosing, key=lambda k: len(k.target.parts), default=None)
        same_way = (nearest is not None and nearest.writable == bind.writable
                    and nearest.source / bind.target.relative_to(nearest.target) == bind.source)
        if not same_way:
            kept = [k for k in kept if k.target != bind.target]
            kept.append(bind)
    return kept
