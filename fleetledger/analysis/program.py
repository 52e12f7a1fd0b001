"""The analysed program: its modules, functions and classes, how names resolve across them,
and the function summaries the engine computes on demand.

A ``Program`` starts from one file (the file being scanned) and loads the modules of the same
repository that it imports, lazily and within a budget, through a ``loader`` that only reads
files the caller allows (the policy decides). Module names come from paths as Python's import
system finds them (``module_index``: ``src/shop/views.py`` is ``shop.views`` when ``src`` is not
a package), and an import resolves to the module of that name.

Summaries are computed the first time a call needs one (``summary``), by interpreting the
function with its parameters bound to parameter labels (``interp``); a recursive call met
while its own summary is being computed sees an incomplete summary (the call's result then
carries every argument), which is the usual bottom-up approximation for recursion.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .catalog import Catalog, Handler
from .facts import Evidence, EVIDENCE_RANK, Flow, Misuse, Site, Summary
from .values import Label, Value

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda

MAX_MODULES = 64
"""Modules a program loads besides its root file."""


class BudgetExceeded(Exception):
    """The analysis of a file used up its work budget; what was not analysed is reported."""


@dataclass
class Budget:
    """A deterministic work budget: units are statements and expressions evaluated. Counted,
    never timed, so a file is cut at the same point on any machine (replay depends on it).

    Attributes:
        limit: Units allowed.
        used: Units spent so far; it stops at ``limit`` (nothing is spent past it).
        exhausted: True once a spend was refused.
    """

    limit: int
    used: int = 0
    exhausted: bool = False

    def spend(self, units: int = 1) -> None:
        """Spends ``units``, or none when that would pass the limit.

        Raises:
            BudgetExceeded: the budget is used up (the work must stop; what it did not finish
                is reported by the caller).
        """
        if self.used + units > self.limit:
            self.used = self.limit
            self.exhausted = True
            raise BudgetExceeded(f"work budget of {self.limit} units used up")
        self.used += units


@dataclass(eq=False)
class FunctionInfo:
    """A function, method or lambda of the analysed code.

    Attributes:
        id: Unique id, ``"<module>:<qualname>@<line>"``.
        name: Its name (``"<lambda>"`` for a lambda).
        qualname: Dotted name inside its module (``"View.get"``).
        node: Its syntax node.
        module: The module that defines it.
        cls: The class whose body defines it, or None.
        nested: True when defined inside another function.
        params: Parameter nodes in call order (positional-only, positional, ``*args``,
            keyword-only, ``**kwargs``).
        closure: The enclosing function's variables when it was defined (nested functions).
    """

    id: str
    name: str
    qualname: str
    node: FunctionNode
    module: ModuleInfo
    cls: ClassInfo | None
    nested: bool
    params: list[ast.arg]
    closure: dict[str, Value] | None = None
    _names: tuple[frozenset[str], frozenset[str]] | None = None

    def names(self) -> tuple[frozenset[str], frozenset[str]]:
        """The names the function assigns, and those it declares ``global`` (computed once)."""
        if self._names is None:
            assigned = {n.id for n in ast.walk(self.node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            declared = {name for n in ast.walk(self.node) if isinstance(n, ast.Global) for name in n.names}
            self._names = (frozenset(assigned), frozenset(declared))
        return self._names

    @property
    def decorators(self) -> list[ast.expr]:
        """The decorator expressions (none for a lambda)."""
        return [] if isinstance(self.node, ast.Lambda) else list(self.node.decorator_list)

    @property
    def is_static(self) -> bool:
        """True for a ``@staticmethod``."""
        return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in self.decorators)

    @property
    def bound(self) -> bool:
        """True when the first parameter is the instance or class (a method, not static)."""
        return self.cls is not None and not self.is_static and bool(self.params)

    @property
    def public(self) -> bool:
        """True for a function a library's users may call: not nested, not a lambda, its name
        and its class's name not private (dunder methods count as public)."""
        if self.nested or isinstance(self.node, ast.Lambda):
            return False
        private = self.name.startswith("_") and not (self.name.startswith("__") and self.name.endswith("__"))
        return not private and not (self.cls is not None and self.cls.name.startswith("_"))


@dataclass(eq=False)
class ClassInfo:
    """A class of the analysed code.

    Attributes:
        id: Its type name, ``"<module>.<qualname>"``.
        name: Its name.
        node: Its syntax node.
        module: The module that defines it.
        bases: Its bases as resolved names (local class ids or library qualified names).
        methods: Method name -> function id.
        attributes: Class-body assignments: name -> value.
    """

    id: str
    name: str
    node: ast.ClassDef
    module: ModuleInfo
    bases: list[str] = field(default_factory=list)
    methods: dict[str, str] = field(default_factory=dict)
    attributes: dict[str, Value] = field(default_factory=dict)


