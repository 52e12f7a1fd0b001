"""The taint engine's abstract interpreter: one pass over a function's statements in order.

Each statement maps an environment (variable -> ``Value``) to the next: an assignment binds,
an ``if`` runs both branches on copies refined by what the condition proves (``guards``) and
joins them, a loop runs its body until the environment stops changing (at most
``LOOP_ROUNDS`` times), ``try``/``with``/``match`` join their paths, and a path that returns,
raises, breaks or continues stops contributing to what follows. Conditions that fold to a
constant (``if 7 * 3 > 20:``) take only the branch that runs. This is the textbook
flow-sensitive, path-insensitive analysis (Kildall's monotone framework); its cost is linear in
the function's size times the loop rounds.

Expressions are evaluated to ``Value``s: literals to constants, names to their binding (local,
then the module's globals, then a library reference), string building (``+``, ``%``,
``.format``, f-strings, ``join``) to the join of its parts, containers to values that remember
their keys, attribute reads and calls by the library models (``catalog``) or, for the analysed
code's own functions, by their summaries (``program``). A call the models do not describe
passes its arguments' taint to its result (taint in, taint out), and a value that comes from
nothing the engine sees carries an ``opaque`` label, so that a sink's evidence can tell "built
from constants" from "origin unknown".
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from . import conditions
from .budget import BudgetExceeded
from .catalog import Check, Condition, Render, Sink, UNTYPED
from .definitions import FunctionInfo, ModuleInfo
from .facts import Evidence, Flow, Misuse, Site, SinkHit, site_of, step
from .values import (EMPTY, NOT_CONSTANT, Label, Value, add_step, clean, constant, join, of_labels, taint_only,
                     with_items)

if TYPE_CHECKING:
    from .program import Program

LOOP_ROUNDS = 3
BUILTINS = frozenset(dir(builtins))
# Shells and their "run this text" flags (POSIX and Windows conventions): in an argument
# vector that starts a shell with such a flag, the text after the flag is a command line.
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "csh", "tcsh", "fish", "ash", "cmd", "cmd.exe",
                    "powershell", "pwsh", "powershell.exe"})
SHELL_FLAGS = frozenset({"-c", "/c", "/C", "/k", "/K", "-Command", "-command", "-lc", "-ec"})
_NUMERIC_OPS = (ast.Sub, ast.Div, ast.FloorDiv, ast.Pow, ast.LShift, ast.RShift, ast.BitAnd, ast.BitXor, ast.MatMult)
_CONST_OPS: dict[type, Any] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Mod: lambda a, b: a % b, ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: a / b,
    ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b,
}
_COMPARE: dict[type, Any] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b, ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}
_CONST_TYPES = (str, int, float, bool, bytes, type(None))
_MAX_CONST_LEN = 4096
# list methods after which an item is no longer at the index it was stored under
_SHIFTING_METHODS = frozenset({"pop", "insert", "remove", "sort", "reverse"})


def ref(qualified: str) -> Value:
    """Returns the value of a name that stands for a library object (a module, function,
    class or global), e.g. ``ref("subprocess.run")``."""
    return Value(types=frozenset({"=" + qualified}))


def opaque(what: str, site: Site) -> Value:
    """Returns a value of unknown origin (code the engine does not see)."""
    return of_labels([Label(channel="opaque", what=what, path=site.path, line=site.line, col=site.col)])


class Frame:
    """The interpretation of one function body or module body.

    Args:
        program: The program (models, summaries, results).
        module: The module the code is in.
        function: The function, or None for a module body.
        env: Initial variables (parameters, or the module's globals being built).
        summarising: True when parameters carry ``param`` labels and the frame's results form
            the function's summary.
        depth: How many summaries are being computed around this one.
    """

    def __init__(self, program: Program, module: ModuleInfo, function: FunctionInfo | None, env: dict[str, Value],
                 *, summarising: bool, depth: int = 0) -> None:
        self.program = program
        self.catalog = program.catalog
        self.module = module
        self.function = function
        self.env = env
        self.summarising = summarising
        self.depth = depth
        self.scope = function.qualname if function else "<module>"
        self.alive = True
        self.returned: list[Value] = []
        self.returns_at: list[tuple[Value, ast.Return]] = []
        self.raised: list[Value] = []
        self.hits: dict[tuple[int, int, str, str], SinkHit] = {}
        self.writes: dict[tuple[int, str], Value] = {}
        self.loops: list[tuple[list[dict[str, Value]], list[dict[str, Value]]]] = []
        self.conditions: dict[str, ast.expr] = {}
        self.operands: dict[str, set[str]] = {}  # a name -> the remembered checks that read it
        self.locals, self.global_names = function.names() if function else (frozenset(), frozenset())

    # -- statements ----------------------------------------------------------------------

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
        elif isinstance(node, ast.Assign):
            value = self.expr(node.value)
            for target in node.targets:
                self.assign(target, value, node.value)
                if isinstance(target, ast.Name):
                    self.remember_condition(target.id, node.value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.expr(node.value), node.value)
        elif isinstance(node, ast.AugAssign):
            current = self.expr(_load(node.target))
            value = self.binop(node.op, current, self.expr(node.value), node)
            self.assign(node.target, value, node)
        elif isinstance(node, ast.Return):
            value = self.expr(node.value) if node.value is not None else constant(None)
            self.returned.append(value)
            self.returns_at.append((value, node))
            self.alive = False
        elif isinstance(node, ast.If):
            self.branch(node.test, node.body, node.orelse)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.loop_for(node)
        elif isinstance(node, ast.While):
            self.loop_while(node)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                value = self.expr(item.context_expr)
                entered = self.method_result(value, "__enter__", item.context_expr)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, entered, item.context_expr)
            self.block(node.body)
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
        if isinstance(value, (ast.Call, ast.Compare)) or (isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)):
            self.conditions[name] = value
            self.program.budget.spend()
            for node in ast.walk(value):
                if isinstance(node, ast.Name):
                    self.operands.setdefault(node.id, set()).add(name)

    def bind(self, name: str, value: Value) -> None:
        """Binds a variable (a ``global`` name in a function binds the module's)."""
        if name in self.global_names:
            self.module.globals[name] = join(self.module.globals.get(name, EMPTY), value)
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
        self.env = _join_envs(self.env, other)

    def refine(self, test: ast.expr, truth: bool) -> None:
        """Narrows variables by what ``test`` proves when it evaluates to ``truth``."""
        for name, kinds, what, exact in conditions.proven(self, test, truth):
            current = self.env.get(name)
            if current is None:
                continue
            self.env[name] = exact if exact is not None else clean(current, kinds, what)

    def loop_for(self, node: ast.For | ast.AsyncFor) -> None:
        iterable = self.expr(node.iter)
        element = self.element(iterable, node.iter)
        self.loop(lambda: self.assign(node.target, element, node.iter), node.body, node.orelse)

    def loop_while(self, node: ast.While) -> None:
        truth = self.truth(node.test)
        if truth is False:
            self.block(node.orelse)
            return

        def enter() -> None:
            self.refine(node.test, True)
        self.loop(enter, node.body, node.orelse, endless=truth is True)

    def loop(self, enter: Any, body: list[ast.stmt], orelse: list[ast.stmt], *, endless: bool = False) -> None:
        """Runs a loop body until the environment is stable; the loop may run zero times."""
        entry = dict(self.env)
        exits: list[dict[str, Value]] = []
        state = entry
        for _ in range(LOOP_ROUNDS):
            self.env, self.alive = dict(state), True
            self.loops.append(([], []))
            enter()
            self.block(body)
            breaks, continues = self.loops.pop()
            exits.extend(breaks)
            ends = [self.env] if self.alive else []
            ends.extend(continues)
            new_state = _join_envs(state, *ends) if ends else state
            if _same_env(new_state, state):
                break
            state = new_state
        self.env, self.alive = state, True
        if endless:
            self.alive = bool(exits)
            self.env = _join_envs(*exits) if exits else state
            return
        self.block(orelse)
        for env in exits:
            self.merge(env, True)

    def try_(self, node: ast.Try) -> None:
        before = dict(self.env)
        outer_raised, self.raised = self.raised, []
        self.block(node.body)
        raised = join(*self.raised) if self.raised else EMPTY
        self.raised = outer_raised + self.raised
        after_body, body_alive = self.env, self.alive
        ends: list[dict[str, Value]] = []
        if body_alive:
            self.env, self.alive = after_body, True
            self.block(node.orelse)
            if self.alive:
                ends.append(self.env)
        for handler in node.handlers:
            self.env, self.alive = _join_envs(before, after_body), True
            if handler.type is not None:
                self.expr(handler.type)
            if handler.name:
                self.env[handler.name] = raised  # what the try block raised (``e.args[0]``)
            self.block(handler.body)
            if self.alive:
                ends.append(self.env)
        self.alive = bool(ends)
        self.env = _join_envs(*ends) if ends else _join_envs(before, after_body)
        if node.finalbody:
            alive = self.alive
            self.alive = True
            self.block(node.finalbody)
            self.alive = self.alive and alive

    def match(self, node: ast.Match) -> None:
        subject = self.expr(node.subject)
        before = dict(self.env)
        ends: list[dict[str, Value]] = []
        exhaustive = False
        for case in node.cases:
            self.env, self.alive = dict(before), True
            for name, value in _captures(case.pattern, subject).items():
                self.env[name] = value
            if case.guard is not None:
                self.expr(case.guard)
                self.refine(case.guard, True)
            self.block(case.body)
            if self.alive:
                ends.append(self.env)
            if isinstance(case.pattern, ast.MatchAs) and case.pattern.pattern is None and case.guard is None:
                exhaustive = True
        if not exhaustive:
            ends.append(before)
        self.alive = bool(ends)
        self.env = _join_envs(*ends) if ends else before

    def define_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.expr(decorator)
        fid = self.module.by_node.get(node)
        if fid is None:
            return
        info = self.program.functions[fid]
        if self.function is not None:
            info.closure = dict(self.env)
            self.program.summaries.pop(fid, None)
        if self.function is None or info.cls is None:
            self.bind(node.name, Value(functions=frozenset({fid})))

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
        body_frame = Frame(self.program, self.module, None, dict(self.env), summarising=False, depth=self.depth)
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

    # -- assignment ----------------------------------------------------------------------

    def assign(self, target: ast.expr, value: Value, source: ast.AST) -> None:
        """Binds ``target`` (a name, tuple, attribute or subscript) to ``value``."""
        if isinstance(target, ast.Name):
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
        elif isinstance(target, ast.Subscript):
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
        if root is not None and isinstance(target.value, ast.Name) and root in self.env:
            self.env[root] = with_items(owner, {"." + target.attr: value})

    def store_item(self, target: ast.Subscript, owner: Value, key: Value, value: Value) -> None:
        self.sinks_for_method(owner, "__setitem__", [key, value], {}, target)
        if isinstance(target.value, ast.Name) and target.value.id in self.env:
            if key.is_const and isinstance(key.const, (str, int)):
                updated = with_items(owner, {key.const: value})
            else:
                updated = join(owner, taint_only(value))
            self.env[target.value.id] = updated

    # -- expressions ---------------------------------------------------------------------

    def expr(self, node: ast.expr | None) -> Value:  # noqa: C901 - one dispatch over expression kinds
        """Evaluates an expression."""
        if node is None:
            return EMPTY
        self.program.budget.spend()
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, (str, bytes)) and len(value) > _MAX_CONST_LEN:
                return Value(prefix=value[:_MAX_CONST_LEN] if isinstance(value, str) else None)
            return constant(value) if isinstance(value, _CONST_TYPES) else EMPTY
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(self.expr(node.value), node.attr, node)
        if isinstance(node, ast.Call):
            dynamic = _getattr_call(node)
            if dynamic is not None:  # getattr(obj, "name") is obj.name
                return self.attribute(self.expr(dynamic.value), dynamic.attr, node)
            return self.call(node)
        if isinstance(node, ast.BinOp):
            return self.binop_chain(node)
        if isinstance(node, ast.JoinedStr) or type(node).__name__ == "TemplateStr":
            return self.fstring(node)
        if isinstance(node, ast.FormattedValue) or type(node).__name__ == "Interpolation":
            inner = self.expr(node.value)
            if node.format_spec is not None:
                self.expr(node.format_spec)
            return taint_only(inner) if not inner.is_const else constant(str(inner.const)) if isinstance(inner.const, (str, int)) else taint_only(inner)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self.sequence(node.elts)
        if isinstance(node, ast.Set):
            return join(*(self.expr(e).flatten() for e in node.elts)) if node.elts else EMPTY
        if isinstance(node, ast.Dict):
            return self.dictionary(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.BoolOp):
            values = [self.expr(v) for v in node.values]
            consts = [v for v in values if v.is_const]
            if len(consts) == len(values):
                result = values[0].const
                for v in values[1:]:
                    result = (result and v.const) if isinstance(node.op, ast.And) else (result or v.const)
                return constant(result) if isinstance(result, _CONST_TYPES) else join(*values)
            return join(*values)
        if isinstance(node, ast.UnaryOp):
            ops: list[ast.unaryop] = []
            inner: ast.expr = node
            while isinstance(inner, ast.UnaryOp):  # iterative: ``- - - ... x`` nests as deep as it is long
                ops.append(inner.op)
                inner = inner.operand
            operand = self.expr(inner)
            for op in reversed(ops):
                operand = self.unary(op, operand)
            return operand
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.IfExp):
            truth = self.truth(node.test)
            if truth is True:
                return self.expr(node.body)
            if truth is False:
                return self.expr(node.orelse)
            saved = dict(self.env)
            self.refine(node.test, True)
            body = self.expr(node.body)
            self.env = dict(saved)
            self.refine(node.test, False)
            orelse = self.expr(node.orelse)
            self.env = saved
            return join(body, orelse)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.comprehension(node.generators, [node.elt])
        if isinstance(node, ast.DictComp):
            return self.comprehension(node.generators, [node.key, node.value])
        if isinstance(node, ast.Lambda):
            fid = self.module.by_node.get(node)
            if fid is not None:
                self.program.functions[fid].closure = dict(self.env)
                self.program.summaries.pop(fid, None)
                return Value(functions=frozenset({fid}))
            return EMPTY
        if isinstance(node, ast.NamedExpr):
            value = self.expr(node.value)
            self.assign(node.target, value, node.value)
            return value
        if isinstance(node, ast.Await):
            return self.expr(node.value)
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            value = self.expr(node.value)
            self.returned.append(value if isinstance(node, ast.Yield) else self.element(value, node))
            return EMPTY
        if isinstance(node, ast.Starred):
            return self.expr(node.value)
        if isinstance(node, ast.Slice):
            for part in (node.lower, node.upper, node.step):
                self.expr(part)
            return EMPTY
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child)
        return EMPTY

    def name(self, node: ast.Name) -> Value:
        name = node.id
        if name in self.env:
            return self.env[name]
        if self.function is not None and self.function.closure is not None and name in self.function.closure:
            return self.function.closure[name]
        if self.function is not None or name not in self.locals:
            value = self.module.globals.get(name)
            if value is not None:
                return value
        if name in BUILTINS:
            return ref(name)
        for base in self.module.star_imports:  # ``from X import *`` binds X's names
            qualified = f"{base}.{name}"
            if self.catalog.knows(qualified) or self.program.resolve(qualified) is not None:
                return self.library_name(qualified, node)
        return opaque(f"{name} (not defined where the engine can see)", self.site(node))

    def attribute(self, owner: Value, attr: str, node: ast.AST) -> Value:
        """Reads ``owner.attr``: a library reference, a known item, a modelled source or type,
        a local class's attribute, or the owner's taint."""
        site = self.site(node)
        refs = sorted(t[1:] for t in owner.types if t.startswith("="))
        if refs:
            named = join(*(self.library_name(f"{q}.{attr}", node) for q in refs))
            # A class imported from another file of the repository (``Order.objects``): its
            # attributes and its library bases' modelled members apply too.
            classes = [local[1] for local in map(self.program.resolve, refs) if local and local[0] == "class"]
            if classes:
                named = join(named, self.attribute(Value(functions=frozenset(classes)), attr, node))
            if all(t.startswith("=") for t in owner.types):
                return named
            return join(named, self.attribute(replace(owner, types=frozenset(t for t in owner.types if not t.startswith("="))),
                                              attr, node))
        known = owner.get("." + attr)
        if known is not None:
            return known
        parts: list[Value] = []
        for class_id in sorted(owner.functions & self.program.classes.keys()):
            method = self.program.method(class_id, attr)
            if method is not None:
                parts.append(Value(functions=frozenset({method})))
            for base in self.program.class_mro(class_id):
                info = self.program.classes.get(base)
                if info is not None and attr in info.attributes:
                    parts.append(info.attributes[attr])
                    break
                returned = self.catalog.returns.get(f"{base}.{attr}") if info is None else None
                if returned:
                    parts.append(Value(types=frozenset(t for t, _ in returned)))
                    break
        for type_name in sorted(owner.types):
            for base in self.program.class_mro(type_name):
                info = self.program.classes.get(base)
                if info is not None:
                    method = info.methods.get(attr)
                    if method is not None:
                        parts.append(Value(functions=frozenset({method}), types=frozenset({"bound:" + type_name})))
                        break
                    if attr in info.attributes:
                        parts.append(info.attributes[attr])
                        break
                source = self.catalog.sources_type.get(base)
                if source is not None and attr in source.attributes:
                    parts.append(self.source_value(source.channel, f"{attr} of {source.what}", site))
                    break
                returned = self.catalog.returns.get(f"{base}.{attr}")
                if returned:
                    parts.append(Value(types=frozenset(t for t, _ in returned)))
                    break
        derived = self.derive(owner, attr, site)
        return join(derived, *parts) if parts else derived

    def derive(self, owner: Value, member: str, site: Site) -> Value:
        """The taint of a value read from ``owner`` (an attribute or a method's result):
        parameter labels get the member appended to their access path; others pass on."""
        labels: list[Label] = []
        for label in owner.all_labels():
            if label.channel == "param" and len(label.access) < 3:
                labels.append(label._replace(access=label.access + (member,)))
            else:
                labels.append(label)
        if not labels and not owner.is_const and owner.types and not any(t in self.program.classes for t in owner.types):
            return EMPTY
        return of_labels(labels)

    def library_name(self, qualified: str, node: ast.AST) -> Value:
        """The value of a qualified library name: a source, an object of a known type, or a
        reference (which a call or attribute read resolves further)."""
        site = self.site(node)
        source = self.catalog.sources_read.get(qualified)
        value = ref(qualified)
        if source is not None:
            value = join(value, self.source_value(source.channel, source.what, site))
        if qualified in self.catalog.constants:
            return constant(self.catalog.constants[qualified])
        object_type = self.catalog.objects.get(qualified)
        if object_type is not None:
            value = join(value, Value(types=frozenset({object_type})))
        return value

    def source_value(self, channel: str, what: str, site: Site) -> Value:
        """A value read from a source."""
        return of_labels([Label(channel=channel, what=what, path=site.path, line=site.line, col=site.col)])

    def binop_chain(self, node: ast.BinOp) -> Value:
        """Evaluates ``a + b + c + ...`` iteratively (a left-deep chain of thousands of terms
        costs one level of recursion, not thousands)."""
        spine: list[ast.BinOp] = []
        current: ast.expr = node
        while isinstance(current, ast.BinOp):
            spine.append(current)
            current = current.left
        value = self.expr(current)
        for link in reversed(spine):
            self.program.budget.spend()
            value = self.binop(link.op, value, self.expr(link.right), link)
        return value

    def unary(self, op: ast.unaryop, operand: Value) -> Value:
        """Applies a unary operator: folded for a constant; else a number or a bool (no taint)."""
        if operand.is_const:
            try:
                result = {ast.Not: lambda v: not v, ast.USub: lambda v: -v, ast.UAdd: lambda v: +v,
                          ast.Invert: lambda v: ~v}[type(op)](operand.const)
                return constant(result)
            except Exception:
                return EMPTY
        return EMPTY

    def binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
        if left.is_const and right.is_const and type(op) in _CONST_OPS and _small(left.const, right.const, op):
            try:
                result = _CONST_OPS[type(op)](left.const, right.const)
            except Exception:
                result = NOT_CONSTANT
            if isinstance(result, _CONST_TYPES) and not (isinstance(result, (str, bytes)) and len(result) > _MAX_CONST_LEN):
                return constant(result)
        if isinstance(op, _NUMERIC_OPS):
            return EMPTY
        if isinstance(op, ast.Mod) and left.is_const and isinstance(left.const, str):
            prefix = left.const.split("%", 1)[0]
            return replace(join(taint_only(left), taint_only(right.flatten())), prefix=prefix or None)
        result = join(taint_only(left.flatten()), taint_only(right.flatten()))
        if isinstance(op, ast.Add):
            prefix = left.prefix
            if left.is_const and isinstance(left.const, str) and right.prefix is not None:
                prefix = left.const + right.prefix
            return replace(result, prefix=prefix)
        return result

    def fstring(self, node: ast.AST) -> Value:
        parts: list[Value] = []
        prefix = ""
        fixed = True
        for part in getattr(node, "values", []):
            value = self.expr(part)
            parts.append(value)
            if fixed:
                if value.is_const and isinstance(value.const, str):
                    prefix += value.const
                else:
                    fixed = False
        result = join(*(taint_only(p) for p in parts))
        if fixed and all(p.is_const for p in parts):
            return constant(prefix)
        return replace(result, prefix=prefix or None, const=NOT_CONSTANT)

    def sequence(self, elements: list[ast.expr]) -> Value:
        if any(isinstance(e, ast.Starred) for e in elements):
            return join(*(self.expr(e).flatten() for e in elements), Value(items=None))
        items = {i: self.expr(e) for i, e in enumerate(elements)}
        return Value(items=items)

    def dictionary(self, node: ast.Dict) -> Value:
        items: dict[Any, Value] = {}
        loose: list[Value] = []
        for key, value in zip(node.keys, node.values):
            v = self.expr(value)
            if key is None:
                loose.append(v.flatten())
                continue
            k = self.expr(key)
            if k.is_const and isinstance(k.const, (str, int)):
                items[k.const] = v
            else:
                loose.append(taint_only(k))
                loose.append(v.flatten())
        base = Value(items=items)
        return join(base, *loose) if loose else base

    def subscript(self, node: ast.Subscript) -> Value:
        owner = self.expr(node.value)
        if owner.functions & self.program.classes.keys():
            return owner  # ``Runner[str]``: a generic class's alias is the class
        key = self.expr(node.slice)
        if key.is_const and isinstance(key.const, (str, int)):
            known = owner.get(key.const)
            if known is not None:
                return known
        if isinstance(node.slice, ast.Slice):
            return taint_only(owner.flatten())
        item = self.method_result(owner, "__getitem__", node, args=[key])
        return item

    def element(self, iterable: Value, node: ast.AST) -> Value:
        """The value of one element of an iterable (every item joined)."""
        return self.method_result(iterable, "__iter__", node) if iterable.types else taint_only(iterable.flatten())

    def compare(self, node: ast.Compare) -> Value:
        values = [self.expr(node.left), *(self.expr(c) for c in node.comparators)]
        if all(v.is_const for v in values):
            try:
                ok = all(_COMPARE[type(op)](values[i].const, values[i + 1].const) for i, op in enumerate(node.ops))
                return constant(bool(ok))
            except Exception:
                return EMPTY
        return EMPTY

    def comprehension(self, generators: list[ast.comprehension], results: list[ast.expr]) -> Value:
        saved = dict(self.env)
        for generator in generators:
            iterable = self.expr(generator.iter)
            self.assign(generator.target, self.element(iterable, generator.iter), generator.iter)
            for condition in generator.ifs:
                self.expr(condition)
                self.refine(condition, True)
        values = [taint_only(self.expr(r).flatten()) for r in results]
        self.env = saved
        return join(*values)

    def truth(self, test: ast.expr) -> bool | None:
        """Folds a condition to True or False when it is constant, else None."""
        value = self.expr(test)
        if value.is_const:
            try:
                return bool(value.const)
            except Exception:
                return None
        if value.types & {"=typing.TYPE_CHECKING", "=typing_extensions.TYPE_CHECKING"}:
            return False
        return None

    # -- calls ---------------------------------------------------------------------------

    def call(self, node: ast.Call) -> Value:  # noqa: C901 - the resolution order is one algorithm
        """Evaluates a call: library models, the analysed code's functions, or taint in,
        taint out."""
        func = node.func
        receiver: Value | None = None
        dynamic = _getattr_call(func)
        if dynamic is not None:  # getattr(obj, "name")(...) is obj.name(...)
            func = dynamic
        if isinstance(func, ast.Attribute):
            receiver = self.super_value(func.value) or self.expr(func.value)
            callee = self.attribute(receiver, func.attr, func)
            method = func.attr
        else:
            callee = self.expr(func)
            method = None
        if method in _SHIFTING_METHODS and isinstance(func, ast.Attribute):
            self.forget_positions(func.value)
        args: list[Value] = []
        star: list[Value] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                star.append(self.expr(arg.value).flatten())
            else:
                args.append(self.expr(arg))
        kwargs: dict[str, Value] = {}
        for keyword in node.keywords:
            value = self.expr(keyword.value)
            if keyword.arg is None:
                star.append(value.flatten())
            else:
                kwargs[keyword.arg] = value
        site = self.site(node)
        results: list[Value] = []
        handled = False
        refs = sorted(t[1:] for t in callee.types if t.startswith("="))
        for qualified in refs:
            local = self.program.resolve(qualified) if "." in qualified or qualified not in BUILTINS else None
            if local is not None and local[0] in ("function", "class"):
                results.append(self.call_local(local[1], None, args, kwargs, star, node))
                handled = True
                # A file of the repository named like a modelled library (a shipped
                # ``subprocess.py``) does not switch the library's sinks off.
                shadowed = self.call_library(qualified, None, args, kwargs, star, node)
                if shadowed is not None:
                    results.append(shadowed)
                continue
            result = self.call_library(qualified, None, args, kwargs, star, node)
            if result is not None:
                results.append(result)
                handled = True
        for fid in sorted(callee.functions):
            bound = receiver if any(t.startswith("bound:") for t in callee.types) or (
                receiver is not None and fid in self.program.functions and self.program.functions[fid].bound
                and not refs) else None
            results.append(self.call_local(fid, bound, args, kwargs, star, node))
            handled = True
        if receiver is not None and method == "get" and receiver.items is not None and not receiver.types and args:
            # ``d.get(k, default)`` on a dict built here: one of its values or the default,
            # whatever the key (Python's semantics; the key's taint is not the result's).
            key = args[0]
            known = receiver.get(key.const) if key.is_const and isinstance(key.const, (str, int)) else None
            default = args[1] if len(args) > 1 else constant(None)
            return join(known, default) if known is not None else join(receiver.flatten(), default)
        if receiver is not None and method is not None and (not refs or not handled):
            # A name the models do not know (``models.Order.objects`` from a module that is not
            # loaded) is a receiver of unknown type: the models of its method name apply.
            for key in self.method_keys(receiver, method):
                result = self.call_library(key, receiver, args, kwargs, star, node)
                if result is not None:
                    results.append(result)
                    handled = True
        if handled and results:
            return join(*results)
        everything = [*args, *kwargs.values(), *star]
        self.escapes(everything, f"passed to {_callee_text(func)}(), which the models do not describe", site)
        if receiver is not None:
            if method == "format" and receiver.is_const and isinstance(receiver.const, str):
                everything.extend(self.format_fields(receiver.const, args, kwargs, node))
            self.stores_into(func.value if isinstance(func, ast.Attribute) else None, everything, site)
            everything.append(receiver)
            derived = self.derive(receiver, f"{method}()", site)
            rest = join(*(taint_only(v.flatten()) for v in everything[:-1]))
            value = join(derived, rest)
        else:
            value = join(*(taint_only(v.flatten()) for v in everything))
        name = _callee_text(func)
        if value.tainted():
            return add_step(value, step(site, f"through {name}()"))
        if _pure(refs, receiver):
            return value
        return opaque(f"the result of {name}()", site)

    def forget_positions(self, target: ast.expr) -> None:
        """A list built here whose items move (``pop``, ``insert``, ``remove``, ``sort``,
        ``reverse``, ``del xs[i]``) no longer has known values per index: a variable naming it
        keeps the taint of all its items. Keys of other kinds (a dict's) do not move."""
        if not isinstance(target, ast.Name):
            return
        value = self.env.get(target.id)
        if value is not None and value.items and any(isinstance(key, int) for key in value.items):
            self.env[target.id] = value.flatten()

    def stores_into(self, target: ast.expr | None, inputs: list[Value], site: Site) -> None:
        """A method the models do not describe may keep its arguments in its receiver
        (``items.append(x)``, ``d.setdefault(k, x)``, ``buffer.write(x)``): a variable named as
        the receiver then carries their taint too (a global's value everywhere after)."""
        if not isinstance(target, ast.Name) or not any(value.tainted() for value in inputs):
            return
        carried = add_step(join(*(taint_only(value.flatten()) for value in inputs)), step(site, f"stored in {target.id}"))
        name = target.id
        if name in self.env:
            self.env[name] = join(self.env[name], carried)
        elif name in self.module.globals:
            self.module.globals[name] = join(self.module.globals[name], carried)

    def format_fields(self, template: str, args: list[Value], kwargs: dict[str, Value], node: ast.AST) -> list[Value]:
        """The values ``str.format`` reads through its fields' attribute and index paths
        (``"{0.args[h]}".format(request)`` reads ``request.args``), Python's format syntax."""
        import string

        out: list[Value] = []
        try:
            fields = [field for _, field, _, _ in string.Formatter().parse(template) if field]
        except ValueError:
            return out
        for position, field in enumerate(fields[:32]):
            head, _, rest = field.partition(".") if "." in field.split("[")[0] else field.partition("[")
            if not rest:
                continue
            base = (kwargs.get(head) if head and not head.isdigit() else
                    args[int(head)] if head.isdigit() and int(head) < len(args) else
                    args[position] if not head and position < len(args) else None)
            attribute = rest.split(".")[0].split("[")[0].rstrip("]")
            if base is not None and attribute.isidentifier():
                out.append(self.attribute(base, attribute, node))
        return out

    def escapes(self, values: list[Value], how: str, site: Site) -> None:
        """Notes weak random numbers that leave what the engine follows (passed to code the
        models do not describe, stored on an object): their use there is unknown."""
        for value in values:
            for label in value.all_labels():
                if label.channel == "random":
                    self.program.escape(label, f"{how} (line {site.line})")

    def super_value(self, expr: ast.expr) -> Value | None:
        """``super()`` in a method: the instance seen as its class's bases (a method called on
        it is the parent class's, never a library method matched by name alone)."""
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "super"):
            return None
        function = self.function
        owner = function.cls if function is not None else None
        if owner is None:
            return Value(types=frozenset({"super"}))
        bases = frozenset(owner.bases) or frozenset({"super"})
        self_value = self.env.get(function.params[0].arg) if function is not None and function.params else None
        labels = self_value.labels if self_value is not None else {}
        return Value(labels=labels, types=bases | {"super"})

    def method_keys(self, receiver: Value, method: str) -> list[str]:
        """The model keys a method call on ``receiver`` may match: ``"Type.method"`` for every
        library type the receiver may have (and its bases), ``"*.method"`` when its type is
        unknown to the models."""
        keys: list[str] = []
        known = False
        for type_name in sorted(receiver.types):
            if type_name == "super":
                known = True
                continue
            if type_name.startswith(("=", "bound:")):
                continue
            for base in self.program.class_mro(type_name):
                if base in self.program.classes or base in _CONST_TYPE_NAMES:
                    known = True
                    continue
                if _is_catalog_type(self.catalog, base):
                    known = True
                keys.append(f"{base}.{method}")
        if not known:
            keys.append(f"{UNTYPED}.{method}")
        return keys

    def method_result(self, owner: Value, method: str, node: ast.AST, args: list[Value] | None = None) -> Value:
        """The result of an implicit method call (``__enter__``, ``__iter__``, ``__getitem__``)."""
        site = self.site(node)
        results = []
        for key in self.method_keys(owner, method):
            found = self.catalog.returns.get(key)
            if found:
                results.append(Value(types=frozenset(t for t, _ in found)))
        value = self.derive(owner, f"{method}()", site) if method != "__enter__" else owner
        if method == "__getitem__":
            value = taint_only(owner.flatten())
        if method in ("__getitem__", "__iter__") and not results and owner.items is None:
            # An element of a value the models type (``conn, addr = sock.accept()``): typed like
            # it, so that its methods keep their models.
            value = replace(value, types=frozenset(t for t in owner.types if not t.startswith(("=", "bound:"))))
        return join(value, *results) if results else value

    def call_library(self, target: str, receiver: Value | None, args: list[Value], kwargs: dict[str, Value],
                     star: list[Value], node: ast.Call) -> Value | None:
        """Applies the models of ``target`` (a qualified name or ``"Type.method"``); None when
        no model names it."""
        catalog = self.catalog
        site = self.site(node)
        if receiver is None and target not in catalog.sinks:
            target = _wildcard(catalog, target)
        sinks = catalog.sinks.get(target, ())
        sanitisers = catalog.sanitisers.get(target, ())
        source = catalog.sources_call.get(target)
        returned = catalog.returns.get(target, ())
        checks = catalog.checks.get(target, ())
        renders = catalog.renders.get(target, ())
        type_source = None
        if receiver is not None and "." in target:
            type_name, _, method = target.rpartition(".")
            source_model = catalog.sources_type.get(type_name)
            if source_model is not None and method in source_model.methods:
                type_source = source_model
        constructor = receiver is None and target in catalog.bases
        if not (sinks or sanitisers or source or returned or checks or type_source or constructor or renders):
            return None
        for sink in sinks:
            self.check_sink(sink, receiver, args, kwargs, star, node, site)
        for render in renders:
            self.check_template(render, args, kwargs, site)
        for check in checks:
            self.check_misuse(check, args, kwargs, node, site)
        types = frozenset(t for t, when in returned if when is None or self.holds(when, args, kwargs) is True)
        if constructor:
            types |= {target}
        if source is not None:
            return join(self.source_value(source.channel, source.what, site), Value(types=types))
        if type_source is not None:
            return join(self.source_value(type_source.channel, f"{target.rpartition('.')[2]}() of {type_source.what}", site),
                        Value(types=types))
        inputs = [*args, *kwargs.values(), *star]
        flowing = join(*(taint_only(v.flatten()) for v in inputs))
        if receiver is not None:
            flowing = join(self.derive(receiver, f"{target.rpartition('.')[2]}()", site), flowing)
        for sanitiser in sanitisers:
            if sanitiser.when is not None and self.holds(sanitiser.when, args, kwargs) is not True:
                continue
            if sanitiser.args_contain:
                first = args[0] if args else None
                if first is None or not first.is_const or not isinstance(first.const, str) or not any(
                        c in first.const for c in sanitiser.args_contain):
                    continue
            flowing = clean(flowing, sanitiser.kinds, sanitiser.what)
        if flowing.tainted():
            flowing = add_step(flowing, step(site, f"through {_callee_text(node.func)}()"))
        elif not types and not sanitisers and not flowing.tainted() and not all(v.is_const for v in inputs):
            flowing = join(flowing, opaque(f"the result of {_callee_text(node.func)}()", site))
        return replace(flowing, types=flowing.types | types)

    def check_template(self, render: Render, args: list[Value], kwargs: dict[str, Value], site: Site) -> None:
        """A template file of the repository that writes a context variable unescaped (``|safe``,
        ``{% autoescape off %}``) is an HTML sink for the value the call passes under that name."""
        named = args[render.template_arg] if render.template_arg < len(args) else kwargs.get(render.template_keyword)
        if named is None or not named.is_const or not isinstance(named.const, str):
            return
        found = self.program.find_template(named.const)
        if found is None:
            return
        path, places = found
        if render.context_kwargs:
            context = Value(items={k: v for k, v in kwargs.items() if k != render.template_keyword})
        elif 0 <= render.context_arg < len(args):
            context = args[render.context_arg]
        else:
            context = kwargs.get(render.context_keyword, EMPTY)
        for place in places:
            value = context.get(place.variable) if context.items is not None else context.flatten()
            if value is None:
                continue
            sink = Sink(target=render.target, is_method=False, kind="xss", args=(0,), model="templates",
                        what=f"the template variable {place.variable}, written unescaped ({place.how}) at {path}:{place.line}")
            self.sink_value(sink, site, value, f"template variable {place.variable}")

    def holds(self, condition: Condition, args: list[Value], kwargs: dict[str, Value], *,
              any_of: bool = False) -> bool | None:
        """Tells whether a model's condition holds for a call: True, False, or None (unknown).
        All its keywords must match, or with ``any_of`` one of them (an ``unless`` listing
        alternatives: ``mimetype`` or ``content_type``)."""
        if any_of and len(condition.keywords) > 1:
            parts = [self.holds(Condition(keywords={k: v}, defaults=condition.defaults, positions=condition.positions),
                                args, kwargs) for k, v in condition.keywords.items()]
            return True if True in parts else None if None in parts else False
        unknown = False
        for keyword, wanted in condition.keywords.items():
            value = kwargs.get(keyword)
            if value is None and keyword in condition.positions and condition.positions[keyword] < len(args):
                value = args[condition.positions[keyword]]
            if value is None:
                if condition.defaults.get(keyword, None) != wanted:
                    return False
                continue
            known = _comparable(value)
            if known is NOT_CONSTANT:
                unknown = True
                continue
            if isinstance(wanted, list):
                if known not in wanted:
                    return False
            elif isinstance(wanted, bool):
                if bool(known) != wanted:
                    return False
            elif known != wanted:
                return False
        return None if unknown else True

    def check_sink(self, sink: Sink, receiver: Value | None, args: list[Value], kwargs: dict[str, Value],
                   star: list[Value], node: ast.Call, site: Site) -> None:
        if sink.when is not None and self.holds(sink.when, args, kwargs) is False:
            return
        if any(k in kwargs or (k in sink.positions and sink.positions[k] < len(args)) for k in sink.absent):
            return
        if sink.unless is not None and self.holds(sink.unless, args, kwargs, any_of=True) is True:
            return
        dangerous: list[tuple[Value, str]] = []
        if sink.receiver and receiver is not None:
            dangerous.append((receiver, "the receiver"))
        for position in sink.args:
            if position == -1:
                dangerous.extend((v, f"argument {i + 1}") for i, v in enumerate(args))
            elif position < len(args):
                dangerous.append((args[position], f"argument {position + 1}"))
        for keyword in sink.keywords:
            if keyword in kwargs:
                dangerous.append((kwargs[keyword], f"keyword {keyword}"))
        if star and (sink.args or sink.keywords) and not sink.target.startswith(UNTYPED + "."):
            # A method matched by its name alone on a receiver of unknown type is a sink only
            # where the call shows the argument: unpacked arguments forward whatever came in.
            dangerous.extend((v, "unpacked arguments") for v in star)
        for value, role in dangerous:
            if sink.program:
                value = _program_part(value)
            self.sink_value(sink, site, value, role)

    def sinks_for_method(self, owner: Value, method: str, args: list[Value], kwargs: dict[str, Value],
                         node: ast.AST) -> None:
        """Checks the sinks of an implicit method call (an item or attribute store)."""
        site = self.site(node)
        for key in self.method_keys(owner, method):
            for sink in self.catalog.sinks.get(key, ()):
                for position in sink.args:
                    if position < len(args):
                        self.sink_value(sink, site, args[position], f"argument {position + 1}")

    def sink_value(self, sink: Sink, site: Site, value: Value, role: str) -> None:
        """Reports what reaches a sink: flows of outside data, parameter hits for the summary,
        and the sink's evidence."""
        kind = self.catalog.kinds[sink.kind]
        labels = value.all_labels()
        partial = False
        if sink.host_fixed and value.prefix is not None and _host_fixed(value.prefix):
            if sink.host_fixed == "safe":
                self.program.record_evidence(Evidence(kind=sink.kind, site=site, state="sanitised",
                                                      detail=f"the value starts with the constant {value.prefix[:60]!r}, which fixes where it points",
                                                      sanitisers=("a constant prefix that fixes the host",)))
                return
            partial = True
        state, detail, sanitisers = "constant", "built only from constants", []
        params: list[Label] = []
        for label in labels:
            if label.safe_for(sink.kind):
                sanitisers.extend(s for s in label.sanitisers if s not in sanitisers)
                if state == "constant":
                    state, detail = "sanitised", f"sanitised or checked by {', '.join(label.sanitisers) or 'a check'}"
                continue
            if label.channel == "param":
                params.append(label)
                continue
            if label.channel == "opaque":
                if state in ("constant", "sanitised"):
                    state, detail = "unknown", f"it contains {label.what}, line {label.line}"
                continue
            if label.channel in kind.channels:
                self.program.report(Flow(kind=sink.kind, sink=sink, site=site, label=label, role=role, partial=partial))
                state, detail = "tainted", f"it contains {label.what}, line {label.line}"
            elif state in ("constant", "sanitised"):
                state, detail = "unknown", f"it contains {label.what}, line {label.line}"
        refs = sorted(t[1:] for t in value.types if t.startswith("=")) if not value.is_const else []
        if refs and state in ("constant", "sanitised"):
            state, detail = "unknown", f"it is {refs[0]}, a name whose value the analysis does not see"
        if params:
            key = (site.line, site.col, sink.kind, role)
            old = self.hits.get(key)
            hit_value = of_labels(params)
            self.hits[key] = SinkHit(sink=sink, site=site, value=join(old.value, hit_value) if old else hit_value, role=role)
            if state != "tainted":
                first = params[0]
                state, detail = ("unknown", f"it contains {first.what}.{'.'.join(first.access)} (the object's state)") if (
                    self.function is not None and self.function.bound and first.param == 0) else (
                    "parameter", f"it contains {first.what}")
        self.program.record_evidence(Evidence(kind=sink.kind, site=site, state=state, detail=detail,
                                              sanitisers=tuple(sanitisers)))

    def check_misuse(self, check: Check, args: list[Value], kwargs: dict[str, Value], node: ast.Call, site: Site) -> None:
        if check.unless is not None and self.holds(check.unless, args, kwargs, any_of=True) is True:
            return
        if check.when is not None and self.holds(check.when, args, kwargs) is not True:
            return
        if check.arg_in:
            value = args[check.arg] if check.arg < len(args) else None
            known = _comparable(value) if value is not None else NOT_CONSTANT
            if known is NOT_CONSTANT or str(known).lower() not in check.arg_in:
                return
        for keyword, wanted in check.required.items():
            value = kwargs.get(keyword)
            if value is None and keyword in check.positions and check.positions[keyword] < len(args):
                value = args[check.positions[keyword]]
            known = _comparable(value) if value is not None else None
            if value is not None and known is NOT_CONSTANT:
                return
            if value is not None and (known in wanted if isinstance(wanted, list) else
                                      bool(known) == wanted if isinstance(wanted, bool) else known == wanted):
                continue
            shown = "not passed" if value is None else f"{known!r}"
            self.program.report_misuse(Misuse(kind=check.kind, cwe=check.cwe, title=check.title, site=site,
                                              message=f"{check.message} ({keyword} is {shown})"))
            return
        if not check.required:
            self.program.report_misuse(Misuse(kind=check.kind, cwe=check.cwe, title=check.title, site=site,
                                              message=check.message))

    def call_local(self, fid: str, receiver: Value | None, args: list[Value], kwargs: dict[str, Value],
                   star: list[Value], node: ast.Call) -> Value:
        """Applies the summary of a function (or constructor) of the analysed code."""
        site = self.site(node)
        if fid in self.program.classes:
            return self.program.construct(self, fid, args, kwargs, star, node, site)
        function = self.program.functions.get(fid)
        if function is None:
            return EMPTY
        self.program.callers[fid] = self.program.callers.get(fid, 0) + 1
        bound = [receiver] if receiver is not None and function.bound else []
        return self.program.apply_summary(self, function, [*bound, *args], kwargs, star, node, site)

    # -- helpers -------------------------------------------------------------------------

    def site(self, node: ast.AST) -> Site:
        return site_of(node, self.module.path, self.scope)

    def step(self, node: ast.AST, what: str) -> Any:
        return step(self.site(node), what)


