"""Evaluating expressions to ``Value``s, the expression half of the abstract interpreter
(``interp.Frame``).

Literals become constants (folded through operators while small), names resolve to their
binding (local, closure, the module's globals, a builtin, a library reference), attribute
reads go through the library models and the analysed code's classes, string building
(``+``, ``%``, f-strings) joins its parts and keeps a constant prefix, containers remember
their keys, and a condition folds to True or False when it is constant.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import replace
from typing import Any

from . import routes
from .facts import Site
from .texts import format_pieces, format_tail, joined_text, tail_of, texts_of
from .values import (EMPTY, NOT_CONSTANT, UNKNOWN_KEYS, Label, Value, bounded, constant, join, of_labels, placed_after,
                     taint_only, unmarked)

BUILTINS = frozenset(dir(builtins))
# Functions that import a module by its name and return it: "top" returns the top-level package
# unless a fromlist is given (``__import__``), "named" the module named (``import_module``).
_IMPORTERS = {"__import__": "top", "builtins.__import__": "top", "importlib.__import__": "top",
              "importlib.import_module": "named"}
_IMPORTER_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in _IMPORTERS)
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
CONST_TYPES = (str, int, float, bool, bytes, type(None))
_MAX_CONST_LEN = 4096


class Expressions:
    """Expression evaluation, mixed into ``interp.Frame``."""

    def expr(self, node: ast.expr | None) -> Value:  # noqa: C901 - one dispatch over expression kinds
        """Evaluates an expression."""
        if node is None:
            return EMPTY
        self.program.budget.spend()
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, (str, bytes)) and len(value) > _MAX_CONST_LEN:
                return Value(prefix=value[:_MAX_CONST_LEN] if isinstance(value, str) else None,
                             suffix=value[-_MAX_CONST_LEN:] if isinstance(value, str) else None)
            return constant(value) if isinstance(value, CONST_TYPES) else EMPTY
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(self.expr(node.value), node.attr, node)
        if isinstance(node, ast.Call):
            dynamic = self.getattr_call(node)
            if dynamic is not None:  # getattr(obj, "name") is obj.name
                return self.attribute(self.expr(dynamic.value), dynamic.attr, node)
            imported = (self.dynamic_import(node) or self.namespace_of(node) or self.partial_object(node)
                        or self.method_wrapper(node))
            if imported is not None:  # __import__("os") is the module os, vars(os) its namespace
                return imported
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
                return constant(result) if isinstance(result, CONST_TYPES) else join(*values)
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
            imported = self.program.imported_name(base, name)
            if imported is not None:
                return imported
        return opaque(f"{name} (not defined where the engine can see)", self.site(node))

    def attribute(self, owner: Value, attr: str, node: ast.AST) -> Value:
        """Reads ``owner.attr``: a library reference, a known item, a modelled source or type,
        a local class's attribute, or the owner's taint."""
        site = self.site(node)
        fixed = self.route_fixed(owner, attr)
        if fixed is not None:
            return fixed
        refs = sorted(t[1:] for t in owner.types if t.startswith("="))
        stored = owner.items.get("." + attr) if refs and owner.items else None
        if stored is not None:  # stored on a library object by this function (``g.user = ...``)
            return stored
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
        getter = False
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
                    function = self.program.functions.get(method) if method is not None else None
                    if function is not None and function.is_property:
                        # ``obj.name`` of a property is the call ``obj.name()`` (Python's descriptors).
                        # On a parameter (``self`` in a summary being computed) the read stays a
                        # parameter's member, resolved where the summary is applied to an object:
                        # a chain of getters then costs one application each, not twice the next.
                        # Applying a summary reads the attribute again where the getter reads
                        # ``self.name`` (its own or another property's): such a read inside the
                        # read is only the owner's data, or the reads would never end.
                        if _parameter(owner):
                            break
                        getter = True
                        if method not in self.program.reading_properties and \
                                len(self.program.reading_properties) < MAX_NESTED_READS:
                            read = ast.copy_location(ast.Call(func=node, args=[], keywords=[]), node)
                            self.program.reading_properties.add(method)
                            try:
                                parts.append(self.call_local(method, owner, [], {}, [], read))
                            finally:
                                self.program.reading_properties.discard(method)
                        break
                    if method is not None:
                        parts.append(Value(functions=frozenset({method}), types=frozenset({"bound:" + type_name})))
                        break
                    if attr in info.attributes:
                        parts.append(info.attributes[attr])
                        break
                source = self.catalog.sources_type.get(base)
                returned = self.catalog.returns.get(f"{base}.{attr}")
                typed = Value(types=frozenset(t for t, _ in returned or ()))
                if source is not None and attr in source.attributes:  # outside data, of its type when modelled
                    parts.append(join(self.source_value(source.channel, f"{attr} of {source.what}", site,
                                                        own_url=attr in source.own_url), typed))
                    break
                if returned:
                    parts.append(typed)
                    break
        if getter:  # what the getter returns, not the object's own data
            return join(*parts) if parts else self.derive(owner, attr, site)
        derived = self.derive(owner, attr, site)
        if parts and not derived.labels and derived.items is None:
            return join(*parts)  # a class's own attribute keeps what is known per key (a dict's items)
        return join(derived, *parts) if parts else derived

    def route_fixed(self, owner: Value, attr: str) -> Value | None:
        """``request.path`` where the routes reaching this function fix it (``routes``): the
        route's text, not outside data; None elsewhere."""
        if self.function is None or owner.labels or owner.items is not None:
            return None
        for type_name in owner.types:
            for base in self.program.class_mro(type_name):
                source = self.catalog.sources_type.get(base)
                if source is not None and attr in source.route_fixed:
                    return routes.fixed_path(self.program, self.function)
        return None

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

    def dynamic_import(self, node: ast.Call) -> Value | None:
        """The module a dynamic import of a constant name returns, as ``import`` binds it, or
        None when ``node`` is not one.

        Python's semantics (the ``importlib`` documentation): ``__import__("a.b")`` returns the
        top-level package ``a`` unless a non-empty ``fromlist`` is given, then ``a.b``;
        ``importlib.import_module("a.b")`` returns ``a.b``. A relative name, a name that is not
        a constant, or an unknown ``fromlist`` gives None (the call is then an ordinary call).
        """
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if called not in _IMPORTER_NAMES or not node.args:
            return None
        refs = {t[1:] for t in self.expr(func).types if t.startswith("=")}
        kinds = {_IMPORTERS[r] for r in refs if r in _IMPORTERS}
        if len(kinds) != 1:
            return None
        name = self.expr(node.args[0])
        if not (name.is_const and isinstance(name.const, str) and all(p.isidentifier() for p in name.const.split("."))):
            return None
        qualified = name.const
        if kinds == {"top"}:
            fromlist = node.args[3] if len(node.args) > 3 else next(
                (k.value for k in node.keywords if k.arg == "fromlist"), None)
            wanted = self.expr(fromlist) if fromlist is not None else constant(None)
            if not wanted.is_const:
                return None
            qualified = qualified if wanted.const else qualified.split(".")[0]
        return self.library_name(qualified, node)

    def getattr_call(self, node: ast.expr) -> ast.Attribute | None:
        """``getattr(obj, name)`` or ``getattr(obj, name, default)`` (Python's semantics) as the
        attribute it reads, when ``name`` folds to a constant identifier (``"sys" + "tem"``, a
        variable holding ``"system"``), else None. A default is ignored: the attribute is what
        the call reads whenever the object has it."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and len(node.args) in (2, 3) and not node.keywords):
            return None
        name = node.args[1]
        attr = name.value if isinstance(name, ast.Constant) else self.expr(name).const
        if not (isinstance(attr, str) and attr.isidentifier()) or "=getattr" not in self.expr(node.func).types:
            return None
        return ast.copy_location(ast.Attribute(value=node.args[0], attr=attr, ctx=ast.Load()), node)

    def partial_object(self, node: ast.Call) -> Value | None:
        """``functools.partial(f, *args, **keywords)`` as a value that stands for it (kept in
        ``program.partials`` under where it was made), or None when ``node`` is not such a call
        or unpacks ``*``/``**`` into it. Calling the value calls ``f`` with ``args`` first, then
        the call's own, and the keywords merged, the call's own winning (Python's semantics,
        the ``functools`` documentation): ``Calls.call_partial``."""
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if (called != "partial" or not node.args or any(isinstance(a, ast.Starred) for a in node.args)
                or any(k.arg is None for k in node.keywords) or "=functools.partial" not in self.expr(func).types):
            return None
        site = self.site(node)
        key = f"{site.path}:{site.line}:{site.col}"
        self.program.partials[key] = (self.expr(node.args[0]), node.args[0], [self.expr(a) for a in node.args[1:]],
                                      {k.arg: self.expr(k.value) for k in node.keywords if k.arg is not None})
        return Value(types=frozenset({"partial:" + key}))

    def method_wrapper(self, node: ast.Call) -> Value | None:
        """``staticmethod(f)`` (Python's semantics: read through a class or an instance, it is
        ``f`` itself) as ``f``'s value, or None when ``node`` is not such a call."""
        if not (isinstance(node.func, ast.Name) and node.func.id == "staticmethod" and len(node.args) == 1
                and not node.keywords and "=staticmethod" in self.expr(node.func).types):
            return None
        return self.expr(node.args[0])

    def namespace_of(self, node: ast.Call) -> Value | None:
        """``vars(module)`` (Python's semantics: the module's ``__dict__``) as a reference to
        that namespace, or None when ``node`` is not such a call."""
        if not (isinstance(node.func, ast.Name) and node.func.id == "vars" and len(node.args) == 1
                and not node.keywords and "=vars" in self.expr(node.func).types):
            return None
        refs = sorted(t[1:] for t in self.expr(node.args[0]).types if t.startswith("="))
        return Value(types=frozenset("=" + r + ".__dict__" for r in refs)) if refs else None

    def namespace_item(self, owner: Value, key: str, node: ast.AST) -> Value | None:
        """An item of a namespace read by a constant name, as the name itself:
        ``sys.modules["os"]`` is the module ``os``, ``os.__dict__["system"]`` (or
        ``vars(os)["system"]``) is ``os.system``. None when ``owner`` is no such namespace."""
        if not all(part.isidentifier() for part in key.split(".")):
            return None
        named = []
        for qualified in sorted(t[1:] for t in owner.types if t.startswith("=")):
            if qualified == "sys.modules":
                named.append(self.library_name(key, node))
            elif qualified.endswith(".__dict__") and key.isidentifier():
                named.append(self.library_name(qualified[:-len(".__dict__")] + "." + key, node))
        return join(*named) if named else None

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

    def source_value(self, channel: str, what: str, site: Site, *, own_url: bool = False) -> Value:
        """A value read from a source (``own_url``: the request's own URL, path or host)."""
        return of_labels([Label(channel=channel, what=what, path=site.path, line=site.line, col=site.col, own_url=own_url)])

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
            if isinstance(result, CONST_TYPES) and not (isinstance(result, (str, bytes)) and len(result) > _MAX_CONST_LEN):
                return constant(result)
        if isinstance(op, ast.Div) and any(not t.startswith("=") for t in left.types) and not left.is_const:
            # ``folder / name`` on a library object (a pathlib path): its ``__truediv__``.
            joined = join(taint_only(left.flatten()), taint_only(right.flatten()))
            return join(self.method_result(left, "__truediv__", node, args=[right]), joined)
        if isinstance(op, _NUMERIC_OPS):
            return EMPTY
        if isinstance(op, ast.Mod) and left.is_const and isinstance(left.const, str):
            prefix = left.const.split("%", 1)[0]
            if right.items is None:  # one value, placed at the first field
                right = placed_after(right, prefix, prefix)
            return replace(unmarked(join(taint_only(left), taint_only(right.flatten()))), prefix=prefix or None,
                           suffix=format_tail(left.const), texts=texts_of(*map(constant, format_pieces(left.const))))
        if isinstance(op, ast.Add):
            text = left.const if left.is_const and isinstance(left.const, str) else ""
            left = placed_after(left, "", None, right.const if right.is_const and isinstance(right.const, str) else None)
            right = placed_after(right, text, text if text else None, "")
        result = unmarked(join(taint_only(left.flatten()), taint_only(right.flatten())), placed=isinstance(op, ast.Add))
        if isinstance(op, ast.Add):
            prefix = left.prefix
            if left.is_const and isinstance(left.const, str) and right.prefix is not None:
                prefix = left.const + right.prefix
            suffix = right.suffix
            if right.is_const and isinstance(right.const, str) and left.suffix is not None:
                suffix = left.suffix + right.const
            return replace(result, prefix=prefix, suffix=suffix, texts=texts_of(left, right))
        return result

    def fstring(self, node: ast.AST) -> Value:
        parts: list[Value] = []
        prefix = ""
        fixed = True
        before = ""
        values = [self.expr(part) for part in getattr(node, "values", [])]
        for index, value in enumerate(values):
            value = placed_after(value, before, prefix if fixed else None, joined_text(values[index + 1:]))
            before = value.const if value.is_const and isinstance(value.const, str) else ""
            parts.append(value)
            if fixed:
                if value.is_const and isinstance(value.const, str):
                    prefix += value.const
                else:
                    fixed = False
        result = unmarked(join(*(taint_only(p) for p in parts)), placed=True)
        if fixed and all(p.is_const for p in parts):
            return constant(prefix)
        return replace(result, prefix=prefix or None, suffix=tail_of(parts), texts=texts_of(*parts), const=NOT_CONSTANT)

    def sequence(self, elements: list[ast.expr]) -> Value:
        if any(isinstance(e, ast.Starred) for e in elements):
            return join(*(self.expr(e).flatten() for e in elements), Value(items=None))
        items = {i: bounded(self.expr(e)) for i, e in enumerate(elements)}
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
                items[k.const] = bounded(v)
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
            named = self.namespace_item(owner, key.const, node) if isinstance(key.const, str) else None
            if named is not None:
                return named
            if owner.is_const and isinstance(owner.const, (str, bytes)) and type(key.const) is int:
                # ``"ABC"[1]``: Python's indexing of a constant text is a constant.
                try:
                    return constant(owner.const[key.const])
                except IndexError:
                    return EMPTY
        if isinstance(node.slice, ast.Slice):
            return taint_only(owner.flatten())  # a part of a text holds none of what it did not
        callables = [_callable_part(item) for item in (owner.items or {}).values()]
        callables = [c for c in callables if c is not None]
        if callables:
            # A dispatch table read by a key the engine does not know (``handlers[action]``):
            # any of its functions may be the one called.
            return join(unmarked(self.method_result(owner, "__getitem__", node, args=[key])), *callables)
        # An item of a container: a blocked-text check on the container said nothing of it.
        return unmarked(self.method_result(owner, "__getitem__", node, args=[key]))

    def element(self, iterable: Value, node: ast.AST) -> Value:
        """The value of one element of an iterable (every item joined); of a dict built here,
        one of its keys (Python iterates a dict's keys)."""
        keys = dict_keys(iterable)
        if keys is not None:
            return keys
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