@dataclass(eq=False)
class ModuleInfo:
    """A module of the analysed code.

    Attributes:
        name: Its dotted name.
        path: Its repository-relative path.
        tree: Its syntax tree.
        is_package: True for an ``__init__.py``.
        functions: Function id -> function, every def and lambda in the module.
        classes: Class id -> class.
        by_node: Syntax node -> function id or class id.
        globals: The module's variables after its body ran (filled by the engine).
        imported: Module prefixes the module imports (``"django"``, ``"flask"``).
        star_imports: Modules it imports everything from (``from Crypto.Cipher import *``).
        analysed: True once the module body has been interpreted.
    """

    name: str
    path: str
    tree: ast.Module
    is_package: bool
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    by_node: dict[ast.AST, str] = field(default_factory=dict)
    globals: dict[str, Value] = field(default_factory=dict)
    imported: set[str] = field(default_factory=set)
    star_imports: list[str] = field(default_factory=list)
    analysed: bool = False

    def package(self) -> str:
        """Returns the package a relative import starts from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def module_name(path: str) -> tuple[str, bool]:
    """Returns the dotted module name of a repository-relative ``.py`` path, and whether it is
    a package's ``__init__``."""
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    package = parts[-1] == "__init__"
    if package:
        parts = parts[:-1]
    return ".".join(p for p in parts if p) or "__init__", package


@functools.lru_cache(maxsize=4)
def module_index(paths: tuple[str, ...]) -> tuple[dict[str, str], dict[str, str]]:
    """Maps import names to paths, the way Python finds modules when the folders that are not
    packages are on ``sys.path`` (``src/shop/views.py`` with ``src`` not a package and ``shop``
    one is ``shop.views``); each file's full dotted path is registered too (namespace
    packages). Computed once per set of paths.

    Returns:
        ``(import name -> path, path -> its shortest import name)``.
    """
    packages = {path.rpartition("/")[0] for path in paths if path.rpartition("/")[2] == "__init__.py"}
    index: dict[str, str] = {}
    for path in paths:
        full, _ = module_name(path)
        index.setdefault(full, path)
        folders = path.split("/")[:-1]
        keep = len(folders)
        while keep > 0 and "/".join(folders[:keep]) in packages:
            keep -= 1
        if keep:
            short, _ = module_name("/".join(path.split("/")[keep:]))
            index.setdefault(short, path)
    names: dict[str, str] = {}
    for name, path in index.items():
        if path not in names or len(name) < len(names[path]):
            names[path] = name
    return index, names


Loader = Callable[[str], "tuple[str, ast.Module] | None"]
"""Given a repository-relative path, returns ``(path, tree)`` or None when the file may not or
cannot be read (the caller's policy and parser decide)."""


