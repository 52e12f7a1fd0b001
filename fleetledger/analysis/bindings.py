"""Which definitions of a name can reach a use of it, and which checks stand in between.

A reaching-definitions query answered on the syntax tree rather than a control-flow graph
(the classic data-flow problem, e.g. Aho, Lam, Sethi and Ullman, *Compilers*, section 9.2):
from the statement that uses the name, walk backwards through earlier statements of the same
block, then out to the enclosing block and on, until a statement that certainly rebinds the
name. Compound statements passed on the way contribute the bindings they may make; a loop
also contributes bindings from later in its body (the back edge). Each binding records the
validation, if any, found between it and the use (``if x not in ALLOWED: abort()``, or being
inside ``if re.fullmatch(P, x):``): a check that precedes a rebinding does not protect the
new value. Names not bound in the function are looked up in enclosing functions and then at
module level, without regard to order (the function runs after the module is loaded).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from .guards import exits
from .tree import FunctionNode, SourceTree, walk_scope

GuardFor = Callable[[ast.expr, bool], "str | None"]


class Budget:
    """A deterministic bound on the work of one trace, counted in statements and steps.

    Args:
        units: How much work is allowed.
    """

    def __init__(self, units: int) -> None:
        self.remaining = units

    def spend(self, units: int = 1) -> bool:
        """Uses up ``units``; returns False once the budget is exhausted."""
        self.remaining -= units
        return self.remaining >= 0

_RELATIONS: dict[type[ast.AST], dict[str, str]] = {
    ast.If: {"body": "if-body", "orelse": "if-else"},
    ast.For: {"body": "loop-body", "orelse": "loop-else"},
    ast.AsyncFor: {"body": "loop-body", "orelse": "loop-else"},
    ast.While: {"body": "loop-body", "orelse": "loop-else"},
    ast.With: {"body": "with-body"},
    ast.AsyncWith: {"body": "with-body"},
    ast.Try: {"body": "try-body", "orelse": "try-else", "finalbody": "try-finally", "handlers": "try-handler"},
    ast.TryStar: {"body": "try-body", "orelse": "try-else", "finalbody": "try-finally", "handlers": "try-handler"},
    ast.ExceptHandler: {"body": "handler-body"},
    ast.match_case: {"body": "case-body"},
    ast.Match: {"cases": "match-case"},
}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module, ast.Lambda)
_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "appendleft", "extendleft", "setdefault"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_BUILTINS = frozenset(dir(builtins))
_UNBOUNDED = 1 << 62


@dataclass(frozen=True, kw_only=True)
class Binding:
    """One definition of a name that may reach a use.

    Attributes:
        kind: ``"value"`` (``node`` is the bound expression, or the iterable for a loop
            target), ``"parameter"`` (``node`` is the ``ast.arg``), ``"constant"`` (a
            function, class or builtin) or ``"unknown"`` (an import, a caught exception, an
            undefined name).
        node: The expression or argument, per ``kind``.
        owner: For a parameter, the function or lambda that declares it.
        detail: What the binding is, for rationales.
        guard: The validation between this binding and the use, if any.
    """

    kind: Literal["value", "parameter", "constant", "unknown"]
    node: ast.AST | None
    detail: str
    owner: FunctionNode | ast.Lambda | None = None
    guard: str | None = None


def reaching(tree: SourceTree, use: ast.Name, guard_for: GuardFor, budget: Budget | None = None) -> tuple[Binding, ...]:
    """Returns the bindings of ``use.id`` that may reach ``use``.

    Args:
        tree: The parsed file.
        use: A name being read.
        guard_for: ``guard_for(test, holds)`` describes the validation a condition gives the
            name for the sink at hand (see ``guards.validation``), or returns None.
        budget: Work allowance shared with the caller; one unit per statement walked past.

    Returns:
        The bindings, nearest first; never empty (an unresolvable name gives one ``unknown``,
        and so does a walk that runs out of budget).
    """
    name = use.id
    comprehension = _comprehension_bindings(tree, use, guard_for)
    if comprehension:
        return comprehension
    scope = tree.scope_of(use)
    if isinstance(scope, ast.Lambda):
        arg = _param(scope, name)
        if arg is not None:
            return (Binding(kind="parameter", node=arg, owner=scope, detail=f"parameter {name!r} of a lambda"),)
    stmt = tree.statement_of(use)
    if stmt is None:
        return (Binding(kind="unknown", node=None, detail=f"name {name!r}"),)
    walk = _BackwardWalk(tree=tree, name=name, guard_for=guard_for, budget=budget or Budget(_UNBOUNDED))
    walk.walrus_before(stmt, use)
    if not walk.definite:
        walk.run(stmt)
    if walk.exhausted:
        return (*walk.found, Binding(kind="unknown", node=None, detail=f"earlier values of {name!r} (too far back to trace)"))
    home = tree.scope_of(stmt)
    if walk.declared_global:
        return tuple(walk.found) + _outer(tree, tree.module, name, walk.guard)
    if walk.definite:
        return tuple(walk.found)
    if isinstance(home, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arg = _param(home, name)
        if arg is not None:
            walk.found.append(Binding(kind="parameter", node=arg, owner=home, guard=walk.guard,
                                      detail=f"parameter {name!r} of {home.name}()"))
            return tuple(walk.found)
    if isinstance(home, ast.Module) or not _is_local(tree, home, name):
        return tuple(walk.found) + _outer(tree, home, name, walk.guard)
    if walk.found:
        return tuple(walk.found)
    return (Binding(kind="unknown", node=None, detail=f"{name!r} before it is assigned"),)


def dominating_tests(tree: SourceTree, node: ast.AST) -> Iterator[tuple[ast.expr, bool]]:
    """Yields the conditions known to hold (or fail) whenever ``node`` runs in its function.

    Args:
        tree: The parsed file.
        node: The node whose dominating conditions are wanted.

    Yields:
        ``(test, holds)``: ``holds`` is True for an ``if`` whose body contains the node, False
        for one whose ``else`` does, and False for an earlier ``if`` in an enclosing block
        whose body always exits (``if bad: abort(400)``).
    """
    stmt = tree.statement_of(node)
    if stmt is None:
        return
    for item, relation in _walk_back(tree, stmt):
        if relation == "before" and isinstance(item, ast.If) and exits(item.body, tree):
            yield item.test, False
        elif relation == "if-body":
            yield item.test, True  # type: ignore[attr-defined]
        elif relation == "if-else":
            yield item.test, False  # type: ignore[attr-defined]


def single_value(tree: SourceTree, use: ast.Name) -> ast.expr | None:
    """Returns the one expression bound to a name where it is used, if exactly one reaches it.

    Args:
        tree: The parsed file.
        use: The name being read.

    Returns:
        The bound expression, or None when no binding, several, or a non-expression one
        (a parameter, an import) reaches the use.
    """
    found = reaching(tree, use, lambda test, holds: None)
    if len(found) == 1 and found[0].kind == "value" and isinstance(found[0].node, ast.expr):
        return found[0].node
    return None


class _BackwardWalk:
    """State of one reaching-definitions walk (see the module docstring)."""

    def __init__(self, *, tree: SourceTree, name: str, guard_for: GuardFor, budget: Budget) -> None:
        self.tree = tree
        self.name = name
        self.guard_for = guard_for
        self.budget = budget
        self.found: list[Binding] = []
        self.guard: str | None = None
        self.definite = False
        self.declared_global = False
        self.exhausted = False

    def note_guard(self, test: ast.expr, holds: bool) -> None:
        """Records the first validation met; it covers every binding found after it."""
        if self.guard is None:
            self.guard = self.guard_for(test, holds)

    def add(self, binding: Binding) -> None:
        """Records a binding under the validation met so far (between it and the use)."""
        self.found.append(Binding(kind=binding.kind, node=binding.node, detail=binding.detail,
                                  owner=binding.owner, guard=self.guard))

    def walrus_before(self, stmt: ast.stmt, use: ast.Name) -> None:
        """Records an ``name := ...`` earlier in the same statement as the use (a certain binding)."""
        for node in walk_scope(stmt):
            if (isinstance(node, ast.NamedExpr) and node.target.id == self.name
                    and (node.lineno, node.col_offset) < (use.lineno, use.col_offset)):
                self.add(Binding(kind="value", node=node.value, detail=f"{self.name} := ... (line {node.lineno})"))
                self.definite = True

    def run(self, stmt: ast.stmt) -> None:
        """Walks back from ``stmt``; sets ``definite`` when a certain rebinding ends the walk."""
        for item, relation in _walk_back(self.tree, stmt):
            if not self.budget.spend():
                self.exhausted = True
                return
            if relation == "before":
                if isinstance(item, (ast.Global, ast.Nonlocal)) and self.name in item.names:
                    self.declared_global = True
                    return
                if isinstance(item, ast.If) and (exits(item.body, self.tree) or _definite_block(item.body, self.name)):
                    # `if bad: abort()` or `if bad: name = DEFAULT`: past it, the old value passed the check.
                    self._collect(item.orelse if exits(item.body, self.tree) else [*item.body, *item.orelse])
                    self.note_guard(item.test, False)
                    self.definite = _definite_block(item.orelse, self.name)
                else:
                    self._collect([item])
                    self.definite = _definite(item, self.name, self.tree)
            else:
                self.definite = self._enter(item, relation, stmt)
            if self.definite:
                return

    def _enter(self, owner: ast.AST, relation: str, stmt: ast.stmt) -> bool:
        """Handles leaving a block upwards; returns True when a certain binding was found."""
        name = self.name
        if relation in ("if-body", "if-else"):
            assert isinstance(owner, ast.If)
            self.note_guard(owner.test, relation == "if-body")
            for node in [owner.test, *walk_scope(owner.test)]:
                if isinstance(node, ast.NamedExpr) and node.target.id == name:
                    self.add(Binding(kind="value", node=node.value, detail=f"{name} := ... (line {node.lineno})"))
                    return True
        elif relation == "loop-body":
            assert isinstance(owner, (ast.For, ast.AsyncFor, ast.While))
            later = [s for s in owner.body if (s.lineno, s.col_offset) > (stmt.lineno, stmt.col_offset)]
            saved, self.guard = self.guard, None
            self._collect(later)
            self.guard = saved
            if isinstance(owner, (ast.For, ast.AsyncFor)) and _target_binds(owner.target, name):
                self.add(Binding(kind="value", node=owner.iter, detail=f"loop variable {name!r} (line {owner.lineno})"))
                return True
        elif relation == "with-body":
            assert isinstance(owner, (ast.With, ast.AsyncWith))
            for item in owner.items:
                if item.optional_vars is not None and _target_binds(item.optional_vars, name):
                    self.add(Binding(kind="value", node=item.context_expr, detail=f"with ... as {name} (line {owner.lineno})"))
                    return True
        elif relation == "handler-body":
            assert isinstance(owner, ast.ExceptHandler)
            if owner.name == name:
                self.add(Binding(kind="unknown", node=None, detail=f"the caught exception {name!r}"))
                return True
        elif relation in ("try-handler", "try-else", "try-finally"):
            assert isinstance(owner, (ast.Try, ast.TryStar))
            self._collect(owner.body)
            if relation == "try-finally":
                self._collect([s for h in owner.handlers for s in h.body] + owner.orelse)
        elif relation == "case-body":
            assert isinstance(owner, ast.match_case)
            match = self.tree.parent(owner)
            assert isinstance(match, ast.Match)
            if owner.guard is not None:
                self.note_guard(owner.guard, True)
            if isinstance(match.subject, ast.Name) and match.subject.id == name and _literal_pattern(owner.pattern):
                if self.guard is None:
                    self.guard = f"match case on constant values (line {owner.pattern.lineno})"
            for node in ast.walk(owner.pattern):
                if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == name:
                    self.add(Binding(kind="value", node=match.subject, detail=f"captured by case pattern (line {owner.pattern.lineno})"))
                    return True
        return False

    def _collect(self, statements: list[ast.stmt]) -> None:
        for stmt in statements:
            for binding in _bindings_in(self.tree, stmt, self.name):
                self.add(binding)


def _walk_back(tree: SourceTree, stmt: ast.stmt) -> Iterator[tuple[ast.AST, str]]:
    """Yields earlier siblings (``"before"``) and enclosing blocks (their relation) up to the scope."""
    current: ast.AST = stmt
    while True:
        parent = tree.parent(current)
        if parent is None:
            return
        field = _field_of(parent, current)
        if field is None:
            return
        block = getattr(parent, field)
        if isinstance(parent, _SCOPES):
            if field == "body":
                index = _index(block, current)
                for prev in reversed(block[:index]):
                    yield prev, "before"
            return
        relation = _RELATIONS.get(type(parent), {}).get(field, "enclosing")
        if isinstance(block, list) and field not in ("handlers", "cases"):
            index = _index(block, current)
            for prev in reversed(block[:index]):
                yield prev, "before"
        yield parent, relation
        current = parent


def _field_of(parent: ast.AST, child: ast.AST) -> str | None:
    for field in parent._fields:
        value = getattr(parent, field, None)
        if value is child or isinstance(value, list) and any(item is child for item in value):
            return field
    return None


def _index(block: list[ast.AST], item: ast.AST) -> int:
    return next(i for i, candidate in enumerate(block) if candidate is item)


def _bindings_in(tree: SourceTree, stmt: ast.stmt, name: str) -> Iterator[Binding]:
    """Yields every binding of ``name`` a statement (and its nested blocks) may make.

    A ``def`` or ``class`` statement binds only its own name here; its body is another scope.
    """
    nested = isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    for node in [stmt] if nested else [stmt, *walk_scope(stmt)]:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                value = _destructured(target, node.value, name)
                if value is not None:
                    yield Binding(kind="value", node=value, detail=f"assignment on line {node.lineno}")
                elif _mutates(target, name):
                    yield Binding(kind="value", node=node.value, detail=f"item stored into {name!r} on line {node.lineno}")
        elif isinstance(node, ast.AnnAssign) and node.value is not None and _target_binds(node.target, name):
            yield Binding(kind="value", node=node.value, detail=f"assignment on line {node.lineno}")
        elif isinstance(node, ast.AugAssign) and (_target_binds(node.target, name) or _mutates(node.target, name)):
            yield Binding(kind="value", node=node.value, detail=f"augmented assignment on line {node.lineno}")
        elif isinstance(node, (ast.For, ast.AsyncFor)) and _target_binds(node.target, name):
            yield Binding(kind="value", node=node.iter, detail=f"loop variable on line {node.lineno}")
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None and _target_binds(item.optional_vars, name):
                    yield Binding(kind="value", node=item.context_expr, detail=f"with ... as {name} on line {node.lineno}")
        elif isinstance(node, ast.NamedExpr) and node.target.id == name:
            yield Binding(kind="value", node=node.value, detail=f"{name} := ... on line {node.lineno}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if (alias.asname or alias.name.split(".")[0]) == name:
                    yield Binding(kind="unknown", node=None, detail=f"the imported name {name!r}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            yield Binding(kind="constant", node=None, detail=f"the definition of {name} on line {node.lineno}")
        elif isinstance(node, ast.ExceptHandler) and node.name == name:
            yield Binding(kind="unknown", node=None, detail=f"the caught exception {name!r}")
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in _MUTATORS
              and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id == name):
            for arg in node.value.args[-1:]:
                yield Binding(kind="value", node=arg, detail=f".{node.value.func.attr}() on line {node.lineno}")
            for keyword in node.value.keywords:
                yield Binding(kind="value", node=keyword.value, detail=f".{node.value.func.attr}() on line {node.lineno}")
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == name:
            yield Binding(kind="unknown", node=None, detail=f"a value captured by a case pattern on line {node.lineno}")


def _destructured(target: ast.expr, value: ast.expr, name: str) -> ast.expr | None:
    """Returns the part of ``value`` that an assignment to ``target`` binds to ``name``."""
    pairs = [(target, value)]
    while pairs:
        current, bound = pairs.pop()
        if isinstance(current, ast.Name):
            if current.id == name:
                return bound
        elif isinstance(current, ast.Starred):
            pairs.append((current.value, bound))
        elif isinstance(current, (ast.Tuple, ast.List)):
            if (isinstance(bound, (ast.Tuple, ast.List)) and len(bound.elts) == len(current.elts)
                    and not any(isinstance(e, ast.Starred) for e in current.elts + bound.elts)):
                pairs.extend(zip(current.elts, bound.elts))
            else:
                pairs.extend((element, bound) for element in current.elts)
    return None


def _target_binds(target: ast.expr, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(target))


def _mutates(target: ast.expr, name: str) -> bool:
    """``name[k] = v`` and ``name.attr = v`` put ``v`` into the object ``name`` refers to."""
    base = target
    while isinstance(base, (ast.Subscript, ast.Attribute)):
        base = base.value
    return base is not target and isinstance(base, ast.Name) and base.id == name


def _definite(stmt: ast.stmt, name: str, tree: SourceTree | None = None) -> bool:
    """Tells whether a statement certainly rebinds ``name`` (looking one block deep).

    A ``try`` whose body rebinds the name and whose every handler leaves the flow (``except
    ValueError: return value``) rebinds it for the code after it: control passes the ``try``
    only when the body completed (a ``finally`` block runs either way and changes nothing).
    """
    if isinstance(stmt, ast.Assign):
        return any(_destructured(t, stmt.value, name) is not None for t in stmt.targets)
    if isinstance(stmt, ast.AnnAssign):
        return stmt.value is not None and _target_binds(stmt.target, name)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name == name
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".")[0]) == name for a in stmt.names)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return any(i.optional_vars is not None and _target_binds(i.optional_vars, name) for i in stmt.items) or _definite_block(stmt.body, name)
    if isinstance(stmt, ast.If):
        return _definite_block(stmt.body, name) and _definite_block(stmt.orelse, name)
    if isinstance(stmt, (ast.Try, ast.TryStar)) and tree is not None:
        return _definite_block(stmt.body, name) and all(exits(handler.body, tree) for handler in stmt.handlers)
    return False


def _definite_block(block: list[ast.stmt], name: str) -> bool:
    return any(isinstance(s, (ast.Assign, ast.AnnAssign)) and _definite(s, name) for s in block)


def _literal_pattern(pattern: ast.pattern) -> bool:
    if isinstance(pattern, (ast.MatchValue, ast.MatchSingleton)):
        return True
    return isinstance(pattern, ast.MatchOr) and all(isinstance(p, (ast.MatchValue, ast.MatchSingleton)) for p in pattern.patterns)


def _param(function: FunctionNode | ast.Lambda, name: str) -> ast.arg | None:
    args = function.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None and arg.arg == name:
            return arg
    return None


def _is_local(tree: SourceTree, scope: ast.AST, name: str) -> bool:
    """Tells whether ``name`` is bound somewhere in ``scope`` itself, which makes it local there."""
    key = f"locals:{id(scope)}"
    local = tree.memo.get(key)
    if local is None:
        local = set()
        for node in walk_scope(scope):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                local.add(node.name)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                local.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                local.update(a.asname or a.name.split(".")[0] for a in node.names)
        tree.memo[key] = local
    return name in local


def _outer(tree: SourceTree, home: ast.AST, name: str, guard: str | None) -> tuple[Binding, ...]:
    """Looks a name up in enclosing functions, then the module, without regard to order."""
    scope: ast.AST = home
    while not isinstance(scope, ast.Module):
        scope = tree.scope_of(scope)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arg = _param(scope, name)
            label = scope.name if not isinstance(scope, ast.Lambda) else "a lambda"
            if arg is not None:
                return (Binding(kind="parameter", node=arg, owner=scope, guard=guard,
                                detail=f"parameter {name!r} of {label}() (a closure variable)"),)
            body = scope.body if isinstance(scope.body, list) else []
            found = [b for stmt in body for b in _bindings_in(tree, stmt, name)]
            if found:
                return tuple(_guarded(b, guard) for b in found)
    found = _module_bindings(tree).get(name, ())
    if found:
        return tuple(_guarded(b, guard) for b in found)
    if name in _BUILTINS:
        return (Binding(kind="constant", node=None, detail=f"the builtin {name}", guard=guard),)
    return (Binding(kind="unknown", node=None, detail=f"{name!r}, not defined in this file", guard=guard),)


def _module_bindings(tree: SourceTree) -> dict[str, tuple[Binding, ...]]:
    """Every module-level binding by name, computed once per tree."""
    index = tree.memo.get("module-bindings")
    if index is None:
        collected: dict[str, list[Binding]] = {}
        for stmt in tree.module.body:
            for name in sorted(_names_bound(stmt)):
                collected.setdefault(name, []).extend(_bindings_in(tree, stmt, name))
        index = {name: tuple(found) for name, found in collected.items() if found}
        tree.memo["module-bindings"] = index
    return index


def _names_bound(stmt: ast.stmt) -> set[str]:
    """The names a module-level statement may bind (a superset is fine; it only narrows a search)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    found: set[str] = set()
    for node in [stmt, *walk_scope(stmt)]:
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            found.add(node.name)
    return found


