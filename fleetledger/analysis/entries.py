"""Entry points: the functions a framework calls with outside data, and what their parameters
hold.

A function is a handler when a ``[[handler]]`` model says so: a routing decorator on an
application object (``@app.route("/x")``, ``@router.get("/x")``), a qualified decorator
(``@click.command()``), or a method the framework calls on a subclass of one of its classes
(``get`` of a Django ``View`` or a Tornado ``RequestHandler``), a function a call registers as
such a decorator would (``app.add_url_rule``, argparse's ``set_defaults(handler=f)``), or a WSGI
or ASGI application (``protocols``: known by how it answers). A decorator's or registration's
object may be built in a function (``receivers``). A framework convention may also
type a parameter: the first parameter (after ``self``) named as the framework names its request
(``request``), in a module that imports that framework, holds the request object, whose
modelled attributes are sources wherever it is read. Nothing here looks at a name the
analysed code's author chose, other than those conventions.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from .annotated_types import annotation_names, known_types
from .definitions import FunctionInfo
from .interp import Frame
from .model_handlers import Handler
from .model_records import UNTYPED
from .protocols import responder
from .receivers import receiver_value
from .values import Label, Value, of_labels
from .walks import walk

if TYPE_CHECKING:
    from .program import Program


def handler_of(program: Program, function: FunctionInfo) -> Handler | None:
    """Returns the handler model that makes ``function`` an entry point, or None."""
    if isinstance(function.node, ast.Lambda):
        return None
    for handler in program.catalog.handlers:
        if handler.decorators and any(_decorates(program, function, handler, d) for d in function.decorators):
            return handler
        if handler.registrations and function.cls is None and any(_decorates(program, function, handler, d)
                                                                  for d in registered_as(function, handler)):
            return handler
        if handler.bases and function.cls is not None and handler.names_method(function.name):
            mro = program.class_mro(function.cls.id, load=True)
            if any(base in handler.bases for base in mro):
                return handler
        if responder(function, handler) is not None:  # a WSGI or ASGI application
            return handler
        if (not handler.bases and not handler.decorators and handler.methods and handler.imports
                and function.cls is not None and handler.names_method(function.name)
                and _imports_any(function, handler.imports)):
            return handler
    return None


def registered_as(function: FunctionInfo, handler: Handler) -> list[ast.Call]:
    """The decorators ``function`` is given by calls of its module that register it
    (``Handler.registrations``): for ``app.add_url_rule("/x", "x", f)``, ``app.route("/x",
    "x")`` (placed where the call is). A function is matched by a plain name its module defines;
    a function nested in another (an application factory's view) by the calls of the same
    enclosing function; a method of a class-based view by ``Cls.as_view(...)`` passed there
    (its URL rule's converters apply to it)."""
    if isinstance(function.node, ast.Lambda):
        return []
    scope = function.module.tree if not function.nested else _enclosing(function)
    if scope is None:
        return []
    key = function.name if function.cls is None else f"{function.cls.name}.as_view"
    out: list[ast.Call] = []
    for node, position, method in _registering_calls(scope, handler.registrations).get(key, ()):
        assert isinstance(node.func, ast.Attribute)
        attr = (handler.decorators or (method,))[0].rpartition(".")[2]  # "fire.Fire": fire.Fire(f)
        decorator = ast.Call(func=ast.Attribute(value=node.func.value, attr=attr, ctx=ast.Load()),
                             args=node.args[:position], keywords=[])
        out.append(ast.fix_missing_locations(ast.copy_location(decorator, node)))
    return out


@functools.lru_cache(maxsize=64)
def _registering_calls(scope: ast.AST, registrations: tuple[tuple[str, int, str], ...]) -> (
        dict[str, list[tuple[ast.Call, int, str]]]):
    """What each registration call in ``scope`` registers, indexed by the name passed (``f``;
    ``Cls.as_view`` for a class-based view): ``(call, position, method)``. Built once per scope,
    so a module registering thousands of views costs one walk, not one per view."""
    out: dict[str, list[tuple[ast.Call, int, str]]] = {}
    calls = method_calls(scope)
    for method, position, keyword in registrations:
        for node in calls.get(method, ()):
            for passed in passed_functions(node, position, keyword, calls):
                if isinstance(passed, ast.Name):
                    out.setdefault(passed.id, []).append((node, max(position, 0), method))
                elif _as_view(passed):
                    assert isinstance(passed, ast.Call) and isinstance(passed.func, ast.Attribute)
                    assert isinstance(passed.func.value, ast.Name)
                    out.setdefault(f"{passed.func.value.id}.as_view", []).append((node, max(position, 0), method))
    return out


def passed_functions(node: ast.Call, position: int, keyword: str, calls: dict[str, list[ast.Call]]) -> list[ast.expr]:
    """What a registering call passes as the function (``Handler.registrations``: at
    ``position`` or as ``keyword``; with ``"*"``, argparse's ``set_defaults(name=f)``, every
    keyword whose name the scope calls as a method, ``X.name(...)``, in ``calls``)."""
    if keyword == "*":
        return [k.value for k in node.keywords if k.arg is not None and k.arg in calls]
    passed = next((k.value for k in node.keywords if keyword and k.arg == keyword), None)
    if passed is None and 0 <= position < len(node.args):
        passed = node.args[position]
    return [passed] if passed is not None else []


def _as_view(passed: ast.expr | None) -> bool:
    """``Cls.as_view(...)``: a class-based view's entry, which calls the class's methods."""
    return (isinstance(passed, ast.Call) and isinstance(passed.func, ast.Attribute) and passed.func.attr == "as_view"
            and isinstance(passed.func.value, ast.Name))


@functools.lru_cache(maxsize=64)
def method_calls(scope: ast.AST) -> dict[str, list[ast.Call]]:
    """Method name -> the calls ``X.name(...)`` in ``scope`` (walked once per scope: nodes
    hash by identity)."""
    out: dict[str, list[ast.Call]] = {}
    for node in walk(scope):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            out.setdefault(node.func.attr, []).append(node)
    return out


def _enclosing(function: FunctionInfo) -> ast.AST | None:
    """The function whose body defines a nested function, or None."""
    for other in function.module.functions.values():
        if other is not function and not isinstance(other.node, ast.Lambda) and function.node in other.node.body:
            return other.node
    return None


def _decorates(program: Program, function: FunctionInfo, handler: Handler, decorator: ast.expr) -> bool:
    call = decorator if isinstance(decorator, ast.Call) else None
    func = call.func if call is not None else decorator
    frame = _module_frame(program, function)
    if isinstance(func, ast.Attribute) and func.attr in handler.decorators:
        owner = receiver_value(program, function.module, func.value)
        if any(t.startswith("=") for t in owner.types):
            qualified = {t[1:] + "." + func.attr for t in owner.types if t.startswith("=")}
            qualified |= {t[1:] for t in frame.expr(func).types if t.startswith("=")}  # through a vendored copy
            if not qualified & set(handler.decorators):
                owner_types = {t[1:] for t in owner.types if t.startswith("=")}
                if not owner_types & set(handler.decorator_receivers):
                    return False
        else:
            types = {base for t in owner.types for base in program.class_mro(t)}
            receivers = set(handler.decorator_receivers)
            if types & receivers:  # the framework's own object: its routing methods route, whatever the rule
                return not handler.path_argument or call is not None
            if not (not types and UNTYPED in receivers):
                return False
        return not handler.path_argument or _path_rule(frame, call)
    value = frame.expr(func)
    names = {t[1:] for t in value.types if t.startswith("=")}
    return bool(names & set(handler.decorators)) and (not handler.path_argument or _path_rule(frame, call))


def _path_rule(frame: object, call: ast.Call | None) -> bool:
    """True when a routing decorator's first argument is a URL rule: a text starting with
    ``"/"`` (``f"/v{version}/items"`` too)."""
    if call is None:
        return False
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in ("rule", "path")), None)
    if first is None:
        return False
    value = frame.expr(first)  # type: ignore[attr-defined]
    if value.is_const:
        return isinstance(value.const, str) and value.const.startswith("/")
    return (value.prefix or "").startswith("/")