class Program:
    """The modules reachable from one root file, and their summaries.

    Args:
        catalog: The library models.
        paths: Repository-relative paths of the Python files the program may load.
        loader: Reads and parses one of ``paths``.
        budget: The work budget shared by everything the program analyses.
    """

    def __init__(self, catalog: Catalog, paths: list[str], loader: Loader, budget: Budget,
                 shas: Mapping[str, str] | None = None) -> None:
        self.catalog = catalog
        self.shas = shas
        self.scope = _scope(catalog, shas) if shas is not None else None
        self.stack: list[str] = []
        self.unstable: set[str] = set()
        self.loader = loader
        self.budget = budget
        self.modules: dict[str, ModuleInfo] = {}
        self.functions: dict[str, FunctionInfo] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.summaries: dict[str, Summary] = {}
        self.in_progress: set[str] = set()
        self.flows: dict[tuple[str, int, int, str, str], list[Flow]] = {}
        self.misuses: dict[tuple[str, int, int, str], Misuse] = {}
        self.evidence: dict[tuple[str, int, int, str], Evidence] = {}
        self.cut_short: list[str] = []
        self.escaped: dict[tuple[str, int, int], list[str]] = {}
        self.read: set[str] = set()
        self.callers: dict[str, int] = {}
        self._by_name, self._names = module_index(tuple(sorted(paths)))
        self._failed: set[str] = set()
        self.root = ""  # the path of the file being analysed (the first module added)
        self.template_finder: Callable[[str], tuple[str, str] | None] | None = None
        self._templates: dict[str, tuple[str, list[Any]] | None] = {}

    # -- modules -------------------------------------------------------------------------

    def add_module(self, path: str, tree: ast.Module) -> ModuleInfo:
        """Indexes a parsed module (its defs, classes and imports) and returns it."""
        name, package = module_name(path)
        name = self._names.get(path, name)  # the import name, not the folder path
        module = ModuleInfo(name=name, path=path, tree=tree, is_package=package)
        self.root = self.root or path
        self.modules[name] = module
        self.read.add(path)
        _index(module)
        self.functions.update(module.functions)
        self.classes.update(module.classes)
        return module

    def find_module(self, dotted: str) -> ModuleInfo | None:
        """Returns the loaded or loadable module whose import name is ``dotted``
        (``module_index``), or None."""
        if dotted in self.modules:
            return self.modules[dotted]
        path = self._by_name.get(dotted)
        if path is None or path in self._failed:
            return None
        for module in self.modules.values():
            if module.path == path:
                return module
        if len(self.modules) > MAX_MODULES:
            self.note(f"{dotted}: not loaded (more than {MAX_MODULES} modules)")
            self._failed.add(path)
            return None
        key = self.shared_module_key(path)
        shared = _SHARED_MODULES.get(key) if key is not None else None
        if shared is not None:
            return self._adopt(shared)
        loaded = self.loader(path)
        if loaded is None:
            self._failed.add(path)
            return None
        module = self.add_module(*loaded)
        if key is not None:
            from . import interp

            interp.run_module(self, module)
            if len(_SHARED_MODULES) >= MAX_SHARED_MODULES:
                _SHARED_MODULES.clear()
            _SHARED_MODULES[key] = module
        return module

    def shared_module_key(self, path: str) -> tuple[str, str, str] | None:
        """The key under which an imported module, indexed and with its body interpreted, is
        shared with other analyses of the same scope, or None."""
        sha = self.shas.get(path) if self.shas is not None else None
        return None if self.scope is None or sha is None else (self.scope, path, sha)

    def _adopt(self, module: ModuleInfo) -> ModuleInfo:
        """Makes a module another analysis of this scope loaded (and interpreted) part of this
        program: its functions and classes become resolvable here."""
        self.modules[module.name] = module
        self.read.add(module.path)
        self.functions.update(module.functions)
        self.classes.update(module.classes)
        return module

    def resolve(self, qualified: str) -> tuple[str, str] | None:
        """Resolves a qualified name to a definition of the analysed code.

        Args:
            qualified: e.g. ``"shop.db.run_query"`` or ``"shop.models.Order"``.

        Returns:
            ``("function", id)``, ``("class", id)``, ``("module", name)`` or None when the name
            is not defined in the analysed code (a library's, then).
        """
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

    def _member(self, module: ModuleInfo, rest: list[str]) -> tuple[str, str] | None:
        from . import interp

        interp.run_module(self, module)
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

    def find_template(self, name: str) -> tuple[str, list[Any]] | None:
        """The repository's template file of a name (``"blog/post.html"``) and its unescaped
        variable writes (``templates.unescaped``), or None when it is not found or may not be
        read."""
        from . import templates

        if name not in self._templates:
            found = self.template_finder(name) if self.template_finder is not None else None
            self._templates[name] = (found[0], templates.unescaped(found[1])) if found is not None else None
            if found is not None:
                self.read.add(found[0])
        return self._templates[name]

    def shared_key(self, function: FunctionInfo) -> tuple[str, ...] | None:
        """The key under which the function's summary may be shared with other analyses of the
        same scope, or None (no scope, or its module's hash is unknown)."""
        if self.scope is None or self.shas is None:
            return None
        sha = self.shas.get(function.module.path)
        return None if sha is None else (self.scope, function.id, sha)

    # -- classes -------------------------------------------------------------------------

    def class_mro(self, class_id: str) -> list[str]:
        """Returns the class, its local bases and then every library base, nearest first."""
        out: list[str] = []
        todo = [class_id]
        while todo:
            current = todo.pop(0)
            if current in out or len(out) > 32:
                continue
            out.append(current)
            info = self.classes.get(current)
            if info is not None:
                todo.extend(info.bases)
            else:
                todo.extend(self.catalog.bases.get(current, ()))
        return out

    def method(self, class_id: str, name: str) -> str | None:
        """Returns the function id of ``name`` as the class or its local bases define it."""
        for current in self.class_mro(class_id):
            info = self.classes.get(current)
            if info is not None and name in info.methods:
                return info.methods[name]
        return None

    # -- results -------------------------------------------------------------------------

    def report(self, flow: Flow) -> None:
        """Records a flow; at most three per sink site, kind and origin kind are kept."""
        key = (flow.site.path, flow.site.line, flow.site.col, flow.kind, flow.role)
        kept = self.flows.setdefault(key, [])
        if any(f.label.key == flow.label.key for f in kept) or len(kept) >= 3:
            return
        kept.append(flow)

    def report_misuse(self, misuse: Misuse) -> None:
        """Records an API misuse (once per site and kind)."""
        self.misuses.setdefault((misuse.site.path, misuse.site.line, misuse.site.col, misuse.kind), misuse)

    def record_evidence(self, evidence: Evidence) -> None:
        """Keeps, per sink site and kind, the worst evidence seen."""
        key = (evidence.site.path, evidence.site.line, evidence.site.col, evidence.kind)
        old = self.evidence.get(key)
        if old is None or EVIDENCE_RANK[evidence.state] > EVIDENCE_RANK[old.state]:
            self.evidence[key] = evidence

    def escape(self, label: Label, how: str) -> None:
        """Records that a weak random number (``label``) left what the engine follows."""
        kept = self.escaped.setdefault((label.path, label.line, label.col), [])
        if how not in kept and len(kept) < 3:
            kept.append(how)

    def note(self, text: str) -> None:
        """Records something that was not analysed, with the reason."""
        if text not in self.cut_short and len(self.cut_short) < 50:
            self.cut_short.append(text)

    # -- handlers ------------------------------------------------------------------------

    def handler_of(self, function: FunctionInfo) -> Handler | None:
        """Returns the framework handler model that makes ``function`` an entry point."""
        from . import entries

        return entries.handler_of(self, function)


