"""How a qualified name resolves: to a definition of the analysed code (``resolve``), or to
the library names a module of the code only re-exports (``library_aliases``).

Each answer is kept for the analysis with the lookups it made (asked at every use of a name,
it is worked out once), unless it was given from a state that changes while the analysis runs:
a name up the stack being resolved (a re-export cycle), or a module whose body is still being
interpreted (its globals so far).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .dependencies import Dependencies
from .values import Value

if TYPE_CHECKING:
    from .definitions import ClassInfo, ModuleInfo
    from .model_records import Catalog

MAX_REFS = 32
"""Library objects one value may stand for when an attribute is read from it or it is called.
A value that stands for more is read and called through the ``MAX_REFS`` shortest names: a loop that stores an object's
attributes on itself made a value stand for hundreds of names (``urlopen.headers.opener.url...``),
each read multiplying them (setuptools' ``package_index``)."""


class NameResolution:
    """Name resolution for ``Program`` (a mixin: it uses the program's ``find_module``,
    ``run``, ``depend``, ``tracking``, ``method``, ``catalog``, ``classes`` and ``running``)."""

    catalog: Catalog
    classes: dict[str, ClassInfo]
    running: list[str]

    def __init__(self) -> None:
        self.resolving: set[str] = set()  # names ``resolve`` is resolving (a re-export cycle ends)
        self._aliases: dict[str, tuple[list[str], Dependencies]] = {}
        self._resolved: dict[str, tuple[tuple[str, str] | None, Dependencies]] = {}
        self._partial_answers = 0  # answers given from a state that changes

    def library_refs(self, types: frozenset[str]) -> list[str]:
        """The library names a value with these types stands for (its ``=`` references,
        through ``library_aliases``), sorted; at most ``MAX_REFS``, the shortest kept."""
        refs = sorted({a for t in types if t.startswith("=") for a in self.library_aliases(t[1:])})
        return refs if len(refs) <= MAX_REFS else sorted(sorted(refs, key=lambda r: (r.count("."), r))[:MAX_REFS])

    def resolve(self, qualified: str) -> tuple[str, str] | None:
        """Resolves a qualified name to a definition of the analysed code.

        Args:
            qualified: e.g. ``"shop.db.run_query"`` or ``"shop.models.Order"``.

        Returns:
            ``("function", id)``, ``("class", id)``, ``("module", name)`` or None when the name
            is not defined in the analysed code (a library's, then).
        """
        if qualified in self.resolving or len(self.resolving) > 32:
            self._partial_answers += 1
            return None  # names that stand for each other (a re-export cycle): none is defined
        known = self._resolved.get(qualified)
        if known is not None:  # asked at every use of the name: answered once, its lookups kept
            self.depend(known[1])
            return known[0]
        partial = self._partial_answers
        self.resolving.add(qualified)
        try:
            with self.tracking() as deps:
                found = self._resolve(qualified)
        finally:
            self.resolving.discard(qualified)
        # Kept unless the answer came from a state that changes: a name up the stack being
        # resolved, or a module whose body is still being interpreted (its globals so far).
        if partial == self._partial_answers:
            self._resolved[qualified] = (found, deps)
        return found

    def _resolve(self, qualified: str) -> tuple[str, str] | None:
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            module = self.find_module(".".join(parts[:cut]))
            if module is None:
                continue
            rest = parts[cut:]
            if not rest:
                return ("module", module.name)
            return self._member(module, rest)
        return None

    def imported_name(self, module_name: str, name: str) -> Value | None:
        """What a module of the analysed code binds ``name`` to when that is a library object
        it imported (``import os`` in ``utility.py``): ``from utility import *`` binds it too,
        as Python binds every public name of a module without ``__all__``. None otherwise
        (a definition of the analysed code is found by ``resolve``)."""
        module = self.find_module(module_name)
        if module is None or name.startswith("_"):
            return None
        self.run(module)
        if "__all__" in module.globals:
            return None
        value = module.globals.get(name)
        return value if value is not None and value.types and all(t.startswith("=") for t in value.types) else None

    def module_container(self, qualified: str) -> Value | None:
        """The list, tuple, set or dict a module of the analysed code binds a top-level name
        to, built in its body (``commands = Command.__subclasses__()``, ``CHECKS = [a, b]``),
        for a loop over ``module.name`` in another module; None for anything else, or a
        module whose body is being interpreted (its globals so far). Loads and runs the
        module; the caller depends on it (``find_module``, ``run``)."""
        module_name, _, name = qualified.rpartition(".")
        if module_name.partition(".")[0] not in self.tops:
            return None
        module = self.find_module(module_name)
        if module is None or module.path in self.running:
            return None
        self.run(module)
        value = module.globals.get(name)
        return value if value is not None and value.items is not None and not value.types else None

    def library_aliases(self, qualified: str) -> list[str]:
        """The library names a name of the analysed code stands for, when a module of the code
        only re-exports them (``pkg.compat.etree`` for ``from lxml import etree`` in
        ``pkg/compat.py``, as ``from pkg.compat import etree`` then reads it; both where an
        ``except ImportError`` imports another); else ``[qualified]``. Resolved when the name
        is used, so no module is loaded for an import alone."""
        unaliased = self.catalog.unaliased(qualified)
        if unaliased != qualified:  # a compatibility layer's name for another library's
            return [unaliased]
        module_name, _, name = qualified.rpartition(".")
        if not module_name or self.catalog.knows(qualified):
            return [qualified]
        known = self._aliases.get(qualified)
        if known is not None:  # asked at every use of the name: answered once, its lookups kept
            self.depend(known[1])
            return known[0]
        transient = bool(self.resolving)  # a name being resolved up the stack is no definition, for now
        with self.tracking() as deps:
            module = self.find_module(module_name)
            transient = transient or module is not None and module.path in self.running
            found = self._library_aliases(qualified, module, name)
        if not transient:
            self._aliases[qualified] = (found, deps)
        return found

    def _library_aliases(self, qualified: str, module: ModuleInfo | None, name: str) -> list[str]:
        if module is None or module.path in self.running:
            return [qualified]
        self.run(module)
        value = module.globals.get(name)
        if value is None or value.functions or not value.types or len(value.types) > 4:
            return [qualified]
        targets = sorted(t[1:] for t in value.types if t.startswith("="))
        if len(targets) != len(value.types) or qualified in targets or any(
                self.resolve(target) is not None for target in targets):
            return [qualified]
        return targets

    def _member(self, module: ModuleInfo, rest: list[str]) -> tuple[str, str] | None:
        self.run(module)
        if module.path in self.running:
            self._partial_answers += 1
        value = module.globals.get(rest[0])
        if value is None:
            return self.resolve(f"{module.name}.{rest[0]}") if module.is_package and len(rest) > 1 else None
        for ref in value.types:
            if ref.startswith("=") and len(rest) == 1:
                target = ref[1:]
                if target != f"{module.name}.{rest[0]}":
                    return self.resolve(target)
        if len(rest) == 1:
            for fid in sorted(value.functions):
                return ("class", fid) if fid in self.classes else ("function", fid)
            return None
        for fid in sorted(value.functions):
            if fid in self.classes:
                method = self.method(fid, rest[1])
                if method is not None and len(rest) == 2:
                    return ("function", method)
        return None