def _module_frame(program: Program, function: FunctionInfo):  # type: ignore[no-untyped-def]
    program.run(function.module)
    return Frame(program, function.module, None, dict(function.module.globals), summarising=False)


def parameter_values(program: Program, function: FunctionInfo) -> dict[str, Value]:
    """Binds each parameter to a ``param`` label, typed where the code or a framework
    convention says what it holds (the instance of a method, an annotation, a request)."""
    env: dict[str, Value] = {}
    for index, param in enumerate(function.params):
        label = Label(channel="param", what=f"parameter {param.arg!r} of {function.qualname}()",
                      path=function.module.path, line=param.lineno, col=param.col_offset, param=index)
        env[param.arg] = Value(labels={label.key: label}, types=parameter_types(program, function, index))
    if function.is_classmethod and function.bound and function.cls is not None:
        # ``cls(...)`` constructs the class (a subclass, where the call's receiver says so:
        # ``specialised``)
        first = function.params[0].arg
        env[first] = replace(env[first], functions=frozenset({function.cls.id}))
    return env


def parameter_types(program: Program, function: FunctionInfo, index: int) -> frozenset[str]:
    """The types a parameter holds, as far as the code or a framework convention says: the
    class for a method's first parameter, its annotation, or a framework's request type."""
    param = function.params[index]
    types: set[str] = set()
    if index == 0 and function.bound and function.cls is not None:
        if not function.is_classmethod:  # a class method's is the class (``parameter_values``)
            types.add(function.cls.id)
        return frozenset(types)
    annotation = _annotation_names(program, function, param)
    types.update(known_types(program, annotation))
    first = 1 if function.bound else 0
    for handler in program.catalog.handlers:
        if not handler.request_type:
            continue
        if annotation & set(handler.annotations):
            types.add(handler.request_type)
        elif (handler.request_parameter and param.arg == handler.request_parameter and index == first
              and _imports_any(function, handler.imports)
              and not (not handler.imports and (_annotated_otherwise(program, function, param, annotation)
                                                or _framework_imported(program, function)))):
            types.add(handler.request_type)
    return frozenset(types)


