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

Hand-kept version constants (``ENGINE_VERSION``, read by ``detect_version()``, and
``ANALYST_VERSION``) change only when someone remembers to bump them; the source digests
change with every edit of the code they cover.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import sys
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
    _save_cache()
    return frozenset(seen)


@functools.lru_cache(maxsize=None)
def _imports(rel: str) -> tuple[str, ...]:
    """The package files module ``rel`` imports (one level); read once per process (the
    parts of the code identity share most of their files)."""
    path = PACKAGE_DIR / rel
    package = rel.split("/")[:-1]  # the module's package, as folder names under the package folder
    found: list[str] = []
    for level, module_name, names in _import_statements(path.read_bytes(), str(path)):
        if level < 0:  # ``import a.b, c``
            for name in names:
                parts = name.split(".")
                if parts[0] == PACKAGE_DIR.name:
                    found += _module_file(parts[1:])
            continue
        if level:
            base = package[:len(package) - (level - 1)] if level > 1 else list(package)
        elif module_name.split(".")[0] == PACKAGE_DIR.name:
            base = []
        else:
            continue
        module = module_name.split(".")
        if not level:
            module = module[1:]
        module = [m for m in module if m]
        for name in names:
            sub = _module_file([*base, *module, name])
            found += sub or _module_file([*base, *module])
    return tuple(found)


ImportStatement = tuple[int, str, tuple[str, ...]]
"""An import statement of a module: ``(-1, "", names)`` for ``import names``, ``(level,
module, names)`` for ``from module import names`` (``level``: the leading dots)."""

_STATEMENTS_FORMAT = 1


def _import_statements(source: bytes, filename: str) -> list[ImportStatement]:
    """The import statements of a module's source, nested ones included. Parsing is most of the
    cost of a code identity (a few hundred milliseconds for the package), so what a parse found
    is kept in the user's cache folder (``statements_cache``), keyed by the SHA-256 of the
    source and the Python version (which decides the parse); an entry that is not of the
    expected shape is parsed again."""
    key = hashlib.sha256(source + f"\0{sys.version_info[0]}.{sys.version_info[1]}".encode()).hexdigest()
    known = _cache().get(key)
    if isinstance(known, list) and all(_is_statement(s) for s in known):
        return [(s[0], s[1], tuple(s[2])) for s in known]
    found: list[ImportStatement] = []
    for node in _statements(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            found.append((-1, "", tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level or 0, node.module or "", tuple(alias.name for alias in node.names)))
    _cache()[key] = [[level, module, list(names)] for level, module, names in found]
    _CACHE_STATE["dirty"] = True
    return found


def _is_statement(s: object) -> bool:
    return (isinstance(s, list) and len(s) == 3 and isinstance(s[0], int) and isinstance(s[1], str)
            and isinstance(s[2], list) and all(isinstance(n, str) for n in s[2]))


_CACHE_STATE: dict[str, object] = {"entries": None, "dirty": False}


def statements_cache() -> Path:
    """The file that keeps the import statements found in the package's modules
    (``$XDG_CACHE_HOME/fleetledger/import-statements.json``)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "fleetledger" / "import-statements.json"


def _cache() -> dict[str, object]:
    entries = _CACHE_STATE["entries"]
    if entries is None:
        entries = {}
        try:
            body = json.loads(statements_cache().read_text(encoding="utf-8"))
            if isinstance(body, dict) and body.get("format") == _STATEMENTS_FORMAT and isinstance(body.get("entries"), dict):
                entries = body["entries"]
        except (OSError, ValueError):
            pass
        _CACHE_STATE["entries"] = entries
    assert isinstance(entries, dict)
    return entries


def _save_cache() -> None:
    """Writes the cache if a parse added to it (atomically; a cache that cannot be written
    only costs the next process its parses)."""
    if not _CACHE_STATE["dirty"]:
        return
    _CACHE_STATE["dirty"] = False
    path = statements_cache()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps({"format": _STATEMENTS_FORMAT, "entries": _cache()}), encoding="utf-8")
        os.replace(temp, path)
    except OSError:
        pass


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
