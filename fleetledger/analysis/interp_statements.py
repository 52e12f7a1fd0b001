"""Interpreting statements, the statement half of the abstract interpreter (``interp.Frame``).

Each statement maps the environment (variable -> ``Value``) to the next: assignments bind
names and store into attributes and items, an ``if`` runs both branches on copies refined by
what its condition proves and joins them, a loop runs its body until the environment is stable
(``interp_loops``), ``try``/``with`` join their paths (``match``: ``interp_match``), a path that
returns, raises, breaks or continues stops contributing, and imports and definitions bind names.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from . import checked_paths, conditions, mutations, predicates
from .annotated_types import annotation_names, known_types, with_types
from .interp_expressions import callable_part, ref
from .definitions import module_name
from .sequences import item_position, leading_items
from .type_comments import DECLARED
from .values import (UNKNOWN_KEYS, EMPTY, Value, add_step, clean, constant, join, taint_only, with_items,
                     without_parameters)
from .walks import walk


class Statements:
    """Statements and assignments, mixed into ``interp.Frame``."""

    def block(self, statements: Iterable[ast.stmt]) -> None:
        """Interprets statements in order until the path ends."""
        for statement in statements:
            if not self.alive:
                return
            self.program.budget.spend()
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:  # noqa: C901 - one dispatch over statement kinds
        """Interprets one statement."""
        if isinstance(node, ast.Expr):
            self.expr(node.value)
            if isinstance(node.value, ast.Call) and self.exits(node.value):
                self.alive = False
            elif isinstance(node.value, ast.Call) or isinstance(node.value, ast.Await) and isinstance(node.value.value, ast.Call):
                self.validated(node.value)
        elif isinstance(node, ast.Assign):
            value = self.expr(node.value)
            declared = getattr(node, DECLARED, None)  # ``x = make()  # type: Session`` (PEP 484)
            if declared is not None:
                value = with_types(value, known_types(self.program, annotation_names(self, declared)))
            for target in node.targets:
                self.assign(target, value, node.value)
                if isinstance(target, ast.Name):
                    self.remember_condition(target.id, node.value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:  # ``client: Client | None = None``: the annotation's types too
                declared = known_types(self.program, annotation_names(self, node.annotation))
                self.assign(node.target, with_types(self.expr(node.value), declared), node.value)
        elif isinstance(node, ast.AugAssign):
            current = self.expr(_load(node.target))
            operand = self.expr(node.value)
            value = self.binop(node.op, current, operand, node)
            if isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add) and leading_items(current) is not None:
                self.rebind(node.target.id, current, value)  # ``xs += ys`` extends the list in place
            if isinstance(node.op, ast.Add) and isinstance(node.value, (ast.List, ast.ListComp)):
                mutations.added(self, node.target, operand)  # a list the caller passed, extended in place
            self.assign(node.target, value, node)
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Call) and self.exits(node.value):
            self.expr(node.value)  # ``return redirect(url)``: it raises, nothing is returned
            self.alive = False
        elif isinstance(node, ast.Return):
            value = self.expr(node.value) if node.value is not None else constant(None)
            self.returned.append(value)
            self.returns_at.append((value, node))
            predicates.record_return(self, node.value, value)
            self.alive = False
        elif isinstance(node, ast.If):
            self.branch(node.test, node.body, node.orelse)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.loop_for(node)
        elif isinstance(node, ast.While):
            self.loop_while(node)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            swallows = False
            for item in node.items:
                value = self.expr(item.context_expr)
                called = item.context_expr.func if isinstance(item.context_expr, ast.Call) else None
                swallows = swallows or called is not None and bool(self.expr(called).types & _SWALLOWING)
                entered = self.entered(value, item.context_expr, "__aenter__" if isinstance(node, ast.AsyncWith)
                                       else "__enter__")
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, entered, item.context_expr)
            self.swallowing += swallows
            try:
                self.swallowed(node.body) if swallows else self.block(node.body)
            finally:
                self.swallowing -= swallows
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self.try_(node)
        elif isinstance(node, ast.Match):
            self.match(node)
        elif isinstance(node, (ast.Raise,)):
            if node.exc is not None:
                self.raised.append(taint_only(self.expr(node.exc).flatten()))
            self.alive = False
        elif isinstance(node, ast.Break):
            if self.loops:
                self.loops[-1][0].append(dict(self.env))
            self.alive = False
        elif isinstance(node, ast.Continue):
            if self.loops:
                self.loops[-1][1].append(dict(self.env))
            self.alive = False
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.define_function(node)
        elif isinstance(node, ast.ClassDef):
            self.define_class(node)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bind(alias.asname, self.library_name(alias.name, node))
                else:
                    head = alias.name.split(".")[0]
                    self.bind(head, ref(head))
                self.module.imported.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = self.import_base(node)
            for alias in node.names:
                if alias.name == "*":
                    if base and base not in self.module.star_imports:
                        self.module.star_imports.append(base)
                    continue
                self.bind(alias.asname or alias.name, self.library_name(f"{base}.{alias.name}" if base else alias.name, node))
            if base:
                self.module.imported.add(base)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                checked_paths.forget_under(self, target)
                if isinstance(target, ast.Name):
                    self.env.pop(target.id, None)
                elif isinstance(target, ast.Subscript):
                    self.expr(target.slice)
                    self.forget_positions(target.value)
        elif isinstance(node, ast.Assert):
            self.expr(node.test)
            self.refine(node.test, True)
        elif type(node).__name__ == "TypeAlias":
            return

        # Pass, Global, Nonlocal: nothing to do.

    def exits(self, call: ast.Call) -> bool:
        """True when the call never returns (``sys.exit``, ``flask.abort``: the models' exits)."""
        callee = self.expr(call.func)
        return any(t[1:] in self.catalog.exits for t in callee.types if t.startswith("="))

    def import_base(self, node: ast.ImportFrom) -> str:
        """Returns the absolute module a ``from ... import`` reads from."""
        if not node.level:
            return node.module or ""
        package = self.module.package().split(".") if self.module.package() else []
        if node.level > len(package):
            # Beyond the top of the module's shortest name: its folders are namespace packages
            # (no ``__init__.py``), imported by the file's full dotted path.
            full, _ = module_name(self.module.path)
            package = (full if self.module.is_package else full.rpartition(".")[0]).split(".")
        if node.level > 1:
            package = package[: len(package) - (node.level - 1)] if node.level - 1 <= len(package) else []
        parts = [*package, *(node.module.split(".") if node.module else [])]
        return ".".join(p for p in parts if p)

    def remember_condition(self, name: str, value: ast.expr) -> None:
        """Remembers that ``name`` holds the result of a check (a call or comparison whose
        operands are plain names), so that ``if name:`` proves what the check proves; any
        other assignment, or one to an operand, forgets it."""
        self.conditions.pop(name, None)
        for held in self.operands.pop(name, ()):  # the checks that read ``name`` no longer hold
            self.conditions.pop(held, None)
        if isinstance(value, (ast.Call, ast.Compare)) or (isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)) \
                or _projection_of_call(value):
            self.conditions[name] = value
            self.program.budget.spend()
            for node in walk(value):
                if isinstance(node, ast.Name):
                    self.operands.setdefault(node.id, set()).add(name)

    def bind(self, name: str, value: Value) -> None:
        """Binds a variable (a ``global`` name in a function binds the module's)."""
        if name in self.global_names:
            # A parameter's label means something only inside its function (``_api`` and
            # ``substitute`` read its index): the module's name keeps the rest.
            kept = without_parameters(value)
            self.module.globals[name] = join(self.module.globals.get(name, EMPTY), kept)
        checked_paths.forget(self, name)
        self.env[name] = value

    def branch(self, test: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt]) -> None:
        """Interprets ``if test: body else: orelse``."""
        truth = self.truth(test)
        if truth is True:
            self.block(body)
            return
        if truth is False:
            self.block(orelse)
            return
        before = dict(self.env)
        self.refine(test, True)
        self.block(body)
        after_body, body_alive = self.env, self.alive
        self.env, self.alive = before, True
        self.refine(test, False)
        self.block(orelse)
        self.merge(after_body, body_alive)

    def merge(self, other: dict[str, Value], other_alive: bool) -> None:
        """Joins another path's environment into the current one."""
        if not other_alive:
            return
        if not self.alive:
            self.env, self.alive = other, True
            return
        self.env = join_envs(self.env, other)

    def validated(self, call: ast.Call | ast.Await) -> None:
        """Narrows the variables a call statement of the code's validators passed (``predicates.
        validations``), or that a library's raising check (``conditions.raising``) checked."""
        awaited = isinstance(call, ast.Await)
        inner = call.value if isinstance(call, ast.Await) else call
        assert isinstance(inner, ast.Call)
        for name, kinds, what, exact in predicates.validations(self, inner, awaited=awaited):
            self.narrow(name, kinds, what, exact, inner)
        # ``path.relative_to(base)`` returned, unless what it raises may be swallowed here. Asked
        # of every call statement: another method's receiver is not evaluated a second time.
        func = inner.func
        if (not awaited and not self.swallowing and isinstance(func, ast.Attribute)
                and func.attr in self.catalog.raising_methods and conditions.raising(self, inner)):
            self.refine(inner, True)

    def refine(self, test: ast.expr, truth: bool) -> None:
        """Narrows variables by what ``test`` proves when it evaluates to ``truth``."""
        for name, kinds, what, exact in conditions.proven(self, test, truth):
            self.narrow(name, kinds, what, exact, test)

    def narrow(self, name: str, kinds: frozenset[str], what: str, exact: Value | None, node: ast.AST) -> None:
        """Gives a variable what a check proved of it: ``exact`` (its only value), or its value
        cleaned for ``kinds`` by ``what``. A name ``"variable.attribute"`` (a check written on an
        attribute: ``validate_name(self.name)``, ``self.name.isidentifier()``,
        ``predicates.subject``) narrows that attribute of the variable, as storing the
        checked value there would; not on a caller's object other than a method's instance,
        whose stored items are read joined with the object's own taint (``Value.get``)."""
        if name.startswith(checked_paths.PREFIX):
            checked_paths.narrow(self, name, kinds, what, exact)  # ``request.args["next"]``
            return
        root, _, attr = name.partition(".")
        current = self.env.get(root)
        if current is None:
            return
        if attr:
            if any(label.channel == "param" and not label.access and not (label.param == 0 and self.function is not None
                                                                             and self.function.bound)
                   for label in current.labels.values()):
                return
            checked = self.attribute(current, attr, node)
            self.env[root] = with_items(current, {"." + attr: exact if exact is not None else clean(checked, kinds, what)})
        else:
            self.env[name] = exact if exact is not None else clean(current, kinds, what)

    def define_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        decorators = [self.expr(decorator) for decorator in node.decorator_list]
        fid = self.module.by_node.get(node)
        if fid is None:
            return
        info = self.program.functions[fid]
        if self.function is not None:
            info.closure = dict(self.env)
            self.program.summaries.pop(fid, None)
        if self.function is None or info.cls is None:
            self.bind(node.name, Value(functions=frozenset({fid})))
        if self.function is None and info.cls is None:
            self.decorate(node, decorators, Value(functions=frozenset({fid})))

    def decorate(self, node: ast.FunctionDef | ast.AsyncFunctionDef, decorators: list[Value], function: Value) -> None:
        """Applies the module's own decorator functions to a definition of its body, innermost
        first, as Python does when it runs the ``def`` (``@register("name")``): what they do
        with the function (store it in a registry) is followed. The name stays bound to the
        function itself (a wrapper's call is the function's call for the engine)."""
        for expr, value in reversed(list(zip(node.decorator_list, decorators))):
            plain = sorted(f for f in value.functions if f in self.program.functions and not self.program.functions[f].bound)
            if not plain or value.types:
                continue
            call = ast.copy_location(ast.Call(func=expr, args=[ast.Name(id=node.name, ctx=ast.Load())], keywords=[]), expr)
            for fid in plain:
                self.call_local(fid, None, [function], {}, [], call)

    def define_class(self, node: ast.ClassDef) -> None:
        cid = self.module.by_node.get(node)
        if cid is None:
            return
        info = self.program.classes[cid]
        bases: list[str] = []
        for base in node.bases:
            value = self.expr(base)
            bases.extend(sorted(value.functions & self.program.classes.keys()))
            bases.extend(sorted(t[1:] for t in value.types if t.startswith("=")))
        info.bases = bases
        body_frame = type(self)(self.program, self.module, None, dict(self.env), summarising=False, depth=self.depth)
        body_frame.scope = info.name
        for statement in node.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in statement.decorator_list:
                    body_frame.expr(decorator)
                continue
            body_frame.alive = True
            body_frame.statement(statement)
        for name, value in body_frame.env.items():
            if self.env.get(name) is not value:
                info.attributes[name] = value
        self.bind(node.name, Value(functions=frozenset({cid})))

    def assign(self, target: ast.expr, value: Value, source: ast.AST) -> None:
        """Binds ``target`` (a name, tuple, attribute or subscript) to ``value``."""
        if isinstance(target, ast.Name):
            if self.narrowed_roots and isinstance(source, ast.expr):
                checked_paths.shared(self, source)  # (an alias of a checked variable's object)
            self.bind(target.id, add_step(value, self.step(target, f"assigned to {target.id}")))
        elif isinstance(target, (ast.Tuple, ast.List)):
            starred = next((i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)), None)
            for i, element in enumerate(target.elts):
                if isinstance(element, ast.Starred):
                    self.assign(element.value, value.flatten(), source)
                    continue
                index = i if starred is None or i < starred else i - len(target.elts)
                part = value.get(index) if starred is None or index >= 0 else None
                self.assign(element, part if part is not None else self.element(value, source), source)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, source)
        elif isinstance(target, ast.Attribute):
            owner = self.expr(target.value)
            self.store_attribute(target, owner, value)
            checked_paths.forget_under(self, target)
        elif isinstance(target, ast.Subscript):
            checked_paths.forget_under(self, target)
            owner = self.expr(target.value)
            key = self.expr(target.slice)
            self.store_item(target, owner, key, value)

    def store_attribute(self, target: ast.Attribute, owner: Value, value: Value) -> None:
        self.escapes([value], f"stored in the attribute {target.attr}", self.site(target))
        for label in owner.labels.values():
            if label.channel == "param" and not label.access and self.summarising:
                old = self.writes.get((label.param, target.attr), EMPTY)
                self.writes[(label.param, target.attr)] = join(old, value)
        self.sinks_for_method(owner, f"__setattr__:{target.attr}", [value], {}, target)
        root = _root_name(target.value)
        if root is not None and isinstance(target.value, ast.Name) and (
                root in self.env or (self.function is not None and any(t.startswith("=") for t in owner.types))):
            # A library object named by a global (``flask.g``, a module): what this function
            # stores on it is what it reads back from it further on.
            self.env[root] = with_items(owner, {"." + target.attr: value})
            if self.summarising and root not in self.locals:
                self.store_library(owner, target.attr, value)

    def store_library(self, owner: Value, attr: str, value: Value) -> None:
        """Records, for the summary, what this function stores on a library object a global
        names (``g.user = load(request.cookies["id"])``): other functions of the program may read
        it in the same request (``Program.library_state``). Its parameters' data is left out
        (their callers are not known there)."""
        shared = without_parameters(value)
        if not (shared.tainted() or shared.types or shared.functions or shared.items):
            return
        for qualified in sorted(t[1:] for t in owner.types if t.startswith("=")):
            if self.program.resolve(qualified) is None:
                key = (qualified, attr)
                self.library_stores[key] = join(self.library_stores.get(key, EMPTY), shared)

    def store_item(self, target: ast.Subscript, owner: Value, key: Value, value: Value) -> None:
        self.sinks_for_method(owner, "__setitem__", [key, value], {}, target)
        if isinstance(target.value, ast.Name) and target.value.id in self.env:
            position = item_position(owner, key)
            if position is not None:
                updated = with_items(owner, {position: value})
            elif key.is_const and isinstance(key.const, int) and not isinstance(key.const, bool) and key.const < 0:
                updated = join(owner.flatten(), taint_only(value))  # ``xs[-1] = v``: which item is not known
            elif key.is_const and isinstance(key.const, (str, int)):
                updated = with_items(owner, {key.const: value})
            else:
                updated = join(owner, taint_only(value))
                if key.tainted():  # iterating the container gives this key (``dict_keys``)
                    keys = updated.items.get(UNKNOWN_KEYS) if updated.items else None
                    updated = with_items(updated, {UNKNOWN_KEYS: join(keys or EMPTY, taint_only(key.flatten()))})
            self.env[target.value.id] = updated
            mutations.added(self, target.value, join(value, key))  # a parameter's dict: the caller's  # type: ignore[arg-type]
        elif isinstance(target.value, ast.Name):
            self.store_global(target.value.id, value, by_key=True)
        else:
            mutations.added(self, target.value, join(value, key))  # ``self.headers[k] = v``  # type: ignore[arg-type]

    def store_global(self, name: str, value: Value, *, by_key: bool) -> None:
        """``REGISTRY[key] = fn`` or ``HOOKS.append(fn)`` on a global container of the module,
        in a summary: the summary says so, and a call in the module's body adds the functions
        it passed (``summaries._store_globals``). Only functions and parameters are kept."""
        if self.summarising and self._global(name) and (
                callable_part(value) is not None or any(label.channel == "param" for label in value.labels.values())):
            self.global_stores[(name, by_key)] = join(self.global_stores.get((name, by_key), EMPTY), value)

    def _global(self, name: str) -> bool:
        """True for a name this function reads from its module's globals (not a local, a
        closure's or a builtin)."""
        closure = self.function.closure if self.function is not None else None
        return (self.function is not None and name not in self.locals and not (closure and name in closure)
                and name in self.function.module.tree_globals)


def _load(target: ast.expr) -> ast.expr:
    return target


def _projection_of_call(expr: ast.expr) -> bool:
    """True for a part of a call's result (``urlparse(x).hostname``): comparing the name it is
    assigned to checks the call's argument as the projection itself would (also after a
    change of case: ``urlparse(x).hostname.lower()``)."""
    expr = conditions.without_case(expr)
    if not isinstance(expr, (ast.Attribute, ast.Subscript)):
        return False
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return isinstance(expr, ast.Call)


def _root_name(expr: ast.expr) -> str | None:
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def join_envs(*envs: dict[str, Value]) -> dict[str, Value]:
    if len(envs) == 1:
        return dict(envs[0])
    names: dict[str, None] = {}
    for env in envs:
        names.update(dict.fromkeys(env))
    # (what a check proved of an access path holds after the join only if it does on every branch)
    return {name: join(*(env[name] for env in envs if name in env)) for name in names
            if name[:1] != checked_paths.PREFIX or all(name in env for env in envs)}


_SWALLOWING = frozenset({"=contextlib.suppress"})
"""Context managers that swallow the exceptions they name: a check that raises proves nothing in one."""