_CONST_TYPE_NAMES = frozenset({"str", "int", "float", "bool", "bytes", "NoneType", "list", "dict", "tuple", "set"})
# Builtins whose result is a function of their arguments only (Python semantics): with
# constant arguments the result is built from constants, not of unknown origin.
PURE_BUILTINS = frozenset({"str", "repr", "ascii", "format", "int", "float", "bool", "complex", "bytes", "bytearray",
                           "list", "tuple", "dict", "set", "frozenset", "sorted", "reversed", "min", "max", "sum",
                           "len", "abs", "round", "chr", "ord", "hex", "oct", "bin", "zip", "enumerate", "map",
                           "filter", "range", "iter", "next", "any", "all", "hash", "divmod", "pow", "slice",
                           "isinstance", "issubclass", "callable", "type", "id", "getattr", "hasattr", "vars"})


def _pure(refs: list[str], receiver: Value | None) -> bool:
    """True for a call whose result depends only on its inputs: a pure builtin, or a method
    of a builtin constant type (``"x".join(...)``, ``"...".format(...)``)."""
    if refs:
        return all(r in PURE_BUILTINS for r in refs)
    return receiver is not None and bool(receiver.types) and receiver.types <= _CONST_TYPE_NAMES


def _is_catalog_type(catalog: Any, name: str) -> bool:
    return (name in catalog.bases or name in catalog.sources_type
            or any(key.startswith(name + ".") for key in catalog.sinks)
            or any(t == name for entries in catalog.returns.values() for t, _ in entries))