def _framework_imported(program: Program, function: FunctionInfo) -> bool:
    """True when the module imports a framework a handler model names (by its ``imports`` or
    the package of its request type): there, a parameter named ``request`` is that framework's
    request or nothing known, never any framework's (a Twisted resource's ``request.uri`` is
    not the Tornado request's)."""
    frameworks = {prefix for h in program.catalog.handlers if h.imports for prefix in h.imports}
    frameworks |= {h.request_type.split(".")[0] for h in program.catalog.handlers
                   if h.request_type and (h.imports or h.bases)}
    return _imports_any(function, tuple(sorted(frameworks)))


def _annotated_otherwise(program: Program, function: FunctionInfo, param: ast.arg, annotation: set[str]) -> bool:
    """True when a parameter's annotation says it is not a framework's request (``request:
    PreparedRequest`` in an HTTP client is the request it sends, not one it serves): where the
    module's imports name no framework, the code's own word beats the naming convention (in a
    module that imports the framework, the framework passes its request whatever the annotation
    says, and a hostile repository must not hide a view's flows behind one). ``annotation``
    holds the types the annotation resolves to (``Any`` and ``object`` say nothing); one it
    does not resolve counts only when its last word is imported from the repository's own
    package (``from .models import PreparedRequest``, for type checkers) and is not a word a
    framework names its request class by."""
    if param.annotation is None:
        return False
    requests = {h.request_type for h in program.catalog.handlers if h.request_type}
    requests |= {a for h in program.catalog.handlers for a in h.annotations}
    requests |= {base for r in list(requests) for base in program.class_mro(r)}
    if annotation - _SAYS_NOTHING:
        return not any(requests & set(program.class_mro(name)) for name in annotation)
    word = _last_word(param.annotation)
    relative = {alias.asname or alias.name for node in walk(function.module.tree)
                if isinstance(node, ast.ImportFrom) and node.level > 0 for alias in node.names}
    return word in relative and word not in {r.rpartition(".")[2] for r in requests}


_SAYS_NOTHING = frozenset({"typing.Any", "typing_extensions.Any", "object", "builtins.object"})


NUMERIC_TYPES = frozenset({"int", "float", "bool", "complex", "Decimal", "UUID", "date", "datetime", "time",
                           "timedelta"})
"""Annotations (the builtins' and the standard library's number, identifier and time types)
that say a parameter holds no text."""