def _guarded(binding: Binding, guard: str | None) -> Binding:
    return Binding(kind=binding.kind, node=binding.node, detail=binding.detail, owner=binding.owner, guard=guard)


def _comprehension_bindings(tree: SourceTree, use: ast.Name, guard_for: GuardFor) -> tuple[Binding, ...]:
    """Resolves a comprehension variable to the iterable it ranges over (with its ``if`` filters)."""
    chain: list[ast.AST] = [use]
    for ancestor in tree.ancestors(use):
        if isinstance(ancestor, ast.stmt):
            return ()
        if isinstance(ancestor, _COMPREHENSIONS):
            generators = ancestor.generators
            # A use inside generator k's iterable can only see generators before k.
            visible = next((generators[:k] for k, gen in enumerate(generators) if any(n is gen.iter for n in chain)), generators)
            for index in range(len(visible) - 1, -1, -1):
                generator = visible[index]
                if not _target_binds(generator.target, use.id):
                    continue
                tests = [test for gen in generators[index:] for test in gen.ifs]
                guard = next((g for g in (guard_for(test, True) for test in tests) if g), None)
                return (Binding(kind="value", node=generator.iter, guard=guard,
                                detail=f"comprehension variable {use.id!r} (line {generator.iter.lineno})"),)
        chain.append(ancestor)
    return ()
