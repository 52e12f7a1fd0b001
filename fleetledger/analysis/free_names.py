"""Names a file reads but binds nowhere: values whoever runs the code supplies.

A name that no statement of the file binds (no assignment, ``def``, ``class``, parameter,
import, ``except ... as``, ``with ... as``, ``for`` target, ``match`` capture, ``global``) and
that is not a builtin can only come from outside the code the scan sees: a snippet pasted
into a larger program, a module run with ``exec(code, {"user_input": ...})``, a name the
embedding application injects. The analysis cannot see its value, and it treats it as it
treats a public function's parameter (``engine._api``): its caller decides what it holds, so
what reaches a sink from it is a weakness wherever that caller passes outside data (channel
``"api"``, reported as uncertain). Unlike a value of unknown origin inside the code (the result
of a function the models do not describe), nothing in the file chose it.

Only a name read as data is free: one the file reads an attribute of (``os.environ``,
``sql.Identifier``), calls (``get_input()``), decorates with, derives a class from or names as a
type (an annotation, the exception a handler catches) is a module, class or function it forgot
to import, not a value it was handed.

The reading is lexical and whole-file (every scope counts as binding), so a name defined
anywhere in the file is never free, whatever the engine's scoping makes of it. A file that may
bind names the syntax does not show is left out altogether: one with a ``from m import *``,
or one that reads ``globals()``, ``vars()``, ``locals()`` or ``__builtins__`` (which can
create names), or calls ``exec``. Python 2's builtins and the names the import system gives
every module (``__file__``, ``__path__``) are never free either.
"""

from __future__ import annotations

import ast
import builtins

from .facts import Site
from .values import Label, Value, of_labels
from .walks import child_nodes, walk

_PY2_BUILTINS = frozenset({
    "basestring", "unicode", "long", "xrange", "raw_input", "unichr", "execfile", "file", "reduce", "reload",
    "cmp", "buffer", "apply", "intern", "coerce", "StandardError", "WindowsError"})
_NEVER_FREE = frozenset(dir(builtins)) | _PY2_BUILTINS
_NAME_CREATORS = frozenset({"globals", "vars", "locals", "exec", "__builtins__", "execfile"})
_UNBOUND = "no code of"
_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_CAPTURES = frozenset({getattr(ast, kind) for kind in ("MatchAs", "MatchStar", "MatchMapping", "TypeVar", "ParamSpec",
                                                       "TypeVarTuple") if hasattr(ast, kind)})


def bound_names(tree: ast.Module) -> frozenset[str] | None:
    """Every name some statement of the module binds, in any scope, and every name it reads an
    attribute of or calls; None when the module may bind names its syntax does not show (a star
    import, ``globals()``, ``exec``: see the module docstring).

    Args:
        tree: The module's syntax tree.

    Returns:
        The bound names, or None.
    """
    names: set[str] = set()
    types: list[ast.expr | None] = []
    for node in walk(tree):
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:
                names.add(node.id)
            elif node.id in _NAME_CREATORS:
                return None
        elif kind is ast.Attribute or kind is ast.Call:
            used = node.value if kind is ast.Attribute else node.func
            if type(used) is ast.Name:
                names.add(used.id)  # a namespace or a callable: a missing import, not data (docstring)
        elif kind is ast.arg:
            names.add(node.arg)
            types.append(node.annotation)
        elif kind is ast.alias:
            if node.name == "*":
                return None
            names.add(node.asname or node.name.partition(".")[0])
        elif kind in _DEFINITIONS:
            names.add(node.name)
            # a decorator is called, a base class is a class: neither is data
            names.update(n.id for n in [*node.decorator_list, *getattr(node, "bases", ())] if type(n) is ast.Name)
            types.append(getattr(node, "returns", None))
        elif kind is ast.Global or kind is ast.Nonlocal:
            names.update(node.names)
        elif kind is ast.ExceptHandler:
            types.append(node.type)  # the exceptions a handler catches are types
            if node.name:
                names.add(node.name)
        elif kind is ast.AnnAssign:
            types.append(node.annotation)
        elif kind in _CAPTURES:  # ``case P(x=px)``, ``case [*rest]``, ``case {**rest}``, PEP 695 type parameters
            bound = getattr(node, "rest" if kind is ast.MatchMapping else "name")
            if bound:
                names.add(bound)
    for typed in types:
        if typed is not None:
            names.update(n.id for n in walk(typed) if type(n) is ast.Name)
    return frozenset(names)


def scope_bindings(body: list[ast.stmt]) -> set[str]:
    """The names a module's or class's body binds in its own scope: definitions, imports (their
    first part) and every name stored outside nested functions, classes and lambdas, in any
    branch (a comprehension's variables too: a superset, which is what the callers need)."""
    names: set[str] = set()
    pending: list[ast.AST] = list(body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        pending.extend(child_nodes(node))
    return names


def free_value(name: str, bound: frozenset[str] | None, site: Site) -> Value | None:
    """The value a read of ``name`` gives when the file binds it nowhere: of the ``"api"``
    channel, its origin the name itself; None when the name is bound, a builtin, a module's
    own dunder name, or the file may bind names unseen (``bound`` None).

    Args:
        name: The name read.
        bound: ``bound_names`` of the file that reads it.
        site: Where the name is read.
    """
    if bound is None or name in bound or name in _NEVER_FREE or (name.startswith("__") and name.endswith("__")):
        return None
    what = f"the name {name!r}, which {_UNBOUND} {site.path} binds (the program running it supplies it)"
    return of_labels([Label(channel="api", what=what, path=site.path, line=site.line, col=site.col)])


def free_source(what: str) -> bool:
    """True when a source's description (``Label.what``) is one ``free_value`` wrote."""
    return what.startswith("the name ") and f"which {_UNBOUND} " in what
