"""Evaluating expressions to ``Value``s, the expression half of the abstract interpreter
(``interp.Frame``).

Literals become constants, names resolve to their binding (local, closure, the module's
globals, a builtin, a library reference), attribute reads go through the library models and the
analysed code's classes, containers remember their keys, and a condition folds to True or False
when it is constant. Operators and string building are in ``interp_operators``, Python's
run-time naming (``__import__``, ``getattr``, ``partial`` ...) in ``interp_runtime_names``.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import replace
from typing import Any

from . import checked_paths, dynamic_attributes, folding, free_names, hooks, iterators, lengths, reflection, reprs, routes, vendoring
from .facts import Site
from .interp_operators import CONST_TYPES, MAX_CONST_LEN, SOME_BOOL
from .library_methods import BOUND_LIBRARY_METHOD, SELF
from .model_records import Sink
from .sequences import leading_items, with_rest
from .marks import unmarked
from .values import (ADDED_ITEMS, DERIVED, EMPTY, OWN_SITE, UNKNOWN_KEYS, Label, Value, bounded, constant, join, of_labels,
                     taint_only)
from .walks import child_nodes

BUILTINS = frozenset(dir(builtins))

_COMPARE: dict[type, Any] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b, ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}


class Expressions:
    """Expression evaluation, mixed into ``interp.Frame``."""

    def expr(self, node: ast.expr | None) -> Value:  # noqa: C901 - one dispatch over expression kinds
        """Evaluates an expression."""
        if node is None:
            return EMPTY
        self.program.budget.spend()
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, (str, bytes)) and len(value) > MAX_CONST_LEN:
                return Value(prefix=value[:MAX_CONST_LEN] if isinstance(value, str) else None,
                             suffix=value[-MAX_CONST_LEN:] if isinstance(value, str) else None)
            return constant(value) if isinstance(value, CONST_TYPES) else EMPTY
        if isinstance(node, ast.Name):
            return self.name(node)
        if self.narrowed_roots and isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
            checked = checked_paths.lookup(self, node)  # ``request.args["next"]`` after its check
            if checked is not None:
                return checked
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
            result = self.call(node)
            if self.narrowed_roots:
                checked_paths.called(self, node)
            return result
        if isinstance(node, ast.BinOp):
            return self.binop_chain(node)
        if isinstance(node, ast.JoinedStr) or type(node).__name__ == "TemplateStr":
            return self.fstring(node)
        if isinstance(node, ast.FormattedValue) or type(node).__name__ == "Interpolation":
            inner = reprs.converted(self.expr(node.value), node.conversion, node.format_spec, self.catalog.kinds)  # ``{x!r}``
            if node.format_spec is not None:
                self.expr(node.format_spec)
            return taint_only(inner) if not inner.is_const else constant(str(inner.const)) if isinstance(inner.const, (str, int)) else taint_only(inner)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self.sequence(node.elts)
        if isinstance(node, ast.Set):  # its items, known one by one as a tuple's (an allowlist)
            return self.sequence(node.elts) if node.elts else EMPTY
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
        if self.narrowed_roots and isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            checked_paths.shared(self, node)  # (a walrus in it may rebind a checked variable)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return folding.unrolled(self, node) or self.comprehension(node.generators, [node.elt])
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
            self.yielded.append(value if isinstance(node, ast.Yield) else self.element(value, node))
            return EMPTY
        if isinstance(node, ast.Starred):
            return self.expr(node.value)
        if isinstance(node, ast.Slice):
            for part in (node.lower, node.upper, node.step):
                self.expr(part)
            return EMPTY
        for child in child_nodes(node):
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
        for base in reversed(self.module.star_imports):  # ``from X import *`` binds X's names, the last one's over
            qualified = f"{base}.{name}"
            if self.catalog.knows(qualified) or self.program.resolve(qualified) is not None:
                return self.library_name(qualified, node)
            imported = self.program.imported_name(base, name)
            if imported is not None:
                return imported
        return free_names.free_value(name, self.module.bound_names, self.site(node)) or opaque(
            f"{name} (not defined where the engine can see)", self.site(node))

    def attribute(self, owner: Value, attr: str, node: ast.AST) -> Value:
        """Reads ``owner.attr``: a library reference, a known item, a modelled source or type,
        a local class's attribute, or the owner's taint."""
        site = self.site(node)
        fixed = routes.fixed_read(self, owner, attr)
        if fixed is not None:
            return fixed
        refs = self.program.library_refs(owner.types)
        stored = owner.items.get("." + attr) if refs and owner.items else None
        if stored is not None:  # stored on a library object by this function (``g.user = ...``)
            return stored
        if refs:
            named = join(*(self.library_name(f"{q}.{attr}", node) for q in refs))
            shared = [self.program.library_state[(q, attr)] for q in refs if (q, attr) in self.program.library_state]
            if shared and not self.summarising:  # what other functions stored there (a hook, for a view)
                return join(*shared)
            # A class imported from another file of the repository (``Order.objects``): its
            # attributes and its library bases' modelled members apply too.
            classes = [local[1] for local in map(self.program.resolve, refs) if local and local[0] == "class"]
            if classes:
                named = join(named, self.attribute(Value(functions=frozenset(classes)), attr, node))
            if all(t.startswith("=") for t in owner.types):  # outside data read from a library object keeps its taint
                return join(named, self.derive(owner, attr, site)) if owner.labels else named
            return join(named, self.attribute(replace(owner, types=frozenset(t for t in owner.types if not t.startswith("="))),
                                              attr, node))
        known = owner.get("." + attr)
        if known is not None:
            return known
        parts: list[Value] = []
        getter = library = False
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
                source = self.catalog.sources_type.get(base)  # (the library's own code: its model's sources hold)
                if info is not None and not (source is not None and attr in source.attributes):
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
                        if method not in self.program.reading_properties and len(self.program.reading_properties) < MAX_NESTED_READS:
                            read = ast.copy_location(ast.Call(func=node, args=[], keywords=[]), node)
                            self.program.reading_properties.add(method)
                            try:
                                parts.append(self.call_local(method, owner, [], {}, [], read))
                            finally:
                                self.program.reading_properties.discard(method)
                        break
                    if method is not None:  # (it keeps the instance it is read from, if that holds data)
                        parts.append(Value(functions=hooks.dispatched(self.program, method, type_name, _parameter(owner)),
                                           types=frozenset({"bound:" + type_name}), items={SELF: owner} if owner.labels or owner.items else None))
                        break
                    if attr in info.attributes:
                        parts.append(info.attributes[attr])
                        break
                    stored = self.program.stored_types(self, base, attr)
                    if stored:  # ``self.session`` where ``__init__`` stored a ``requests.Session()``
                        parts.append(Value(types=stored))
                        break
                member = f"{base}.{attr}"
                returned = self.catalog.returns.get(member)
                typed = Value(types=frozenset(t for t, _ in returned or ()))
                if (member in self.catalog.sinks or source is not None and attr in source.methods) and not (
                        source is not None and attr in source.attributes):
                    # A sink or source method read, not called (``match = PATTERN.match``): the
                    # call made through it later is that method's, on this object (``Calls.call``).
                    return Value(types=typed.types | {BOUND_LIBRARY_METHOD + attr}, items={SELF: owner})
                if source is not None and attr in source.attributes:  # outside data, of its type when modelled
                    typed = join(self.source_value(source.channel, f"{attr} of {source.what}", site,
                                                   own_url=attr in source.own_url, own_site=attr in source.own_site), typed)
                if typed.labels or returned:
                    parts.append(typed)
                    library = True
                    break
        if getter:  # what the getter returns, not the object's own data
            return join(*parts) if parts else self.derive(owner, attr, site)
        if library and owner.items:  # a member the library sets (``self.request``), not what the code stored
            owner = replace(owner, items={k: v for k, v in owner.items.items() if k == UNKNOWN_KEYS} or None)
        derived = self.derive(owner, attr, site)
        if parts and not derived.labels and derived.items is None:
            return join(*parts)  # a class's own attribute keeps what is known per key (a dict's items)
        if parts and derived.items is None:
            # Read through a parameter (``self.pattern`` in a method): the class's attribute
            # keeps what it knows per key (a compiled pattern's text); what an instance may
            # hold instead is taint under any key.
            own = join(*parts)
            if own.items is not None:
                return replace(own, labels={**derived.labels, **own.labels}, types=own.types | derived.types)
        dynamic = None if parts else dynamic_attributes.looked_up(self, owner, attr, node)
        return join(derived, *parts, *([dynamic] if dynamic is not None else []))

    def derive(self, owner: Value, member: str, site: Site) -> Value:
        """The taint of a value read from ``owner`` (an attribute or a method's result):
        parameter labels get the member appended to their access path; others pass on."""
        labels: list[Label] = []
        for label in owner.all_labels():
            if label.channel == "param" and len(label.access) - (DERIVED in label.access) < 3:
                labels.append(label.with_access(label.access + (member,)))
            else:
                labels.append(label)
        if not labels and not owner.is_const and owner.types and not any(t in self.program.classes for t in owner.types):
            return EMPTY
        return reflection.chosen_member(owner, of_labels(labels))  # a chosen class's method is chosen

    def library_name(self, qualified: str, node: ast.AST) -> Value:
        """The value of a qualified library name (a vendored copy's is the library's: ``vendoring``):
        a source, an object of a known type, or a reference (a call or attribute read resolves it)."""
        qualified = vendoring.vendored_name(self.program, qualified)
        site = self.site(node)
        source = self.catalog.sources_read.get(qualified)
        value = ref(qualified)
        if source is not None:
            value = join(value, self.source_value(source.channel, source.what, site))
        if qualified in self.catalog.constants:
            return constant(self.catalog.constants[qualified])
        if (object_type := self.catalog.objects.get(qualified)) is not None:
            value = join(value, Value(types=frozenset({object_type})))
        return value

    def source_value(self, channel: str, what: str, site: Site, *, own_url: bool = False, own_site: bool = False) -> Value:
        """A value read from a source (``own_url``: the request's own URL, path or host;
        ``own_site``: its own absolute URL, which a redirect cannot take off the site)."""
        return of_labels([Label(channel=channel, what=what, path=site.path, line=site.line, col=site.col, own_url=own_url,
                                **(OWN_SITE if own_site else {}))])

    def sequence(self, elements: list[ast.expr]) -> Value:
        """A list or tuple display: its items by position, also through ``*x`` where the engine
        knows ``x`` item by item (``["sendmail", *options]``); from a ``*x`` of a length it does
        not know, the items before it by position and everything else as the rest
        (``["hg", *cmd]``: the program is ``"hg"`` whatever ``cmd`` holds)."""
        items: list[Value] = []
        for index, element in enumerate(elements):
            if isinstance(element, ast.Starred):
                unpacked = self.expr(element.value)
                spliced = leading_items(unpacked)
                if spliced is None or spliced[1] is not None:
                    items.extend(spliced[0] if spliced is not None else ())
                    rest = spliced[1] if spliced is not None and spliced[1] is not None else unpacked.flatten()
                    following = (self.expr(e.value if isinstance(e, ast.Starred) else e).flatten()
                                 for e in elements[index + 1:])
                    return with_rest(items, join(rest, *following))
                items.extend(spliced[0])
            else:
                items.append(bounded(self.expr(element)))
        return Value(items=dict(enumerate(items)))

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
            if key.const == ADDED_ITEMS and known is not None and len(owner.items or ()) > 1:
                known = owner.flatten()  # ``xs[-1]`` of ``[a, *rest]`` may be ``a``
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
            part = taint_only(owner.flatten())  # a part of a text holds none of what it did not
            return lengths.sliced(self, node.slice, part)
        callables = [callable_part(item) for item in (owner.items or {}).values()]
        callables = [c for c in callables if c is not None]
        if callables:
            # A dispatch table read by a key the engine does not know (``handlers[action]``):
            # any of its functions may be the one called.
            return join(unmarked(self.method_result(owner, "__getitem__", node, args=[key])), *callables)
        # An item of a container: a blocked-text check on the container said nothing of it.
        return reflection.namespace_read(self, owner, key, unmarked(self.method_result(owner, "__getitem__", node, args=[key])))

    def element(self, iterable: Value, node: ast.AST) -> Value:
        """The value of one element of an iterable (every item joined); of a dict built here,
        one of its keys (Python iterates a dict's keys)."""
        iterable = iterators.held(self.program, iterable)
        keys = iterators.dict_keys(iterable)
        if keys is not None:
            return keys
        each = self.method_result(iterable, "__iter__", node) if iterable.types else iterators.each(iterable)
        each = unmarked(each)  # a check of the whole (its length, a text it lacks) says nothing of an item
        # The functions it holds stay callable (``for check in (a, b): check(x)``, a registry).
        callables = [part for part in map(callable_part, (iterable.items or {}).values()) if part is not None]
        return join(each, *callables) if callables else each

    def compare(self, node: ast.Compare) -> Value:
        values = [self.expr(node.left), *(self.expr(c) for c in node.comparators)]
        for i, op in enumerate(node.ops):
            if isinstance(op, (ast.Eq, ast.NotEq)):
                self.compared_secret(values[i], values[i + 1], node)
                self.compared_secret(values[i + 1], values[i], node)
            elif isinstance(op, (ast.In, ast.NotIn)):  # ``x in [mac, ...]`` compares x with each item
                self.compared_secret(values[i + 1], values[i], node)
        if all(v.is_const for v in values):
            try:
                ok = all(_COMPARE[type(op)](values[i].const, values[i + 1].const) for i, op in enumerate(node.ops))
                return constant(bool(ok))
            except Exception:
                return SOME_BOOL
        return SOME_BOOL

    def compared_secret(self, secret: Value, other: Value, node: ast.Compare) -> None:
        """``secret == other`` where ``secret`` holds data of a ``[[compared]]`` channel (an
        HMAC computed here) and ``other`` does not (two HMACs computed here compare in time
        that tells nothing of the secret: the double-HMAC idiom): the comparison is a sink of
        ``other``, which takes time telling how much of it is right."""
        secret_channels = {label.channel for label in secret.all_labels()} & self.catalog.compared.keys()
        other_channels = {label.channel for label in other.all_labels()}
        for channel in sorted(secret_channels - other_channels):
            model = self.catalog.compared[channel]
            sink = Sink(target="==", is_method=False, kind=model.kind, args=(0,), what=model.what, model=model.model)
            self.sink_value(sink, self.site(node), other, "the value compared with it")

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


MAX_NESTED_READS = 32  # getters applied inside a getter's application (deeper: the object's own data)


def _parameter(value: Value) -> bool:
    """True for a value that stands for a function's parameter in its summary (its labels are
    all parameter labels): what is read from it is resolved where the summary is applied."""
    labels = value.all_labels()
    return bool(labels) and all(label.channel == "param" for label in labels)


def callable_part(item: Value) -> Value | None:
    """What of a container's item tells a call through it what is called (library references,
    bound methods, partials, functions of the analysed code), or None when nothing does."""
    types = frozenset(t for t in item.types if t.startswith(("=", "bound:", "partial:")))
    return Value(types=types, functions=item.functions) if types or item.functions else None


def opaque(what: str, site: Site) -> Value:
    """Returns a value of unknown origin (code the engine does not see)."""
    return of_labels([Label(channel="opaque", what=what, path=site.path, line=site.line, col=site.col)])