def _comparable(value: Value) -> Any:
    """A value as a condition compares it: its constant, or the qualified name of the one
    library object it stands for (``yaml.SafeLoader``); else ``NOT_CONSTANT``."""
    if value.is_const:
        return value.const
    refs = [t[1:] for t in value.types if t.startswith("=")]
    return refs[0] if len(refs) == 1 and not value.labels else NOT_CONSTANT


def _program_part(value: Value) -> Value:
    """The part of an argument vector that names the program: element 0, or the command line
    after a shell's ``-c``; a string is itself the program (or a shell command)."""
    if value.items is None:
        return value
    first = value.items.get(0)
    if first is None:
        return value.flatten()
    if first.is_const and isinstance(first.const, str) and first.const.rsplit("/", 1)[-1] in SHELLS:
        flag = value.items.get(1)
        if flag is not None and flag.is_const and flag.const in SHELL_FLAGS:
            command = value.items.get(2)
            return command if command is not None else EMPTY
    return first


def _host_fixed(prefix: str) -> bool:
    """True when a URL prefix fixes the scheme and host (``https://h/``) or is a path on this
    site (``/x``, not ``//`` or ``/\\``)."""
    if "://" in prefix:
        rest = prefix.split("://", 1)[1]
        return "/" in rest or "?" in rest or "#" in rest
    return len(prefix) >= 2 and prefix[0] == "/" and prefix[1] not in "/\\"


