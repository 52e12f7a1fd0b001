"""The identity of the code that decides a run's results.

A run records, in every session's record (``run.started``, ``run.resumed``, ``run.joined``),
the identity of the code that produced its results: fleetledger's version, a SHA-256 over the
source of the job (and, for the scan, of the analyst: the taint engine and its library
models), the detectors' versions, and the model and prompt versions. Two sessions of one run
under different identities would mix results of both versions in one report, so the
coordinator refuses to continue a run recorded under another identity (``Coordinator``), and
the reports name every identity that contributed.

A job may split its identity by what decides each sprint (``Job.sprint_code``): a part is the
digest of the modules a sprint's code imports, followed statically (``closure``), so that
``resume --upgrade`` keeps the results of the sprints whose code did not change and runs the
rest again.

Hand-kept version constants (``DETECT_VERSION``, ``ANALYST_VERSION``) change only when someone
remembers to bump them; the source digests change with every edit of the code they cover.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
SOURCE_SUFFIXES = (".py", ".toml", ".json", ".sql")


@lru_cache(maxsize=None)
def source_digest(*parts: str) -> str:
    """Returns the SHA-256 (hex, first 16 digits) of the package's source under ``parts``
    (paths relative to the package folder: files, or folders taken whole), over each file's
    relative path and bytes in path order; caches, ``__pycache__`` and other suffixes are left
    out. Computed once per process (a few milliseconds).

    Raises:
        OSError: a file cannot be read.
    """
    digest = hashlib.sha256()
    for path in sorted(_files(PACKAGE_DIR / part for part in parts)):
        digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _files(roots: Iterable[Path]) -> set[Path]:
    found: set[Path] = set()
    for root in roots:
        if root.is_file():
            found.add(root)
        elif root.is_dir():
            found.update(p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES and "__pycache__" not in p.parts
                         and p.is_file())
    return found


def differences(recorded: dict[str, str], current: dict[str, str]) -> list[str]:
    """Returns ``"name: recorded -> current"`` for each part of two identities that differs."""
    names = sorted(set(recorded) | set(current))
    return [f"{name}: {recorded.get(name, '(none)')} -> {current.get(name, '(none)')}"
            for name in names if recorded.get(name) != current.get(name)]


def closure_digest(*entries: str) -> str:
    """Returns ``source_digest`` over ``closure(*entries)``: the digest of the code the
    entries run, as far as their import statements say.

    Raises:
        OSError: a file cannot be read.
        SyntaxError: a file of the package does not parse.
    """
    return source_digest(*sorted(closure(*entries)))


@lru_cache(maxsize=None)
def closure(*entries: str) -> frozenset[str]:
    """Returns the package files (paths relative to the package folder) that the modules
    ``entries`` (such paths, files or folders) import, transitively, themselves included.

    Imports are read from every ``import`` statement of a module (those inside functions too),
    relative or absolute, that names a module of this package; ``from P import n`` counts
    ``P/n.py`` when ``n`` is a submodule, else ``P``'s ``__init__.py``. A parent package's
    ``__init__`` is not counted for importing a submodule: Python runs it, but what it imports
    does not decide the submodule's results. Imports made with ``importlib`` by name are not
    seen; the parts of a job's identity list such modules as entries of their own.

    Raises:
        OSError: a file cannot be read.
        SyntaxError: a file of the package does not parse.
    """
    todo = sorted(p.relative_to(PACKAGE_DIR).as_posix() for p in _files(PACKAGE_DIR / e for e in entries)
                  if p.suffix == ".py")
    seen: set[str] = set()
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        todo.extend(_imports(rel))
    return frozenset(seen)


@functools.lru_cache(maxsize=None)
def _imports(rel: str) -> tuple[str, ...]:
    """The package files module ``rel`` imports (one level); parsed once per process (the
    parts of the code identity share most of their files)."""
    path = PACKAGE_DIR / rel
    package = rel.split("/")[:-1]  # the module's package, as folder names under the package folder
    found: list[str] = []
    for node in _statements(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == PACKAGE_DIR.name:
                    found += _module_file(parts[1:])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level > 1 else list(package)
            elif (node.module or "").split(".")[0] == PACKAGE_DIR.name:
                base = []
            else:
                continue
            module = (node.module or "").split(".")
            if not node.level:
                module = module[1:]
            module = [m for m in module if m]
            for alias in node.names:
                sub = _module_file([*base, *module, alias.name])
                found += sub or _module_file([*base, *module])
    return tuple(found)


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.AST) -> list[ast.AST]:
    """Every statement of a module, nested ones included (an import is a statement, so
    expressions are not walked: the identity of a large package is computed in a fraction of
    ``ast.walk``'s time)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        for field in _BODIES:
            todo.extend(getattr(node, field, ()) or ())
    return out


def _module_file(parts: list[str]) -> list[str]:
    """The file of module ``parts`` (names under the package folder): ``a/b.py`` or
    ``a/b/__init__.py``; [] when there is none."""
    if not parts:
        return ["__init__.py"]
    for rel in ("/".join(parts) + ".py", "/".join(parts) + "/__init__.py"):
        if (PACKAGE_DIR / rel).is_file():
            return [rel]
    return []