def numeric_annotation(annotation: ast.expr | None) -> bool:
    """True for a parameter annotated with a number, identifier or time type, also optional
    (``int``, ``Optional[int]``, ``int | None``, ``uuid.UUID``, ``"int"``)."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        parts = [annotation.left, annotation.right]
        none = [isinstance(p, ast.Constant) and p.value is None for p in parts]
        return any(numeric_annotation(p) for p in parts) and all(n or numeric_annotation(p) for p, n in zip(parts, none))
    return annotation is not None and _last_word(annotation) in NUMERIC_TYPES


def _last_word(node: ast.expr) -> str | None:
    """The class name an annotation ends with (``Optional[x.Req]``, ``"Req"``: ``Req``), or None."""
    if isinstance(node, ast.Subscript):
        node = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and node.slice.elts else node.slice
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.strip().rpartition(".")[2].rstrip("]") or None
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def returned_types(program: Program, function: FunctionInfo) -> frozenset[str]:
    """The classes and library types a function's return annotation names (``def hook(self) ->
    DbApiHook``), once per function; empty without one. A claim of the code's author: the
    caller adds them to a result whose type the code does not show, and removes nothing."""
    found = program.returned.get(function.id)
    if found is None:
        node = function.node
        returns = None if isinstance(node, ast.Lambda) else node.returns
        found = program.returned[function.id] = frozenset() if returns is None else known_types(
            program, annotation_names(_module_frame(program, function), returns))
    return found


def _annotation_names(program: Program, function: FunctionInfo, param: ast.arg) -> set[str]:
    if param.annotation is None:
        return set()
    return annotation_names(_module_frame(program, function), param.annotation)


def _imports_any(function: FunctionInfo, prefixes: tuple[str, ...]) -> bool:
    """True when the module imports one of ``prefixes`` (always, for no prefixes)."""
    if not prefixes:
        return True
    imported = function.module.imported
    return any(name == p or name.startswith(p + ".") for name in imported for p in prefixes)


def handler_values(program: Program, function: FunctionInfo, handler: Handler, env: dict[str, Value],
                   depth: int = 0) -> dict[str, Value]:
    """Binds a handler's parameters to what the framework passes: outside data for route and
    query parameters (unless annotated with a type the framework enforces), the request object
    for the request parameter, and, for a parameter the framework fills by dependency injection
    (FastAPI's ``Depends(f)``, as a default or in ``Annotated``), what ``f`` returns when the
    framework calls it with outside data in turn (``depth``: dependencies of dependencies)."""
    node = function.node
    assert not isinstance(node, ast.Lambda)
    defaults = defaults_by_param(node.args)
    out = dict(env)
    first = handler.framework_parameters if handler.framework_parameters >= 0 else 1 if function.bound else 0
    frame = _module_frame(program, function)
    converters = _rule_converters(frame, [*function.decorators, *registered_as(function, handler)]) if (
        handler.safe_converters) else {}
    server = responder(function, handler)
    for index, param in enumerate(function.params):
        if server is not None and index >= server[0]:
            if index == server[0]:
                out[param.arg] = of_labels([], types=frozenset({"=" + server[1]}))
            continue
        if server is not None and index == server[0] - 1 and handler.asgi_receive:
            out[param.arg] = of_labels([], types=frozenset({"=" + handler.asgi_receive}))
            continue
        if index == handler.request_index(function.bound) and handler.request_type:
            out[param.arg] = of_labels([], types=parameter_types(program, function, index) | {handler.request_type})
            continue
        if index < first:
            continue
        types = parameter_types(program, function, index)
        if handler.request_type and handler.request_type in types:
            out[param.arg] = of_labels([], types=types)
            continue
        if handler.parameters != "all":
            continue
        names = _annotation_names(program, function, param)
        if (names & set(handler.safe_annotations) or _literal_annotation(param)
                or converters.get(param.arg) in handler.safe_converters):
            out[param.arg] = of_labels([], types=types)
            continue
        default = defaults.get(param.arg)
        marker = _injection(frame, handler, param, default)
        if marker is not None:
            # The framework fills it: with what a dependency of the analysed code returns, the
            # framework calling it as it calls a handler (its own parameters outside data).
            given = _dependency(program, handler, frame, param, marker, depth)
            if given is not None:
                out[param.arg] = given
            continue
        if types & set(program.classes) and not handler.parameters == "all":
            continue
        label = Label(channel=handler.channel, what=f"the {handler.framework} parameter {param.arg!r} of {function.qualname}()",
                      path=function.module.path, line=param.lineno, col=param.col_offset)
        out[param.arg] = of_labels([label], types=types - set(program.classes))
    return out


MAX_DEPENDENCY_DEPTH = 3
"""Dependencies of dependencies followed (FastAPI resolves any depth; a deeper one is taken for
a value the framework fills, of unknown origin)."""


def _injection(frame: Frame, handler: Handler, param: ast.arg, default: ast.expr | None) -> ast.Call | None:
    """The call marking a parameter that the framework fills (``Depends(f)``, one of
    ``handler.excluded_defaults``), as its default or in its ``Annotated[T, ...]``, or None."""
    candidates = [default] if default is not None else []
    node = param.annotation
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
        candidates.extend(node.slice.elts[1:])
    for candidate in candidates:
        if isinstance(candidate, ast.Call):
            called = {t[1:] for t in frame.expr(candidate.func).types if t.startswith("=")}
            if called & set(handler.excluded_defaults):
                return candidate
    return None


def _dependency(program: Program, handler: Handler, frame: Frame, param: ast.arg, marker: ast.Call,
                depth: int) -> Value | None:
    """What the framework passes for a parameter marked ``Depends(f)`` (or ``Depends()`` under
    a class annotation, the class itself): ``f`` of the analysed code called with its own
    parameters bound as a handler's are (an instance's ``__call__``, for an instance of a class
    of the code); for an instance of a library's class (a security scheme), request data; None
    when ``f`` is a library's function, unknown, or too deep."""
    target = marker.args[0] if marker.args else next((k.value for k in marker.keywords if k.arg == "dependency"),
                                                       None)
    if target is None:
        annotation = param.annotation
        if isinstance(annotation, ast.Subscript) and isinstance(annotation.slice, ast.Tuple):
            annotation = annotation.slice.elts[0]
        target = annotation
    if target is None or depth >= MAX_DEPENDENCY_DEPTH:
        return None
    value = frame.expr(target)
    ids = sorted(value.functions) + sorted(
        found[1] for found in (program.resolve(t[1:]) for t in value.types if t.startswith("=")) if found is not None
        and found[0] in ("function", "class"))
    receiver = None
    if not ids:
        # An instance: of a class of the code, FastAPI calls its ``__call__``; of a library's
        # (a security scheme: ``OAuth2PasswordBearer``, ``APIKeyHeader``), it reads the request.
        calls = [program.method(t, "__call__") for t in sorted(value.types) if t in program.classes]
        ids = [fid for fid in calls if fid is not None]
        if not ids:
            instance = isinstance(target, ast.Call) or any(label.channel == "opaque" for label in value.all_labels()) or (
                bool(value.types) and not all(t.startswith("=") for t in value.types))
            if not instance:
                return None  # a library function, or nothing known
            return of_labels([Label(channel=handler.channel, what=f"what the {handler.framework} dependency "
                                    f"{ast.unparse(target)[:40]} reads from the request", path=frame.module.path,
                                    line=marker.lineno, col=marker.col_offset)])
        receiver = value
    fid = ids[0]
    if fid in program.classes:
        init = program.classes[fid].methods.get("__init__")
        called = program.functions.get(init) if init else None
    else:
        called = program.functions.get(fid)
    if called is None or isinstance(called.node, ast.Lambda):
        return frame.call_local(fid, None, [], {}, [], marker)  # ``Depends(lambda: Settings())``: nothing passed
    bound = handler_values(program, called, handler, parameter_values(program, called), depth + 1)
    names = [p.arg for p in called.params][1 if called.bound else 0:]
    return frame.call_local(fid, receiver, [], {name: bound[name] for name in names if name in bound}, [], marker)