def ref(qualified: str) -> Value:
    """Returns the value of a name that stands for a library object (a module, function,
    class or global), e.g. ``ref("subprocess.run")``."""
    return Value(types=frozenset({"=" + qualified}))


# Getters applied inside a getter's application, at most (a chain 400 deep would exhaust the
# interpreter's stack): a deeper read is the object's own data.
MAX_NESTED_READS = 32


def _parameter(value: Value) -> bool:
    """True for a value that stands for a function's parameter in its summary (its labels are
    all parameter labels): what is read from it is resolved where the summary is applied."""
    labels = value.all_labels()
    return bool(labels) and all(label.channel == "param" for label in labels)


def dict_keys(value: Value) -> Value | None:
    """One key of a dict built in the analysed code whose keys are all known (text constants:
    a list's keys are its indexes, an object's ``".name"``), joined with the taint of what it
    holds under keys the engine does not know and of the keys stored by a computed key
    (``UNKNOWN_KEYS``: a key computed from outside data stays tainted), or None when ``value``
    is not such a dict."""
    if not value.items or value.types or not all(isinstance(k, str) and not k.startswith(".") for k in value.items):
        return None
    unknown = value.items.get(UNKNOWN_KEYS)
    return join(*(constant(k) for k in value.items if k != UNKNOWN_KEYS), taint_only(Value(labels=value.labels)),
                *([taint_only(unknown)] if unknown is not None else []))


def _callable_part(item: Value) -> Value | None:
    """What of a container's item tells a call through it what is called (library references,
    bound methods, partials, functions of the analysed code), or None when nothing does."""
    types = frozenset(t for t in item.types if t.startswith(("=", "bound:", "partial:")))
    return Value(types=types, functions=item.functions) if types or item.functions else None


def opaque(what: str, site: Site) -> Value:
    """Returns a value of unknown origin (code the engine does not see)."""
    return of_labels([Label(channel="opaque", what=what, path=site.path, line=site.line, col=site.col)])


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


