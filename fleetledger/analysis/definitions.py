"""The analysed code's definitions: its modules, functions and classes as indexed from their
syntax trees, and the import names modules get from their paths.

Module names come from paths as Python's import system finds them (``module_index``:
``src/shop/views.py`` is ``shop.views`` when ``src`` is not a package); ``index`` finds every
def, lambda and class of a module, with qualified names.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field

from .dependencies import Dependencies
from .free_names import bound_names, scope_bindings
from .values import Value
from .walks import child_nodes, walk

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


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
        generator: True when its own body (not a nested definition's) holds ``yield`` or ``yield
            from``: a call of it returns an iterator of what it yields (set by ``index``).
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
    _called: frozenset[str] | None = None
    _rebound: frozenset[str] | None = None
    _assignments: dict[str, list[tuple[int, ast.expr]]] | None = None
    _self_calls: frozenset[str] | None = None
    generator: bool = False

    def self_calls(self) -> frozenset[str]:
        """The names of the methods a method calls on its own instance (``self.name(...)``;
        computed once; empty for a function that is not bound)."""
        if self._self_calls is None:
            self._scan()
        assert self._self_calls is not None
        return self._self_calls

    def called_parameters(self) -> frozenset[str]:
        """The names of its parameters it calls (``f(x)`` for a parameter ``f``; computed once)."""
        if self._called is None:
            self._scan()
        assert self._called is not None
        return self._called

    def names(self) -> tuple[frozenset[str], frozenset[str]]:
        """The names the function assigns, and those it declares ``global`` (computed once)."""
        if self._names is None:
            self._scan()
        assert self._names is not None
        return self._names

    def rebound(self) -> frozenset[str]:
        """The names the function binds other than by ``+=`` and its kind (computed once): a
        parameter not among them still names the caller's object (``mutations``)."""
        if self._rebound is None:
            self._scan()
        assert self._rebound is not None
        return self._rebound

    def _scan(self) -> None:
        """Reads what ``self_calls``, ``called_parameters``, ``names`` and ``rebound`` answer in
        one walk of the function's syntax (nested definitions included, as Python's scoping of
        ``global`` and of the names a nested function assigns does not matter to them)."""
        receiver = self.params[0].arg if self.bound else None
        parameters = {param.arg for param in self.params}
        self_calls: set[str] = set()
        called: set[str] = set()
        stores: list[ast.Name] = []
        declared: set[str] = set()
        augmented: set[int] = set()
        for n in walk(self.node):
            if isinstance(n, ast.Name):
                if isinstance(n.ctx, ast.Store):
                    stores.append(n)
            elif isinstance(n, ast.Call):
                func = n.func
                if isinstance(func, ast.Name) and func.id in parameters:
                    called.add(func.id)
                elif (receiver is not None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                      and func.value.id == receiver):
                    self_calls.add(func.attr)
            elif isinstance(n, ast.AugAssign):
                augmented.add(id(n.target))
            elif isinstance(n, ast.Global):
                declared.update(n.names)
        self._self_calls, self._called = frozenset(self_calls), frozenset(called)
        self._names = (frozenset(n.id for n in stores), frozenset(declared))
        self._rebound = frozenset(n.id for n in stores if id(n) not in augmented)

    @property
    def decorators(self) -> list[ast.expr]:
        """The decorator expressions (none for a lambda)."""
        return [] if isinstance(self.node, ast.Lambda) else list(self.node.decorator_list)

    @property
    def is_static(self) -> bool:
        """True for a ``@staticmethod``."""
        return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in self.decorators)

    @property
    def is_property(self) -> bool:
        """True for a method decorated ``@property`` or ``@functools.cached_property``: reading
        the attribute on an instance calls it."""
        return self.cls is not None and any(
            (isinstance(d, ast.Name) and d.id in ("property", "cached_property"))
            or (isinstance(d, ast.Attribute) and d.attr == "cached_property") for d in self.decorators)

    def assignments(self) -> dict[str, list[tuple[int, ast.expr]]]:
        """``assignments_in`` its body (computed once)."""
        if self._assignments is None:
            self._assignments = assignments_in(self.node)
        return self._assignments

    @property
    def is_classmethod(self) -> bool:
        """True for a ``@classmethod``: its first parameter is the class it is called on."""
        return self.cls is not None and any(isinstance(d, ast.Name) and d.id == "classmethod" for d in self.decorators)

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