_CONVERTER = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")


def _rule_converters(frame: object, decorators: list[ast.expr]) -> dict[str, str]:
    """Parameter -> converter, from the URL rules of a function's routing decorators
    (``"/item/<int:item_id>"``; a parameter without a converter gets ``"string"``)."""
    out: dict[str, str] = {}
    for decorator in decorators:
        if not isinstance(decorator, ast.Call) or not decorator.args:
            continue
        rule = frame.expr(decorator.args[0])  # type: ignore[attr-defined]
        if rule.is_const and isinstance(rule.const, str):
            for converter, name in _CONVERTER.findall(rule.const):
                out.setdefault(name, converter or "string")
    return out


def _literal_annotation(param: ast.arg) -> bool:
    """``Literal["a", "b"]`` admits only those constants."""
    node = param.annotation
    return isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute)) and (
        (node.value.id if isinstance(node.value, ast.Name) else node.value.attr) == "Literal")


def defaults_by_param(args: ast.arguments) -> dict[str, ast.expr]:
    """Parameter name -> its default expression, for the parameters that have one (Python's
    rules: the last positional parameters take ``defaults`` in order, keyword-only ones
    ``kw_defaults``)."""
    positional = [*args.posonlyargs, *args.args]
    out = {param.arg: default for param, default in zip(positional[len(positional) - len(args.defaults):], args.defaults)}
    out.update({param.arg: default for param, default in zip(args.kwonlyargs, args.kw_defaults) if default is not None})
    return out