_SCOPES: dict[int, tuple[Mapping[str, str], str]] = {}
_SHARED_MODULES: dict[tuple[str, str, str], ModuleInfo] = {}
MAX_SHARED_MODULES = 2_000
"""Imported modules (indexed, their bodies interpreted) shared by the analyses of one worker
process, keyed by scope, path and content hash. The file being analysed is never taken from
here: its own analysis runs afresh, so that what it reports is complete."""


def _scope(catalog: Catalog, shas: Mapping[str, str]) -> str:
    """A digest of the files an analysis may read (paths and hashes) and of the models."""
    import hashlib

    known = _SCOPES.get(id(shas))
    if known is not None and known[0] is shas:
        return known[1]
    digest = hashlib.sha256(repr((id(catalog), sorted(shas.items()))).encode()).hexdigest()
    _SCOPES.clear()
    _SCOPES[id(shas)] = (shas, digest)
    return digest


def _index(module: ModuleInfo) -> None:
    """Finds every def, lambda and class of a module, with qualified names, iteratively."""
    stack: list[tuple[ast.AST, str, ClassInfo | None, bool]] = [(module.tree, "", None, False)]
    while stack:
        node, prefix, cls, nested = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}{child.name}"
                fid = f"{module.name}:{qual}@{child.lineno}"
                owner = cls if isinstance(node, ast.ClassDef) else None
                info = FunctionInfo(id=fid, name=child.name, qualname=qual, node=child, module=module, cls=owner,
                                    nested=nested, params=_params(child))
                module.functions[fid] = info
                module.by_node[child] = fid
                if owner is not None:
                    owner.methods[child.name] = fid
                stack.append((child, f"{qual}.", None, True))
            elif isinstance(child, ast.Lambda):
                fid = f"{module.name}:{prefix}<lambda>@{child.lineno}:{child.col_offset}"
                info = FunctionInfo(id=fid, name="<lambda>", qualname=f"{prefix}<lambda>", node=child, module=module,
                                    cls=None, nested=True, params=_params(child))
                module.functions[fid] = info
                module.by_node[child] = fid
                stack.append((child, prefix, None, True))
            elif isinstance(child, ast.ClassDef):
                qual = f"{prefix}{child.name}"
                cid = f"{module.name}.{qual}"
                info_c = ClassInfo(id=cid, name=child.name, node=child, module=module)
                module.classes[cid] = info_c
                module.by_node[child] = cid
                stack.append((child, f"{qual}.", info_c, nested))
            else:
                stack.append((child, prefix, cls, nested))


def _params(node: FunctionNode) -> list[ast.arg]:
    args = node.args
    out = [*args.posonlyargs, *args.args]
    if args.vararg:
        out.append(args.vararg)
    out.extend(args.kwonlyargs)
    if args.kwarg:
        out.append(args.kwarg)
    return out


def site_of(node: ast.AST, path: str, scope: str) -> Site:
    """Returns the span of a node as a ``Site``."""
    line = getattr(node, "lineno", 1)
    col = getattr(node, "col_offset", 0)
    return Site(path=path, line=line, col=col, end_line=getattr(node, "end_lineno", None) or line,
                end_col=getattr(node, "end_col_offset", None) or col, scope=scope)


def iter_functions(module: ModuleInfo) -> Iterator[FunctionInfo]:
    """Yields the module's functions in source order."""
    yield from sorted(module.functions.values(), key=lambda f: (f.node.lineno, f.node.col_offset))
