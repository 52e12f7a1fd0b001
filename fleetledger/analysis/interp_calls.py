"""Evaluating calls in the abstract interpreter (``interp.Frame``): which function a call
reaches and what its result is.

In order: the analysed code's functions and classes by their summaries (through the program,
``Program.apply_summary``), the library models of the qualified name, the models of the
method by the receiver's type (``"Type.method"``, ``"*.method"`` when the type is unknown), and
for a call no model describes, taint in, taint out (a result of unknown origin when nothing
flows in).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from . import deferred_calls, deletions, folding, iterators, mutations, reflection
from .facts import Site, step
from .interp_expressions import BUILTINS, callable_part, opaque
from .interp_objects import LIST_METHODS, SHIFTING_METHODS, Objects
from .invocations import invoke_all
from .library_methods import SELF, bound_library_method
from .model_records import UNTYPED
from .purity import CONST_TYPE_NAMES, is_pure
from .string_methods import constant_method, formatted
from .texts import folder_texts, texts_of
from .marks import is_absolute, normalisation, normalising_calls, unmarked
from .sequences import clean_only, held_only
from .values import EMPTY, UNKNOWN_KEYS, Value, add_step, clean, computed_from, constant, join, taint_only

# Partials called inside a partial's call, at most: a choice between two partials at each of n
# levels (``p = partial(q) if c else partial(q)``) is 2**n calls; deeper ones are calls the engine
# does not follow (their arguments' data reaches their result).
MAX_NESTED_PARTIALS = 6


_MAP, _FILTER = frozenset({"=map"}), frozenset({"=filter"})
_STORING_METHODS = frozenset({"append", "add", "insert", "setdefault"})
"""Container methods whose last argument is stored in the container (a registry's function)."""


class Calls(Objects):
    """Call evaluation, mixed into ``interp.Frame``."""

    def call(self, node: ast.Call) -> Value:  # noqa: C901 - the resolution order is one algorithm
        """Evaluates a call: library models, the analysed code's functions, or taint in, taint out."""
        func = node.func
        receiver: Value | None = None
        dynamic = self.getattr_call(func)
        if dynamic is not None:  # getattr(obj, "name")(...) is obj.name(...)
            func = dynamic
        if isinstance(func, ast.Attribute):
            receiver = self.super_value(func.value) or self.expr(func.value)
            callee = self.attribute(receiver, func.attr, func)
            method = func.attr
        else:
            callee = self.expr(func)
            method = None
            read = bound_library_method(callee)
            if read is not None:  # ``match = PATTERN.match; match(text)`` is ``PATTERN.match(text)``
                receiver, method = read
        reflection.check(self, callee, node)
        partials = sorted(t[len("partial:"):] for t in callee.types if t.startswith("partial:"))
        called = [self.call_partial(key, node) for key in partials
                  if key in self.program.partials and key not in self.program.calling_partials
                  and len(self.program.calling_partials) < MAX_NESTED_PARTIALS]
        if called:
            return join(*called)
        if method in LIST_METHODS and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            moved = self.list_method(node, func.value.id, method)
            if moved is not None:
                return moved
        if method in SHIFTING_METHODS and isinstance(func, ast.Attribute):
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
        if callee.types in (_MAP, _FILTER) and len(args) >= 2 and not kwargs and not star:
            return self.mapped(node, callee, args)
        built = iterators.built(self, callee, receiver, method, args, kwargs, star, node)
        if built is not None:  # ``enumerate(xs)``: a list of (position, item) pairs
            return built
        if receiver is not None and method is not None and isinstance(func, ast.Attribute) and not star:
            kept = self.container_method(func.value, receiver, method, args)
            if kept is not None:
                return kept
        if method in ("join", "encode", "decode") and receiver is not None and not star:
            folded = constant_method(receiver, method, args, kwargs)
            if folded is not None:  # "".join([r"^(\s*)", r"(\w+\s*)*$"]) is the pattern it builds
                return folded
        if method == "keys" and receiver is not None and not args and not kwargs:
            keys = iterators.dict_keys(receiver)
            if keys is not None:
                return keys
        result = self.resolve_call(node, func, receiver, callee, method, args, kwargs, star)
        # ``s.replace("'", "&apos;")``: no ``'`` is left, as if its absence were checked.
        return deletions.cleaned(self, callee, receiver, method, args, kwargs, result)

    def mapped(self, node: ast.Call, callee: Value, args: list[Value]) -> Value:
        """``map(f, xs, ...)`` calls ``f`` with an item of each iterable and yields its
        results; ``filter(f, xs)`` calls it with an item of ``xs`` and yields those items
        (Python's builtins). The call is evaluated as ``f(item, ...)`` written here."""
        function = args[0]
        folded = folding.mapped(function, args[1:]) if callee.types == _MAP else None
        if folded is not None:
            return folded  # ``map(re.escape, ("(", "<"))``: the escaped constants, in order
        items = [self.element(value, arg) for value, arg in zip(args[1:], node.args[1:])]
        read = bound_library_method(function)
        receiver, method = read if read is not None else (None, None)
        result = self.resolve_call(node, node.args[0], receiver, function, method, items, {}, [])
        return result if callee.types == _MAP else join(*items)

    def call_partial(self, key: str, node: ast.Call) -> Value:
        """Calls the ``functools.partial`` object made at ``key`` (``Expressions.partial_object``)
        as ``node`` calls it: evaluated as the call of its function written here, its bound
        arguments first. The bound values stand in the call under names no Python code can
        bind (they hold spaces), so sinks and checks see every argument at its position."""
        callee, func, bound, keywords = self.program.partials[key]
        text = f"{ast.unparse(func)} (partial)"
        # One set of names per partial: a partial of a partial binds its own beside the inner one's.
        tag = f"partial {key}"
        names = {text: callee} | {f"{tag} argument {i}": v for i, v in enumerate(bound)}
        own = {k.arg for k in node.keywords}
        names |= {f"{tag} keyword {k}": v for k, v in keywords.items() if k not in own}
        where = {"lineno": node.lineno, "col_offset": node.col_offset,
                 "end_lineno": node.end_lineno, "end_col_offset": node.end_col_offset}
        call = ast.Call(func=ast.Name(id=text, ctx=ast.Load(), **where),
                        args=[*(ast.Name(id=f"{tag} argument {i}", ctx=ast.Load(), **where) for i in range(len(bound))),
                              *node.args],
                        keywords=[*(ast.keyword(arg=k, value=ast.Name(id=f"{tag} keyword {k}", ctx=ast.Load(), **where))
                                    for k in keywords if k not in own), *node.keywords], **where)
        saved = {name: self.env[name] for name in names if name in self.env}
        self.env.update(names)
        self.program.calling_partials.add(key)
        try:
            return self.call(call)
        finally:
            self.program.calling_partials.discard(key)
            for name in names:
                self.env.pop(name, None)
            self.env.update(saved)

    def resolve_call(self, node: ast.Call, func: ast.expr, receiver: Value | None, callee: Value, method: str | None,  # noqa: C901
                     args: list[Value], kwargs: dict[str, Value], star: list[Value]) -> Value:
        """Evaluates a call whose callee and arguments are evaluated: library models, the
        analysed code's functions, or taint in, taint out. What a library call returns is
        another text: a blocked-text check on its inputs says nothing of it (``unmarked``);
        a function of the analysed code returns what its summary shows (a validating helper's
        check holds)."""
        site = self.site(node)
        results: list[Value] = []
        handled = False
        refs = self.program.library_refs(callee.types)
        for qualified in refs:
            local = self.program.resolve(qualified) if "." in qualified or qualified not in BUILTINS else None
            if local is not None and local[0] in ("function", "class"):
                # ``Model.create(x)`` of another module: a class method gets its class first
                known = self.program.functions.get(local[1]) if local[0] == "function" else None
                cls = receiver if known is not None and known.is_classmethod else None
                # A library's own code, scanned, keeps the guarantee its models give its callers
                # (Django's ``safe_join`` scanned in Django): a sanitiser's model cleans what it returns.
                results.append(self.sanitised(qualified, self.call_local(local[1], cls, args, kwargs, star, node),
                                              args, kwargs))
                handled = True
                # A file of the repository named like a modelled library (a shipped
                # ``subprocess.py``) does not switch the library's sinks off.
                shadowed = self.call_library(qualified, None, args, kwargs, star, node)
                if shadowed is not None:
                    results.append(unmarked(shadowed))
                continue
            result = self.call_library(qualified, None, args, kwargs, star, node)
            if result is not None:
                results.append(unmarked(result))
                handled = True
        instances = frozenset(t[len("bound:"):] for t in callee.types if t.startswith("bound:"))
        for fid in sorted(callee.functions):
            bound = receiver if instances or (
                receiver is not None and fid in self.program.functions and self.program.functions[fid].bound
                and not refs) else None
            if bound is None and instances and fid in self.program.functions and self.program.functions[fid].bound:
                # A bound method called through a name (``step = obj.run; step(x)``): on the
                # instance it was read from (``SELF``), else on this method's own instance when
                # that is of its class (``parse = self._pick(); parse()``), else on a new one.
                bound = (callee.items or {}).get(SELF) or self.own_instance(instances) or Value(types=instances)
            results.append(self.call_local(fid, bound, args, kwargs, star, node))
            handled = True
        if receiver is not None and method == "get" and receiver.items is not None and not receiver.types and args:
            # ``d.get(k, default)`` on a dict built here: one of its values or the default,
            # whatever the key (Python's semantics; the key's taint is not the result's).
            key = args[0]
            known = receiver.get(key.const) if key.is_const and isinstance(key.const, (str, int)) else None
            default = args[1] if len(args) > 1 else constant(None)
            if known is not None:
                return join(known, default)
            # A dispatch table read by a key the engine does not know: any of its functions.
            callables = [part for part in map(callable_part, receiver.items.values()) if part is not None]
            return join(receiver.flatten(), default, *callables)
        if receiver is not None and method == "values" and receiver.items is not None and not receiver.types and not args:
            # ``d.values()`` of a dict built here: its values in order (what a loop over them
            # calls, for a table of functions) and what it holds under computed keys, not its
            # keys' data.
            values = [v for k, v in receiver.items.items() if k != UNKNOWN_KEYS]
            stored = callable_part(receiver.items.get(UNKNOWN_KEYS, EMPTY))
            return Value(items=dict(enumerate([*values, *([stored] if stored is not None else [])])),
                         labels=receiver.labels)
        if receiver is not None and method is not None and (not refs or not handled):
            # A name the models do not know (``models.Order.objects`` from a module that is not
            # loaded) is a receiver of unknown type: the models of its method name apply.
            for key in self.method_keys(receiver, method):
                result = self.call_library(key, receiver, args, kwargs, star, node)
                if result is not None:
                    results.append(unmarked(result))
                    handled = True
            # a parameter's method: a sink, maybe, of the type a caller passes
            deferred_calls.defer(self, receiver, method, args, kwargs, star, node, site)
        everything = [*args, *kwargs.values(), *star]
        names = {*refs, *(self.method_keys(receiver, method) if receiver is not None and method and not args  # (resolve()
                          and method in normalising_calls(self.catalog)[3] else ())}  # of a path takes no argument)
        inputs = [*([receiver] if receiver is not None and receiver.tainted() else []), *everything]  # (not a module)
        if handled and results:  # (``vars(m).get(name)`` is handled as ``*.get``, and is reflection)
            return reflection.mark(self, refs, args, kwargs, join(*results) if callee.functions else normalisation(
                self.catalog, names, inputs, join(*results)))
        self.escapes(everything, f"passed to {_callee_text(func)}(), which the models do not describe", site)
        if receiver is not None:
            if method == "format" and receiver.is_const and isinstance(receiver.const, str):
                everything.extend(self.format_fields(receiver.const, args, kwargs, node))
            self.stores_into(func.value if isinstance(func, ast.Attribute) else None, everything, site, method)
            if method in mutations.STORING and isinstance(func, ast.Attribute):
                mutations.added(self, func.value, join(*args, *kwargs.values(), *star))  # the caller's object too
            if method in _STORING_METHODS and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and args:
                self.store_global(func.value.id, args[-1], by_key=method == "setdefault")  # ``HOOKS.append(fn)``
            everything.append(receiver)
            derived = self.derive(receiver, f"{method}()", site)
            rest = computed_from(join(*(taint_only(v.flatten()) for v in everything[:-1])))
            value = join(derived, rest)
        else:
            value = computed_from(join(*(taint_only(v.flatten()) for v in everything)))
        value = unmarked(value)
        if method == "format" and receiver is not None and receiver.is_const and isinstance(receiver.const, str):
            value = formatted(value, receiver.const, None if star else (args, kwargs))
        if refs and args and all(r in self.catalog.ends_as_last for r in refs):
            last = args[-1]
            value = replace(value, suffix=last.const if last.is_const and isinstance(last.const, str) else last.suffix,
                            texts=texts_of(last, *(folder_texts(arg) for arg in args[:-1])),  # (POSIX: absolute stays so)
                            prefix="/" if is_absolute(args[0]) and not any(r.startswith("ntpath.") for r in refs) else value.prefix)
        name = _callee_text(func)
        value = reflection.mark(self, refs, args, kwargs, normalisation(self.catalog, names, inputs, value))
        if value.tainted():
            return add_step(value, step(site, f"through {name}()"))
        if is_pure(refs, receiver, self.catalog.pure):
            return value
        return opaque(f"the result of {name}()", site)

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
                if label.channel == "random" and self.own:
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
                if base in self.program.classes or base in CONST_TYPE_NAMES:
                    known = True
                    if base in self.program.classes and self.catalog.is_type(base):
                        keys.append(f"{base}.{method}")  # the library's own code, scanned: its models hold
                    continue
                if self.catalog.is_type(base):
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

    def entered(self, manager: Value, node: ast.expr, method: str) -> Value:
        """What ``with manager as x`` binds to ``x``: what the ``__enter__`` (``__aenter__``) of
        the analysed code's classes returns, joined with the models' for library types.

        Args:
            manager: The context manager's value.
            node: The ``with`` item's expression (where the implicit call happens).
            method: ``"__enter__"`` or ``"__aenter__"``.
        """
        local = [fid for fid in (self.program.method(t, method) for t in sorted(manager.types)
                                 if t in self.program.classes) if fid is not None]
        library = self.method_result(manager, "__enter__", node)
        if not local:
            return library
        # The implicit call ``manager.__enter__()``, so that what the method stores on ``self``
        # lands on the manager's variable (``with timer:``), never on another expression.
        call = ast.copy_location(ast.Call(func=ast.Attribute(value=node, attr=method, ctx=ast.Load()), args=[],
                                          keywords=[]), node)
        results = [self.call_local(fid, manager, [], {}, [], call) for fid in local]
        defined_here = all(t in self.program.classes for t in manager.types if not t.startswith(("=", "bound:")))
        return join(*results) if defined_here else join(library, *results)

    def call_library(self, target: str, receiver: Value | None, args: list[Value], kwargs: dict[str, Value],
                     star: list[Value], node: ast.Call) -> Value | None:
        """Applies the models of ``target`` (qualified name, ``"Type.method"``); None if none names it."""
        catalog = self.catalog
        site = self.site(node)
        folded = folding.called(target, receiver, args, kwargs, star)
        if folded is not None:
            return folded  # ``re.escape(b"()<>")``: a pattern's piece
        if receiver is None and target not in catalog.sinks:
            target = _wildcard(catalog, target)
        sinks = tuple(s for s in catalog.sinks.get(target, ()) if not s.when_called)  # (``reflection``)
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
        reconfigured = catalog.reconfigures.get(target, ()) if receiver is not None else ()
        invokes = catalog.invokes.get(target, ())
        if not (sinks or sanitisers or source or returned or checks or type_source or constructor or renders
                or reconfigured or invokes):
            return None
        self.reconfigure(node, reconfigured, args, kwargs)
        given = invoke_all(self, invokes, node)
        for sink in sinks:
            self.check_sink(sink, receiver, args, kwargs, star, node, site)
        for render in renders:
            self.check_template(render, args, kwargs, site, node)
        for check in checks:
            self.check_misuse(check, args, kwargs, node, site)
        if given is not None:
            return given
        types = frozenset(t for t, when in returned if when is None or self.holds(when, args, kwargs) is True)
        if constructor:
            types |= {target}
        if source is not None:
            return join(self.source_value(source.channel, source.what, site), Value(types=types))
        if type_source is not None:
            method = target.rpartition('.')[2]
            return join(self.source_value(type_source.channel, f"{method}() of {type_source.what}", site,
                                          own_url=method in type_source.own_url, own_site=method in type_source.own_site),
                        Value(types=types))
        inputs = [*args, *kwargs.values(), *star]
        flowing = computed_from(join(*(taint_only(v.flatten()) for v in inputs)))
        if receiver is not None:
            flowing = join(self.derive(receiver, f"{target.rpartition('.')[2]}()", site), flowing)
        flowing = self.sanitised(target, flowing, args, kwargs)
        if flowing.tainted():
            flowing = add_step(flowing, step(site, f"through {_callee_text(node.func)}()"))
        elif not types and not sanitisers and not flowing.tainted() and not all(v.is_const for v in inputs):
            flowing = join(flowing, opaque(f"the result of {_callee_text(node.func)}()", site))
        kept = {f".{attribute}": args[position] if position < len(args) else kwargs[attribute]
                for attribute, position in catalog.returned_attributes.get(target, {}).items()
                if position < len(args) or attribute in kwargs}
        if kept:
            flowing = replace(flowing, items={**(flowing.items or {}), **kept})
        return replace(flowing, types=flowing.types | types)

    def sanitised(self, target: str, value: Value, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """``value`` (what a call of ``target`` returns) cleaned of the kinds the models'
        sanitisers of ``target`` remove, each where its ``when`` holds (or is not known, with
        ``when_unknown``) and its first argument holds any character of its ``args_contain``;
        with ``only_items``, only of the data its first argument holds at those positions alone."""
        for sanitiser in self.catalog.sanitisers.get(target, ()):
            held = True if sanitiser.when is None else self.holds(sanitiser.when, args, kwargs)
            if not (held or (held is None and sanitiser.when_unknown)):
                continue
            if sanitiser.args_contain:
                first = args[0] if args else None
                if first is None or not first.is_const or not isinstance(first.const, str) or not any(
                        c in first.const for c in sanitiser.args_contain):
                    continue
            value = clean(value, sanitiser.kinds, sanitiser.what) if not sanitiser.only_items else \
                clean_only(value, held_only(args[0] if args else EMPTY, sanitiser.only_items), sanitiser.kinds, sanitiser.what)
        return value

    def own_instance(self, classes: frozenset[str]) -> Value | None:
        """The instance of the method being interpreted (its first parameter's value), when it is
        of one of ``classes`` or their subclasses; None elsewhere."""
        function = self.function
        if function is None or not function.bound or function.cls is None or not function.params:
            return None
        own = self.env.get(function.params[0].arg)
        if own is None or not any(c in self.program.class_mro(t) for t in own.types for c in classes):
            return None
        return own

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


def _wildcard(catalog: Any, target: str) -> str:
    """``sh.ls`` as ``sh.*`` when a model names every function of a module that way (``sh``
    runs a program named by the attribute); else ``target`` itself."""
    module = target.rpartition(".")[0]
    while module:
        if f"{module}.*" in catalog.sinks:
            return f"{module}.*"
        module = module.rpartition(".")[0]
    return target


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
