"""Where a value comes from: backward taint tracing inside one file.

``trace(tree, expr, sink)`` follows an expression back to its origins (the "leaves") through
f-strings, ``%``/``.format``/concatenation/``join``, containers, assignments across lines (with
the reaching definitions of ``bindings``), loop and ``with`` variables, attribute and item
reads, string methods, and calls to functions defined in the same file (their ``return``
values, with parameters mapped back to the call's arguments, up to three calls deep). Each
leaf is a constant, a parameter of the enclosing function, outside data (``sources``) or
unknown (a call into other code, an attribute of another object, an undefined name). A leaf
reached through a sanitiser for the sink (``sanitisers``) or guarded by a validation
(``guards``) is marked with it.

Some origins are not what their syntax first suggests, and are classified by what they hold:

* ``self``/``cls`` is the object a method runs on, not a value a caller passes: reaching it
  (through a method the class inherits) is an unknown origin, the object's own state.
* In library code (a file with no entry point for outside data, ``sources.entry_point``), a
  value read from an attribute or method of a parameter (``model._meta.db_table``,
  ``field.column``, ``query.extra``) is state of an object the caller passed, set by code this
  file does not show: an unknown origin, not the caller's text. The parameter itself, used
  directly, stays a parameter.
* For SQL, a name passed through an identifier quoter (``quote_name``, also via an alias such
  as ``qn = connection.ops.quote_name`` or ``map(quote_name, names)``) is safe unless it is
  outside data (the quoters do not escape); SQL text returned by a builder (``.as_sql()``,
  ``compiler.compile()``) is composed SQL whose values travel as parameters; a parameter
  named for SQL (``lhs_sql``, ``placeholders``) is a fragment its callers build.
* A file read from a fixed path in a world-writable directory (``/tmp``) is outside data:
  any local user can plant it.
* A database lookup (``get_object_or_404(Page, url=url)``, ``Page.objects.get(pk=pk)``)
  returns stored data, not its key: an unknown origin whatever the key was. A method reached
  through ``super()`` is code this file does not show, whatever its name.

The walk uses an explicit work list, so nesting depth does not matter, and a deterministic work
budget (steps plus statements walked by binding look-ups) bounds pathological files: whatever is
left untraced becomes an ``unknown`` leaf, never a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from . import bindings, guards, sanitisers, sources
from .sinks import SinkKind
from .tree import FunctionNode, SourceTree, walk_scope, words

OriginKind = Literal["constant", "parameter", "request", "unknown"]
RANK: dict[str, int] = {"constant": 0, "unknown": 1, "parameter": 2, "request": 3}

# Work allowed per trace: steps of the trace plus statements walked past by binding look-ups.
_MAX_WORK = 100_000
_MAX_CALL_DEPTH = 3
# Calls that only reshape their arguments (the result carries their taint, nothing else).
_PASS_THROUGH = frozenset({
    "str", "bytes", "bytearray", "repr", "format", "list", "tuple", "set", "frozenset", "dict",
    "sorted", "reversed", "min", "max", "sum", "next", "iter", "enumerate", "zip", "map",
    "filter", "open", "io.open", "io.BytesIO", "io.StringIO", "os.path.join", "os.path.abspath",
    "os.path.normpath", "os.path.realpath", "os.path.expanduser", "os.path.dirname",
    "os.path.basename", "os.path.splitext", "os.fspath", "os.fsencode", "os.fsdecode",
    "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "base64.b64decode",
    "base64.b64encode", "base64.urlsafe_b64decode", "base64.urlsafe_b64encode", "base64.b32decode",
    "binascii.unhexlify", "binascii.a2b_base64", "bytes.fromhex", "codecs.decode", "zlib.decompress",
    "gzip.decompress", "urllib.parse.unquote", "urllib.parse.unquote_plus", "urllib.parse.urljoin",
    "json.loads", "json.dumps", "json.load", "textwrap.dedent", "textwrap.indent", "copy.copy",
    "copy.deepcopy", "tarfile.open", "zipfile.ZipFile", "tarfile.TarFile", "shlex.split",
    "typing.cast", "getattr",
})
# Calls whose result holds nothing a caller supplied.
_CONSTANT_RESULTS = frozenset({
    "uuid.uuid4", "uuid.uuid1", "time.time", "time.monotonic", "os.getpid", "os.getcwd",
    "tempfile.mkdtemp", "tempfile.gettempdir", "secrets.token_hex", "secrets.token_urlsafe",
    "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.date.today", "random.random",
    "random.randint", "locals", "globals", "dict", "list", "set", "tuple", "object",
})
_WORLD_WRITABLE = ("/tmp/", "/var/tmp/", "/dev/shm/")
# Database lookups: the result is what the database holds, the arguments only select it.
_LOOKUP_FUNCTIONS = frozenset({"get_object_or_404", "get_list_or_404", "aget_object_or_404", "aget_list_or_404"})
_MANAGER_METHODS = frozenset({"get", "aget", "filter", "exclude", "first", "last", "afirst", "alast", "get_or_create",
                              "update_or_create", "all", "values", "values_list", "select_related",
                              "prefetch_related", "only", "defer", "order_by", "latest", "earliest", "in_bulk"})
# Words of a parameter name that say it holds SQL text rather than a value.
_SQL_FRAGMENT_WORDS = frozenset({"sql", "placeholder", "placeholders"})
_NUMERIC_OPS = (ast.Div, ast.FloorDiv, ast.Pow, ast.LShift, ast.RShift, ast.MatMult)


@dataclass(frozen=True, kw_only=True)
class Leaf:
    """One origin of a traced value.

    Attributes:
        line: Line where the origin appears.
        kind: ``"constant"``, ``"parameter"``, ``"request"`` (outside data) or ``"unknown"``.
        detail: What the origin is, for rationales.
        channel: For outside data: ``"http"``, ``"network"``, ``"cli"``, ``"stdin"``, ``"env"``.
        sanitiser: What makes this origin safe for the sink, if anything.
        through: A call into other code the value passed through (it may or may not carry the
            taint; the tracer assumes it does).
        function: For a parameter: the name of the function that declares it.
        param: For a parameter: its name.
    """

    line: int
    kind: OriginKind
    detail: str
    channel: str | None = None
    sanitiser: str | None = None
    through: str | None = None
    function: str | None = None
    param: str | None = None

    @property
    def dangerous(self) -> bool:
        """True for a non-constant origin that nothing sanitised."""
        return self.kind != "constant" and self.sanitiser is None

    def sort_key(self) -> tuple[int, str, str, str, str, str, str, str]:
        """A total order over leaves (optional fields compare as empty text)."""
        return (self.line, self.kind, self.detail, self.channel or "", self.sanitiser or "",
                self.through or "", self.function or "", self.param or "")


@dataclass(frozen=True, kw_only=True)
class Trace:
    """The origins of one value.

    Attributes:
        leaves: Every origin found, sorted by ``Leaf.sort_key``, without duplicates.
        exhausted: True when the step budget ran out (the leaves are then incomplete and an
            ``unknown`` leaf says so).
    """

    leaves: tuple[Leaf, ...]
    exhausted: bool = False

    def dangerous(self) -> tuple[Leaf, ...]:
        """Returns the unsanitised non-constant leaves, worst first (read-only)."""
        found = [leaf for leaf in self.leaves if leaf.dangerous]
        return tuple(sorted(found, key=lambda leaf: (-RANK[leaf.kind], leaf.through is not None, leaf.line, leaf.detail)))

    def worst(self) -> Leaf | None:
        """Returns the most dangerous leaf, or None when every leaf is constant or sanitised."""
        found = self.dangerous()
        return found[0] if found else None

    def sanitisers(self) -> tuple[str, ...]:
        """Returns the distinct sanitisers applied to non-constant leaves, in order."""
        seen: list[str] = []
        for leaf in self.leaves:
            if leaf.kind != "constant" and leaf.sanitiser and leaf.sanitiser not in seen:
                seen.append(leaf.sanitiser)
        return tuple(seen)


Frame = tuple[FunctionNode, ast.Call]


@dataclass(frozen=True)
class _Item:
    node: ast.AST
    sanitiser: str | None
    through: str | None
    frames: tuple[Frame, ...]
    # Set once the value is an identifier quoted for SQL (safe unless it is outside data).
    quoted: str | None = None
    # Set once the value is read from an attribute or method of the traced object.
    member: str | None = None


class Tracer:
    """Traces values in one file for one sink kind; also answers ``guards.Facts`` questions.

    Args:
        tree: The parsed file.
        sink: The sink kind the traced values reach.
    """

    def __init__(self, tree: SourceTree, sink: SinkKind) -> None:
        self.tree = tree
        self.sink = sink
        self._budget = bindings.Budget(_MAX_WORK)

    def trace(self, expr: ast.AST, *, sanitiser: str | None = None) -> Trace:
        """Returns the origins of ``expr``.

        Args:
            expr: An expression in ``self.tree``.
            sanitiser: A sanitiser already known to cover ``expr`` (e.g. a MAC check guarding
                the sink), applied to every leaf.

        Returns:
            The trace; deterministic for the same tree and expression.
        """
        work: list[_Item] = [_Item(expr, sanitiser, None, ())]
        # Keyed by the nodes themselves (hashed by identity), which also keeps synthetic nodes
        # alive so that no id is ever reused within one trace.
        seen: set[tuple[ast.AST, str | None, str | None, tuple[ast.Call, ...], str | None, str | None]] = set()
        leaves: set[Leaf] = set()
        self._budget = bindings.Budget(_MAX_WORK)
        while work:
            item = work.pop()
            key = (item.node, item.sanitiser, item.through, tuple(call for _, call in item.frames), item.quoted, item.member)
            if key in seen:
                continue
            seen.add(key)
            if not self._budget.spend():
                leaves.add(Leaf(line=getattr(expr, "lineno", 0), kind="unknown", detail="the rest of a value too large to trace"))
                return Trace(leaves=tuple(sorted(leaves, key=Leaf.sort_key)), exhausted=True)
            for produced in self._step(item):
                if isinstance(produced, Leaf):
                    leaves.add(produced)
                else:
                    work.append(produced)
        return Trace(leaves=tuple(sorted(leaves, key=Leaf.sort_key)))

    # guards.Facts
    def literal(self, expr: ast.expr) -> ast.expr:
        """Follows a name to the one expression bound to it; returns ``expr`` otherwise."""
        current = expr
        for _ in range(8):
            if not isinstance(current, ast.Name):
                return current
            bound = bindings.single_value(self.tree, current)
            if bound is None:
                return current
            current = bound
        return current

    def is_constant(self, expr: ast.expr) -> bool:
        """Tells whether every value ``expr`` can have is built from constants."""
        if _pure_literal(expr):
            return True
        return all(leaf.kind == "constant" for leaf in Tracer(self.tree, "any").trace(expr).leaves)

    def _leaf(self, item: _Item, node: ast.AST, kind: OriginKind, detail: str, **extra: str | None) -> Leaf:
        sanitiser = extra.pop("sanitiser", None) or item.sanitiser
        if item.quoted is not None and sanitiser is None:
            if kind == "request":
                detail += f" (only put in quotes by {item.quoted}, which does not stop a name chosen by an attacker)"
            else:
                sanitiser = f"{item.quoted} (a name from the schema or the code, not outside data)"
        return Leaf(line=getattr(node, "lineno", 0), kind=kind, detail=detail,
                    sanitiser=sanitiser if kind != "constant" else None, through=item.through, **extra)

    def _push(self, item: _Item, node: ast.AST | None, *, sanitiser: str | None = None, through: str | None = None,
              frames: tuple[Frame, ...] | None = None, quoted: str | None = None, member: str | None = None) -> _Item | Leaf:
        if node is None:
            return self._leaf(item, item.node, "constant", "nothing (None)")
        return _Item(node, item.sanitiser or sanitiser, item.through or through, item.frames if frames is None else frames,
                     item.quoted or quoted, item.member or member)

    def _step(self, item: _Item) -> Iterator[_Item | Leaf]:
        node = item.node
        segment = self.tree.segment(node, 50)
        if isinstance(node, ast.Constant):
            yield self._leaf(item, node, "constant", repr(node.value)[:40])
        elif isinstance(node, ast.JoinedStr):
            parts = [v for v in node.values if isinstance(v, ast.FormattedValue)]
            if not parts:
                yield self._leaf(item, node, "constant", "a constant f-string")
            yield from (self._formatted(item, part) for part in parts)
        elif isinstance(node, ast.FormattedValue):
            yield self._formatted(item, node)
        elif isinstance(node, ast.BinOp):
            if isinstance(node.op, _NUMERIC_OPS):
                yield self._leaf(item, node, "constant", f"the number {segment}")
            else:
                yield self._push(item, node.left)
                yield self._push(item, node.right)
        elif isinstance(node, ast.UnaryOp):
            yield self._leaf(item, node, "constant", f"the number or boolean {segment}")
        elif isinstance(node, ast.Compare):
            yield self._leaf(item, node, "constant", f"the boolean {segment}")
        elif isinstance(node, ast.BoolOp):
            yield from (self._push(item, value) for value in node.values)
        elif isinstance(node, ast.IfExp):
            yield self._push(item, node.body)
            yield self._push(item, node.orelse)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            if not node.elts:
                yield self._leaf(item, node, "constant", "an empty collection")
            yield from (self._push(item, element) for element in node.elts)
        elif isinstance(node, ast.Dict):
            if not node.values:
                yield self._leaf(item, node, "constant", "an empty dict")
            yield from (self._push(item, part) for part in [*node.keys, *node.values] if part is not None)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            yield self._push(item, node.elt)
        elif isinstance(node, ast.DictComp):
            yield self._push(item, node.key)
            yield self._push(item, node.value)
        elif isinstance(node, (ast.Starred, ast.Await, ast.NamedExpr)):
            yield self._push(item, node.value)
        elif isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            yield self._leaf(item, node, "constant", "a function")
        elif isinstance(node, ast.Name):
            yield from self._name(item, node)
        elif isinstance(node, ast.Attribute):
            yield from self._attribute(item, node)
        elif isinstance(node, ast.Subscript):
            yield from self._subscript(item, node)
        elif isinstance(node, ast.Call):
            yield from self._call(item, node)
        elif isinstance(node, ast.arg):
            yield from self._parameter(item, node)
        else:
            yield self._leaf(item, node, "unknown", f"the expression {segment}")

    def _formatted(self, item: _Item, part: ast.FormattedValue) -> _Item | Leaf:
        spec = part.format_spec
        if isinstance(spec, ast.JoinedStr) and len(spec.values) == 1 and isinstance(spec.values[0], ast.Constant):
            text = str(spec.values[0].value)
            if text[-1:] in ("d", "f", "e", "g", "x", "o", "b", "%", "n"):
                return self._push(item, part.value, sanitiser=f"the numeric format spec ':{text}'")
        return self._push(item, part.value)

    def _name(self, item: _Item, node: ast.Name) -> Iterator[_Item | Leaf]:
        if node.id in ("__file__", "__name__", "__doc__", "__package__"):
            yield self._leaf(item, node, "constant", node.id)
            return

        def guard_for(test: ast.expr, holds: bool) -> str | None:
            found = guards.validation(self.tree, self, test, node.id, self.sink, holds)
            if found is None and self.sink == "data":
                found = guards.integrity_check(self.tree, test, holds)
            return found

        for binding in bindings.reaching(self.tree, node, guard_for, self._budget):
            if binding.kind == "value":
                yield self._push(item, binding.node, sanitiser=binding.guard)
            elif binding.kind == "parameter":
                yield self._push(item, binding.node, sanitiser=binding.guard)
            elif binding.kind == "constant":
                yield self._leaf(item, node, "constant", binding.detail)
            else:
                yield self._leaf(item, node, "unknown", binding.detail, sanitiser=binding.guard)

    def _parameter(self, item: _Item, arg: ast.arg) -> Iterator[_Item | Leaf]:
        owner = self.tree.parent(self.tree.parent(arg) or arg)
        if item.frames and item.frames[-1][0] is owner:
            function, call = item.frames[-1]
            argument = argument_for(function, call, arg)
            if argument is None:
                yield self._leaf(item, call, "constant", f"the default of {arg.arg!r}")
            else:
                yield self._push(item, argument, frames=item.frames[:-1])
            return
        if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
            source = sources.handler_parameter(self.tree, owner, arg.arg, self.sink)
            if source is not None:
                yield self._leaf(item, arg, "request", source.description, channel=source.channel, sanitiser=source.sanitiser)
                return
            positional = [*owner.args.posonlyargs, *owner.args.args]
            if arg.arg in ("self", "cls") and positional[:1] == [arg] and self.tree.enclosing_class(owner) is not None:
                yield self._leaf(item, arg, "unknown", f"the state of the object {arg.arg!r} in {owner.name}() (set by code this file does not show)")
                return
            if item.member is not None and sources.entry_point(self.tree) is None:
                yield self._leaf(item, arg, "unknown", f"{item.member} of the object passed as {arg.arg!r} to {owner.name}() "
                                 "(what the object holds is set by code this file does not show)",
                                 function=owner.name, param=arg.arg)
                return
            if self.sink == "sql" and set(words(arg.arg)) & _SQL_FRAGMENT_WORDS:
                yield self._leaf(item, arg, "unknown", f"parameter {arg.arg!r} of {owner.name}(), SQL text by its name "
                                 "(a fragment its callers build)", function=owner.name, param=arg.arg)
                return
            yield self._leaf(item, arg, "parameter", f"parameter {arg.arg!r} of {owner.name}()", function=owner.name, param=arg.arg)
            return
        yield self._leaf(item, arg, "unknown", f"parameter {arg.arg!r} of a lambda")

    def _attribute(self, item: _Item, node: ast.Attribute) -> Iterator[_Item | Leaf]:
        source = sources.source_of(self.tree, node)
        if source is not None:
            yield self._leaf(item, node, "request", source.description, channel=source.channel)
            return
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            yield from self._member(item, node)
            return
        if self._is_module(node):
            yield self._leaf(item, node, "unknown", f"{self.tree.segment(node, 40)} (defined in another module)")
            return
        restricted = sources.cli_option_restriction(self.tree, node, self)
        yield self._push(item, node.value, member=f"the attribute .{node.attr}", sanitiser=restricted)

    def _member(self, item: _Item, node: ast.Attribute) -> Iterator[_Item | Leaf]:
        """``self.attr``: the class attribute, or every ``self.attr = ...`` in the class's methods."""
        function = self.tree.function_of(node)
        owner = self.tree.enclosing_class(function) if function is not None else None
        if owner is None:
            yield self._leaf(item, node, "unknown", f"{self.tree.segment(node, 40)}")
            return
        assigned = _class_members(self.tree, owner).get(node.attr, ())
        if not assigned:
            yield self._leaf(item, node, "unknown", f"{self.tree.segment(node, 40)} (set outside this class)")
        for value in assigned:
            yield self._push(item, value)

    def _subscript(self, item: _Item, node: ast.Subscript) -> Iterator[_Item | Leaf]:
        source = sources.source_of(self.tree, node)
        if source is not None:
            yield self._leaf(item, node, "request", source.description, channel=source.channel)
            return
        table = self.literal(node.value)
        if isinstance(table, (ast.Dict, ast.List, ast.Tuple)) and self.is_constant(table):
            yield self._leaf(item, node, "constant", f"an entry of the constant table {self.tree.segment(node.value, 30)}")
            return
        yield self._push(item, node.value)

    def _call(self, item: _Item, node: ast.Call) -> Iterator[_Item | Leaf]:
        tree = self.tree
        name = tree.qualname(node.func)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        receiver = node.func.value if isinstance(node.func, ast.Attribute) and not self._is_module(node.func) else None
        arguments = [*node.args, *(k.value for k in node.keywords)]
        by_name = sanitisers.call_sanitiser(name, None, self.sink)
        by_method = sanitisers.call_sanitiser(None, method, self.sink) if receiver is not None else None
        if by_method is None and self.sink == "html" and method == "translate" and receiver is not None and len(node.args) == 1:
            # A table the file changes after building it (TABLE.update(...)) has several bindings: literal() keeps the name.
            by_method = sanitisers.html_translation(self.literal(node.args[0]))
        if by_name is not None or by_method is not None:
            covered = arguments if by_name is not None else [receiver, *arguments]
            if not covered:
                yield self._leaf(item, node, "constant", f"the result of {name}()")
            yield from (self._push(item, part, sanitiser=by_name or by_method) for part in covered if part is not None)
            return
        quoter = sanitisers.identifier_quoter(self._function_name(node.func), self.sink) if self.sink == "sql" else None
        if quoter is not None:
            if not arguments:
                yield self._leaf(item, node, "constant", f"the result of {name}()")
            yield from (self._push(item, part, quoted=quoter) for part in arguments)
            return
        builder = sanitisers.sql_builder(method, self.sink) if receiver is not None else None
        if builder is not None:
            yield self._leaf(item, node, "unknown", f"the result of {tree.segment(node, 40)}", sanitiser=builder)
            return
        if name == "map" and len(node.args) >= 2 and not node.keywords:
            mapped = self._function_name(node.args[0])
            by_mapped = sanitisers.call_sanitiser(self._qualified_function(node.args[0]), None, self.sink) or (
                sanitisers.call_sanitiser(None, mapped, self.sink) if isinstance(node.args[0], ast.Attribute) else None)
            quoter = sanitisers.identifier_quoter(mapped, self.sink)
            if by_mapped is not None or quoter is not None:
                yield from (self._push(item, part, sanitiser=by_mapped, quoted=quoter) for part in node.args[1:])
                return
        source = sources.source_of(tree, node)
        if source is not None:
            yield self._leaf(item, node, "request", source.description, channel=source.channel)
            return
        lookup = self._lookup(node, name, method)
        if lookup is not None:
            yield self._leaf(item, node, "unknown", f"{lookup} (stored data: the arguments are only the lookup key)")
            return
        if name == "open" and node.args and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith(_WORLD_WRITABLE):
            yield self._leaf(item, node, "request", f"the file {node.args[0].value}, in a world-writable directory where any local user can plant it",
                             channel="local")
            return
        if name in _CONSTANT_RESULTS and not arguments:
            yield self._leaf(item, node, "constant", f"the result of {name}()")
            return
        if name in _PASS_THROUGH:
            if not arguments:
                yield self._leaf(item, node, "constant", f"the result of {name}()")
            yield from (self._push(item, argument) for argument in arguments)
            return
        callee = self._callee(node)
        if callee is not None and len(item.frames) < _MAX_CALL_DEPTH and all(f[0] is not callee for f in item.frames):
            frames = (*item.frames, (callee, node))
            returned = [n.value for n in walk_scope(callee) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) and n.value is not None]
            if not returned:
                yield self._leaf(item, node, "constant", f"{callee.name}() returns nothing")
            yield from (self._push(item, value, frames=frames) for value in returned)
            return
        label = name or tree.segment(node.func, 30)
        if receiver is not None:
            # A method of some object: its result derives from the object and the arguments.
            parent = isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super"
            through = None if _is_data_method(method) and not parent else f"{label}()"
            table = self.literal(receiver)
            if method in ("get", "pop", "setdefault") and isinstance(table, ast.Dict) and self.is_constant(table):
                # A lookup in a constant table returns one of its values or the default.
                arguments = arguments[1:]
            yield self._push(item, receiver, through=through, member=None if through is None else f"the result of .{method}()")
            yield from (self._push(item, argument, through=through) for argument in arguments)
            return
        yield self._leaf(item, node, "unknown", f"the result of {label}() (defined elsewhere)")
        yield from (self._push(item, argument, through=f"{label}()") for argument in arguments)

    def _lookup(self, node: ast.Call, name: str | None, method: str | None) -> str | None:
        """Describes a database lookup (``get_object_or_404(Page, url=url)``,
        ``Page.objects.get(pk=pk)``), whose result is a stored row, not its key; else None."""
        if (name or "").rsplit(".", 1)[-1] in _LOOKUP_FUNCTIONS:
            return f"the row {self.tree.segment(node, 50)} looks up"
        if method not in _MANAGER_METHODS:
            return None
        current: ast.expr = node.func
        while isinstance(current, (ast.Attribute, ast.Call)):
            if isinstance(current, ast.Attribute) and current.attr == "objects":
                return f"the rows {self.tree.segment(node, 50)} looks up"
            current = current.value if isinstance(current, ast.Attribute) else current.func
        return None

    def _function_name(self, func: ast.expr) -> str | None:
        """The last name of a called function: ``quote_name`` for ``self.ops.quote_name`` and for
        ``qn`` after ``qn = connection.ops.quote_name``."""
        target = self.literal(func) if isinstance(func, ast.Name) else func
        if isinstance(target, ast.Attribute):
            return target.attr
        return target.id if isinstance(target, ast.Name) else None

    def _qualified_function(self, func: ast.expr) -> str | None:
        """The qualified name of a function passed as a value (``map(escape, items)``)."""
        return self.tree.qualname(func) if isinstance(func, (ast.Name, ast.Attribute)) else None

    def _is_module(self, func: ast.Attribute) -> bool:
        """Tells whether ``func`` is ``module.function`` (an imported module, not an object)."""
        base = func.value
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(base, ast.Name) or base.id not in self.tree.imports:
            return False
        return all(b.kind == "unknown" for b in bindings.reaching(self.tree, base, lambda test, holds: None))

    def _callee(self, call: ast.Call) -> FunctionNode | None:
        """Finds the same-file definition a call runs: ``f(...)`` or ``self.f(...)``."""
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in self.tree.imports:
                return None
            return self.tree.module_function(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            function = self.tree.function_of(call)
            owner = self.tree.enclosing_class(function) if function is not None else None
            if owner is not None:
                for stmt in owner.body:
                    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == func.attr:
                        return stmt
        return None


def _class_members(tree: SourceTree, owner: ast.ClassDef) -> dict[str, tuple[ast.AST, ...]]:
    """What a class binds to each attribute name: class-level assignments, methods, and
    ``self.attr = ...`` in its methods (in source order). Built once per class and tree."""
    memo: dict[ast.ClassDef, dict[str, tuple[ast.AST, ...]]] = tree.memo.setdefault("taint.class_members", {})
    found = memo.get(owner)
    if found is not None:
        return found
    members: dict[str, list[ast.AST]] = {}
    for stmt in owner.body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    members.setdefault(target.id, []).append(stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            members.setdefault(stmt.target.id, []).append(stmt.value)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            members.setdefault(stmt.name, []).append(stmt)
            for inner in walk_scope(stmt):
                if isinstance(inner, ast.Assign):
                    for target in inner.targets:
                        if _is_self_attr(target, None):
                            members.setdefault(target.attr, []).append(inner.value)  # type: ignore[attr-defined]
                elif isinstance(inner, (ast.AnnAssign, ast.AugAssign)) and _is_self_attr(inner.target, None) and inner.value is not None:
                    members.setdefault(inner.target.attr, []).append(inner.value)  # type: ignore[attr-defined]
    found = {name: tuple(values) for name, values in members.items()}
    memo[owner] = found
    return found


def _pure_literal(expr: ast.expr) -> bool:
    """A display of constants only (``{"a", "b"}``, ``frozenset({...})``), checked without tracing.

    Allowlists and lookup tables can hold tens of thousands of entries; tracing each one would
    exhaust the step budget and turn a valid allowlist into an unknown.
    """
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("frozenset", "set", "tuple", "list", "dict") and len(expr.args) == 1 and not expr.keywords:
        expr = expr.args[0]
    if not isinstance(expr, (ast.Set, ast.List, ast.Tuple, ast.Dict, ast.Constant)):
        return False
    return all(isinstance(node, (ast.Set, ast.List, ast.Tuple, ast.Dict, ast.Constant, ast.Load)) for node in ast.walk(expr))


def trace(tree: SourceTree, expr: ast.AST, sink: SinkKind, *, sanitiser: str | None = None) -> Trace:
    """Returns the origins of ``expr`` for ``sink`` (see ``Tracer.trace``).

    Args:
        tree: The parsed file.
        expr: The expression to trace.
        sink: The sink kind the value reaches.
        sanitiser: A sanitiser already known to cover the whole value.

    Returns:
        The trace.
    """
    return Tracer(tree, sink).trace(expr, sanitiser=sanitiser)


# Methods of strings, bytes, containers, files, paths and responses: results derive from the object.
_DATA_METHODS = frozenset(dir(str)) | frozenset(dir(bytes)) | frozenset(dir(list)) | frozenset(dir(dict)) | frozenset({
    "getlist", "read", "readline", "readlines", "getvalue", "decode", "encode", "json", "as_posix",
    "resolve", "absolute", "with_suffix", "with_name", "joinpath", "read_text", "read_bytes",
    "extractfile", "getmembers", "getnames", "namelist", "open", "geturl", "groups", "group",
})


def _is_data_method(method: str | None) -> bool:
    return method is not None and method in _DATA_METHODS and not method.startswith("_")


def _is_self_attr(target: ast.expr, attr: str | None) -> bool:
    """``self.attr`` (any attribute of ``self`` when ``attr`` is None)."""
    return (isinstance(target, ast.Attribute) and (attr is None or target.attr == attr)
            and isinstance(target.value, ast.Name) and target.value.id == "self")


def argument_for(function: FunctionNode, call: ast.Call, arg: ast.arg) -> ast.expr | None:
    """Returns the expression a call passes for one parameter of the called function.

    Args:
        function: The called function.
        call: A call of it (``self.f(...)`` skips the ``self`` parameter).
        arg: The parameter.

    Returns:
        The argument expression (for ``*args``, a tuple of the extra positional arguments; with
        ``*seq``/``**map`` unpacking, the unpacked expression), the parameter's default, or
        None when the call passes nothing and there is no default.
    """
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    skip = 1 if isinstance(call.func, ast.Attribute) and positional and positional[0].arg in ("self", "cls") else 0
    if arg in positional:
        index = positional.index(arg) - skip
        if 0 <= index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
            return call.args[index]
    for keyword in call.keywords:
        if keyword.arg == arg.arg:
            return keyword.value
    if arg is args.vararg:
        extra = call.args[len(positional) - skip:]
        return ast.Tuple(elts=list(extra), ctx=ast.Load(), lineno=call.lineno, col_offset=call.col_offset) if extra else None
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        starred = [a.value for a in call.args if isinstance(a, ast.Starred)] + [k.value for k in call.keywords if k.arg is None]
        return starred[0]
    return _default(function, arg)


def _default(function: FunctionNode, arg: ast.arg) -> ast.expr | None:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    if arg in positional:
        offset = len(positional) - len(args.defaults)
        index = positional.index(arg)
        return args.defaults[index - offset] if index >= offset else None
    if arg in args.kwonlyargs:
        return args.kw_defaults[args.kwonlyargs.index(arg)]
    return None