def _small(left: Any, right: Any, op: ast.operator) -> bool:
    """True when folding ``left op right`` cannot build a huge constant (``10**10`` squared
    twenty times, a string repeated a million times): such results are not folded."""
    def size(value: Any) -> int:
        if isinstance(value, int):
            return value.bit_length() // 8
        return len(value) if isinstance(value, (str, bytes)) else 0

    if isinstance(op, ast.Mult):
        if isinstance(left, (str, bytes)) or isinstance(right, (str, bytes)):
            count = right if isinstance(right, int) else left if isinstance(left, int) else 0
            return count * max(size(left), size(right)) <= _MAX_CONST_LEN
        return size(left) + size(right) <= _MAX_CONST_LEN
    return size(left) <= _MAX_CONST_LEN and size(right) <= _MAX_CONST_LEN


def _wildcard(catalog: Any, target: str) -> str:
    """``sh.ls`` as ``sh.*`` when a model names every function of a module that way (``sh``
    runs a program named by the attribute); else ``target`` itself."""
    module = target.rpartition(".")[0]
    while module:
        if f"{module}.*" in catalog.sinks:
            return f"{module}.*"
        module = module.rpartition(".")[0]
    return target


def _getattr_call(node: ast.expr) -> ast.Attribute | None:
    """``getattr(obj, "name")`` (Python semantics) as the attribute it reads, else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and len(node.args) == 2 and not node.keywords and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str) and node.args[1].value.isidentifier()):
        return ast.copy_location(ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load()), node)
    return None


def _callee_text(func: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    elif parts:
        parts.append("(...)")
    return ".".join(reversed(parts)) or "a call"


def _load(target: ast.expr) -> ast.expr:
    return target


def _root_name(expr: ast.expr) -> str | None:
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _join_envs(*envs: dict[str, Value]) -> dict[str, Value]:
    if len(envs) == 1:
        return dict(envs[0])
    names: dict[str, None] = {}
    for env in envs:
        names.update(dict.fromkeys(env))
    return {name: join(*(env[name] for env in envs if name in env)) for name in names}


def _same_env(a: dict[str, Value], b: dict[str, Value]) -> bool:
    if a.keys() != b.keys():
        return False
    for name, value in a.items():
        other = b[name]
        if value is other:
            continue
        if value.labels.keys() != other.labels.keys() or value.types != other.types or value.functions != other.functions:
            return False
        if (value.items is None) != (other.items is None):
            return False
        if value.items is not None and other.items is not None and value.items.keys() != other.items.keys():
            return False
    return True


def _captures(pattern: ast.pattern, subject: Value) -> dict[str, Value]:
    """The names a ``case`` pattern binds: a name bound to a literal alternative holds that
    literal (``case "a" as x``), any other capture holds (part of) the subject."""
    names: dict[str, Value] = {}
    for node in ast.walk(pattern):
        if isinstance(node, ast.MatchAs) and node.name:
            literal = _literal_pattern(node.pattern)
            names[node.name] = literal if literal is not None else (subject if node.pattern is None else subject.flatten())
        elif isinstance(node, ast.MatchStar) and node.name:
            names[node.name] = subject.flatten()
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names[node.rest] = subject.flatten()
    return names


def _literal_pattern(pattern: ast.pattern | None) -> Value | None:
    """The value a pattern of literals admits (``"a"``, ``"a" | "b"``), else None."""
    if isinstance(pattern, ast.MatchValue) and isinstance(pattern.value, ast.Constant):
        return constant(pattern.value.value) if isinstance(pattern.value.value, _CONST_TYPES) else None
    if isinstance(pattern, ast.MatchSingleton):
        return constant(pattern.value)
    if isinstance(pattern, ast.MatchOr):
        parts = [_literal_pattern(p) for p in pattern.patterns]
        return join(*parts) if all(p is not None for p in parts) else None  # type: ignore[arg-type]
    return None


def run_module(program: Program, module: ModuleInfo) -> None:
    """Interprets a module's body once (imports, definitions, module-level code), filling its
    globals; module-level sinks are reported like any other. Idempotent."""
    if module.analysed:
        return
    module.analysed = True
    frame = Frame(program, module, None, module.globals, summarising=False)
    try:
        frame.block(module.tree.body)
    except BudgetExceeded:
        program.note(f"{module.path}: module body not analysed to the end (work budget used up)")
    except RecursionError:
        program.note(f"{module.path}: module body not analysed to the end (it nests too deep for the engine)")
    module.globals.update(frame.env)