def assignments_in(node: ast.AST) -> dict[str, list[tuple[int, ast.expr]]]:
    """The values assigned to plain names (``x = ...``, ``x: T = ...``) under ``node``: name ->
    ``(line, value)`` in line order."""
    found: dict[str, list[tuple[int, ast.expr]]] = {}
    for child in walk(node):
        if isinstance(child, ast.Assign):
            targets, value = child.targets, child.value
        elif isinstance(child, ast.AnnAssign) and child.value is not None:
            targets, value = [child.target], child.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                found.setdefault(target.id, []).append((child.lineno, value))
    for entries in found.values():
        entries.sort(key=lambda entry: entry[0])
    return found


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
        deps: What loading it and interpreting its body depended on (``dependencies``).
        constructions: Its calls of its classes' names by name, each with the function making
            it (``passed_types``), indexed on first use; shared with the module.
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
    deps: Dependencies = field(default_factory=Dependencies)
    constructions: dict[str, list[tuple[ast.Call, FunctionInfo | None]]] | None = None

    def package(self) -> str:
        """Returns the package a relative import starts from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]

    @functools.cached_property
    def bound_names(self) -> frozenset[str] | None:
        """``free_names.bound_names`` of its tree (computed once)."""
        return bound_names(self.tree)

    @functools.cached_property
    def tree_globals(self) -> frozenset[str]:
        """The names the module's body assigns at its top level (outside functions and
        classes, in any branch): its global variables, definitions and imports."""
        return frozenset(scope_bindings(self.tree.body))


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
    one is ``shop.views``); each file's full dotted path is registered too, and the names it
    has below each folder above its package when only that file has the name (namespace
    packages, PEP 420: ``src/airflow/providers/common/sql/hooks/sql.py``, with ``sql`` the
    first regular package, is ``airflow.providers.common.sql.hooks.sql`` with ``src`` on
    ``sys.path``). Computed once per set of paths.

    Returns:
        ``(import name -> path, path -> its shortest import name)``.
    """
    packages = {path.rpartition("/")[0] for path in paths if path.rpartition("/")[2] == "__init__.py"}
    index: dict[str, str] = {}
    between: dict[str, set[str]] = {}
    for path in paths:
        full, _ = module_name(path)
        index.setdefault(full, path)
        parts = path.split("/")
        keep = len(parts) - 1
        while keep > 0 and "/".join(parts[:keep]) in packages:
            keep -= 1
        if keep:
            short, _ = module_name("/".join(parts[keep:]))
            index.setdefault(short, path)
        for start in range(1, keep):  # below a folder on sys.path, namespace packages (PEP 420)
            between.setdefault(module_name("/".join(parts[start:]))[0], set()).add(path)
    for name, found in sorted(between.items()):
        if len(found) == 1:  # a name two files could have is neither's
            index.setdefault(name, found.pop())
    names: dict[str, str] = {}
    for name, path in index.items():
        if path not in names or len(name) < len(names[path]):
            names[path] = name
    return index, names


@functools.lru_cache(maxsize=4)
def top_names(paths: tuple[str, ...]) -> frozenset[str]:
    """The first part of every import name ``module_index`` gives these paths (``"shop"`` for
    ``shop.views``, also where ``shop`` is a namespace package): a qualified name that starts
    with none of them is no module of the analysed code's."""
    return frozenset(name.partition(".")[0] for name in module_index(paths)[0])


def index(module: ModuleInfo) -> None:
    """Finds every def, lambda and class of a module, with qualified names, iteratively, and
    marks the functions whose own body yields (``FunctionInfo.generator``)."""
    stack: list[tuple[ast.AST, str, ClassInfo | None, bool, FunctionInfo | None]] = [
        (module.tree, "", None, False, None)]
    while stack:
        node, prefix, cls, nested, function = stack.pop()
        for child in child_nodes(node):
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
                stack.append((child, f"{qual}.", None, True, info))
            elif isinstance(child, ast.Lambda):
                fid = f"{module.name}:{prefix}<lambda>@{child.lineno}:{child.col_offset}"
                info = FunctionInfo(id=fid, name="<lambda>", qualname=f"{prefix}<lambda>", node=child, module=module,
                                    cls=None, nested=True, params=_params(child))
                module.functions[fid] = info
                module.by_node[child] = fid
                stack.append((child, prefix, None, True, info))
            elif isinstance(child, ast.ClassDef):
                qual = f"{prefix}{child.name}"
                cid = f"{module.name}.{qual}"
                info_c = ClassInfo(id=cid, name=child.name, node=child, module=module)
                module.classes[cid] = info_c
                module.by_node[child] = cid
                stack.append((child, f"{qual}.", info_c, nested, None))
            else:
                if function is not None and isinstance(child, (ast.Yield, ast.YieldFrom)):
                    function.generator = True
                stack.append((child, prefix, cls, nested, function))


def _params(node: FunctionNode) -> list[ast.arg]:
    args = node.args
    out = [*args.posonlyargs, *args.args]
    if args.vararg:
        out.append(args.vararg)
    out.extend(args.kwonlyargs)
    if args.kwarg:
        out.append(args.kwarg)
    return out


def iter_functions(module: ModuleInfo) -> Iterator[FunctionInfo]:
    """Yields the module's functions in source order."""
    yield from sorted(module.functions.values(), key=lambda f: (f.node.lineno, f.node.col_offset))
