"""Where outside data enters a program: web requests, the command line, stdin, env, network.

Recognised (by the shape of the expression, with import aliases resolved):

* Flask/Quart/Werkzeug/Bottle ``request.args|form|values|json|cookies|headers|data|files|...``
  and ``request.get_json()``/``get_data()``; Django/DRF ``request.GET|POST|body|COOKIES|META|
  FILES|data|query_params``, also as ``self.request.*`` in class-based views; Starlette/FastAPI
  ``request.query_params|path_params|json()|form()|body()``; aiohttp ``request.match_info|
  post()|read()``; Tornado ``self.get_argument()`` and friends.
* Parameters of route handlers: functions decorated with ``@app.route``/``@bp.get``/
  ``@router.post``/``@app.api_route`` (Flask, FastAPI, Quart, Sanic, Bottle) and Django views
  (a first parameter named ``request``; a function of that shape that code in the same file
  calls is a helper whose callers fill its parameters). A Flask converter (``<int:id>``) or a FastAPI type
  annotation (``id: int``, ``level: Literal["info", "warn"]``) makes the framework reject
  anything but that type or those values.
* Parameters of the hooks Django calls with data users supply (``hook_kind``): template filters
  and tags registered on a ``template.Library`` (``@register.filter``, ``@register.simple_tag``,
  ``@register.inclusion_tag``, or ``register.filter("name", function)``: they get values from the
  template's context), a form widget's ``render(self, name, value, ...)`` (a bound form
  re-renders the submitted value), and ModelAdmin display methods and ``list_display``
  callables (they get a model instance whose fields users filled in). The engine's own flags
  (a filter's ``autoescape``, a widget's ``attrs`` and ``renderer``) are not such data.
* ``input()``, ``sys.argv``, ``sys.stdin``, ``argparse`` results, ``os.environ``/``os.getenv``,
  parameters of ``click`` commands, and HTTP client or socket reads (``requests.get``,
  ``urlopen``, ``sock.recv``).

``entry_point`` tells whether a file shows any of these at all (the environment aside). A file
that does not is library code: its functions' parameters are filled by callers elsewhere, and
nothing in the file shows outside data reaching them. A Django hook is an entry point for its own
parameters only: template tag libraries, widgets and admin classes are what reusable apps ship,
so the helpers beside a hook keep the library-code rule.

A template filter that takes the template's ``autoescape`` setting (``needs_autoescape=True``)
and acts on it has Django's contract to escape its input when the template autoescapes; its
output is unescaped only where the template author turned autoescaping off. For text marked
safe, its parameters are therefore outside data the filter escapes (a sanitiser), not raw data.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .tree import FunctionNode, SourceTree

if TYPE_CHECKING:
    from .guards import Facts

Channel = Literal["http", "network", "cli", "stdin", "env", "local"]

REQUEST_ATTRIBUTES = frozenset({
    "args", "form", "values", "json", "cookies", "headers", "data", "files", "get_json",
    "get_data", "view_args", "stream", "environ", "query_string", "path", "full_path", "url",
    "base_url", "GET", "POST", "body", "COOKIES", "META", "FILES", "query_params",
    "path_params", "match_info", "post", "read", "text", "content", "rel_url", "query",
    "params", "matchdict", "json_body", "raw_post_data", "host", "referrer", "user_agent",
    "authorization", "form_data",
})
_TORNADO_GETTERS = frozenset({
    "get_argument", "get_arguments", "get_query_argument", "get_query_arguments",
    "get_body_argument", "get_body_arguments", "get_cookie", "decode_argument",
})
_REQUEST_MODULES = ("flask.request", "quart.request", "werkzeug.request", "bottle.request",
                    "sanic.request")
_ROUTE_DECORATORS = frozenset({"route", "get", "post", "put", "patch", "delete", "head",
                               "options", "api_route", "websocket", "view_functions"})
_APPLICATIONS = frozenset({"flask.Flask", "flask.Blueprint", "quart.Quart", "fastapi.FastAPI", "fastapi.APIRouter",
                           "sanic.Sanic", "bottle.Bottle", "starlette.applications.Starlette",
                           "aiohttp.web.Application", "tornado.web.Application", "falcon.App"})
_REQUEST_TYPES = frozenset({"Request", "HttpRequest", "WebSocket", "HTTPConnection"})
_DEPENDENCY_MARKERS = frozenset({"Depends", "Security"})
_SAFE_TYPES = frozenset({"int", "float", "bool", "UUID", "uuid.UUID", "date", "datetime",
                         "datetime.date", "datetime.datetime", "Decimal", "decimal.Decimal",
                         "PositiveInt", "NonNegativeInt", "conint", "confloat"})
_SAFE_CONVERTERS = frozenset({"int", "float", "uuid"})
# Django hooks (see ``hook_kind``): how a template library registers filters and tags, what a
# widget's and an admin class's bases are called, the admin options that name display methods,
# and the parameters the framework fills with its own flags rather than users' data.
_TEMPLATE_REGISTRARS = frozenset({"filter", "simple_tag", "inclusion_tag"})
_WIDGET_BASE_SUFFIXES = ("Widget", "Input", "Select", "Textarea")
_ADMIN_BASE_SUFFIXES = ("Admin", "Inline")
_ADMIN_DISPLAY_OPTIONS = frozenset({"list_display", "list_display_links", "readonly_fields"})
_HOOK_FLAGS: dict[str, frozenset[str]] = {
    "template": frozenset({"autoescape"}),
    "widget": frozenset({"attrs", "renderer"}),
    "admin": frozenset(),
}
_STDIN_CALLS = frozenset({"input", "raw_input", "getpass.getpass", "click.prompt"})
_ENV_CALLS = frozenset({"os.getenv", "os.environ.get", "os.getenvb", "os.environ.setdefault"})
_NETWORK_CALLS = frozenset({
    *(f"{lib}.{verb}" for lib in ("requests", "httpx") for verb in
      ("get", "post", "put", "patch", "delete", "head", "options", "request", "stream")),
    "urllib.request.urlopen", "urllib2.urlopen", "urllib.urlopen",
})
_NETWORK_METHODS = frozenset({"recv", "recvfrom", "recv_into", "recvmsg", "makefile"})
_CLI_METHODS = frozenset({"parse_args", "parse_known_args", "parse_intermixed_args"})


@dataclass(frozen=True, kw_only=True)
class Source:
    """Outside data an expression reads.

    Attributes:
        channel: ``"http"`` (a web request), ``"network"`` (a response or socket read),
            ``"cli"``, ``"stdin"``, ``"env"`` or ``"local"`` (a file any local user can write).
        description: What it is, e.g. ``"request.args (Flask query string)"``.
        sanitiser: Set when the framework admits only a safe type (``<int:id>``, ``id: int``).
    """

    channel: Channel
    description: str
    sanitiser: str | None = None


def source_of(tree: SourceTree, expr: ast.expr) -> Source | None:
    """Tells whether ``expr`` itself reads outside data.

    Args:
        tree: The parsed file.
        expr: A name, attribute, subscript or call expression.

    Returns:
        The source, or None when the expression is not a known entry point (its value may
        still derive from one; the taint tracer follows it further).
    """
    while isinstance(expr, (ast.Subscript, ast.Await)):
        expr = expr.value
    if isinstance(expr, ast.Call):
        name = tree.qualname(expr.func) or ""
        if name in _STDIN_CALLS or name.startswith("sys.stdin."):
            return Source(channel="stdin", description=f"{name}() (standard input)")
        if name in _ENV_CALLS:
            return Source(channel="env", description=f"{name}() (environment variable)")
        if name in _NETWORK_CALLS:
            return Source(channel="network", description=f"the response of {name}()")
        if isinstance(expr.func, ast.Attribute):
            method = expr.func.attr
            if method in _NETWORK_METHODS:
                return Source(channel="network", description=f".{method}() (bytes read from a socket)")
            if method in _CLI_METHODS:
                return Source(channel="cli", description=f".{method}() (command-line arguments)")
            if method in _TORNADO_GETTERS and _is_self(expr.func.value):
                return Source(channel="http", description=f"self.{method}() (Tornado request argument)")
    name = tree.qualname(expr) or ""
    if name == "sys.argv" or name.startswith("sys.argv."):
        return Source(channel="cli", description="sys.argv (command-line arguments)")
    if name == "sys.stdin" or name.startswith("sys.stdin."):
        return Source(channel="stdin", description="sys.stdin (standard input)")
    if name == "os.environ":
        return Source(channel="env", description="os.environ (environment variables)")
    return _request_attribute(tree, expr)


def _request_attribute(tree: SourceTree, expr: ast.expr) -> Source | None:
    """Recognises ``request.args[...]``, ``self.request.GET.get(...)``, ``await request.json()``."""
    attributes: list[str] = []
    current = expr
    while True:
        if isinstance(current, ast.Attribute):
            attributes.append(current.attr)
            current = current.value
        elif isinstance(current, ast.Call):
            current = current.func
        elif isinstance(current, (ast.Subscript, ast.Await)):
            current = current.value
        else:
            break
    attributes.reverse()
    if isinstance(current, ast.Name) and current.id == "self" and attributes[:1] == ["request"]:
        attributes = attributes[1:]
        root = "self.request"
    elif isinstance(current, ast.Name) and _is_request_object(tree, current):
        root = current.id
    else:
        return None
    if not attributes or attributes[0] not in REQUEST_ATTRIBUTES:
        return None
    return Source(channel="http", description=f"{root}.{attributes[0]} (request data)")


def _is_request_object(tree: SourceTree, name: ast.Name) -> bool:
    imported = tree.imports.get(name.id)
    if imported is not None:
        return imported in _REQUEST_MODULES
    if name.id not in ("request", "req"):
        return False
    function = tree.function_of(name)
    while function is not None:
        for arg in _all_args(function):
            if arg.arg == name.id:
                return True
        function = tree.function_of(function)
    return False


def _is_self(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Name) and expr.id == "self"


def _all_args(function: FunctionNode | ast.Lambda) -> list[ast.arg]:
    args = function.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if args.vararg:
        every.append(args.vararg)
    if args.kwarg:
        every.append(args.kwarg)
    return every


def entry_point(tree: SourceTree) -> str | None:
    """Names the first place where outside data enters the file, or None when there is none.

    Entry points are route handlers, Django views (not the Django hooks: they are entry points for
    their own parameters only), ``click`` commands, an imported request object (``from flask import request``), a web application created in the file
    (``Flask(__name__)``, ``FastAPI()``), and reads of request data, the command line, stdin,
    sockets or HTTP responses. Environment variables are not
    counted: they are the operator's configuration, not data an attacker sends. Computed once
    per tree (memoised in ``tree.memo``), by one iterative walk in a fixed order.

    Args:
        tree: The parsed file.

    Returns:
        A clause such as ``"route handler upload() (line 12)"``, or None for library code.
    """
    if "sources.entry_point" in tree.memo:
        return tree.memo["sources.entry_point"]  # type: ignore[no-any-return]
    found: str | None = next((f"the imported request object {local!r}" for local, name in sorted(tree.imports.items())
                              if name in _REQUEST_MODULES), None)
    for node in [] if found else ast.walk(tree.module):
        if isinstance(node, ast.Call) and (tree.qualname(node.func) or "") in _APPLICATIONS:
            found = f"the web application created on line {node.lineno}"
            break
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kind = handler_kind(tree, node)
            if kind is not None and kind not in _HOOK_FLAGS:
                found = f"{_HANDLER_NAMES[kind]} {node.name}() (line {node.lineno})"
                break
        elif isinstance(node, (ast.Attribute, ast.Subscript, ast.Call, ast.Name)):
            source = source_of(tree, node)
            if source is not None and source.channel != "env":
                found = f"{source.description} (line {node.lineno})"
                break
    tree.memo["sources.entry_point"] = found
    return found


HandlerKind = Literal["route", "view", "cli", "template", "widget", "admin"]
_HANDLER_NAMES: dict[str, str] = {"route": "route handler", "view": "view handler", "cli": "command-line handler",
                                  "template": "template filter or tag", "widget": "form widget method",
                                  "admin": "admin display method"}


def handler_kind(tree: SourceTree, function: FunctionNode) -> HandlerKind | None:
    """Tells whether a function is called by a framework with outside data as arguments.

    Args:
        tree: The parsed file.
        function: The function.

    Returns:
        ``"route"`` for a function under a route decorator, ``"view"`` for a Django-style view
        (first parameter ``request``, or a class-based view method ``get(self, request, ...)``),
        ``"cli"`` for a ``click`` command, a Django hook's kind (``"template"``, ``"widget"``,
        ``"admin"``: see ``hook_kind``), None otherwise.
    """
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = tree.qualname(target) or ""
        last = name.rsplit(".", 1)[-1]
        if name.startswith("click.") or last in ("command", "argument", "option") and "." in name:
            return "cli"
        if last in _ROUTE_DECORATORS and (isinstance(decorator, ast.Call) or "." in name):
            return "route"
        if last == "api_view":
            return "view"
    positional = [*function.args.posonlyargs, *function.args.args]
    names = [arg.arg for arg in positional]
    if names[:1] == ["request"] or names[:2] == ["self", "request"]:
        return "view"
    return hook_kind(tree, function)


def hook_kind(tree: SourceTree, function: FunctionNode) -> Literal["template", "widget", "admin"] | None:
    """Tells whether Django calls a function as a hook with data users supply.

    * ``"template"``: a filter or tag registered on a template library (a name bound to
      ``template.Library()``, or called ``register``) by decorator (``@register.filter``,
      ``@register.simple_tag(takes_context=True)``) or by call (``register.filter("f", f)``);
    * ``"widget"``: ``render`` of a class whose base is a form widget (a name ending in
      ``Widget``, ``Input``, ``Select`` or ``Textarea``);
    * ``"admin"``: a method of a ModelAdmin or inline class (a base ending in ``Admin`` or
      ``Inline``) decorated with ``@admin.display`` or named in its ``list_display``,
      ``list_display_links`` or ``readonly_fields``; a module-level function decorated with
      ``@admin.display`` or named as a callable in some class's ``list_display``.

    Args:
        tree: The parsed file.
        function: The function.

    Returns:
        The hook's kind, or None.
    """
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr in _TEMPLATE_REGISTRARS and _is_template_library(tree, target.value):
            return "template"
    hooks = _registered_hooks(tree)
    owner = tree.parents.get(function)
    if isinstance(owner, ast.ClassDef):
        if function.name == "render" and _base_named(tree, owner, _WIDGET_BASE_SUFFIXES):
            return "widget"
        if _base_named(tree, owner, _ADMIN_BASE_SUFFIXES) and (
                _display_decorated(tree, function) or function.name in _admin_options(tree, owner)):
            return "admin"
        return None
    if isinstance(owner, ast.Module):
        if function.name in hooks["template"]:
            return "template"
        if _display_decorated(tree, function) or function.name in hooks["admin"]:
            return "admin"
    return None


def _autoescape_contract(tree: SourceTree, function: FunctionNode) -> str | None:
    """Describes a template filter's escaping by the template's ``autoescape`` setting, or None.

    The filter must declare the ``autoescape`` parameter and act on it: test it in a condition
    or pass it on to a call (``linebreaks(value, autoescape)``). Declaring it and ignoring it
    is no contract.
    """
    if not any(arg.arg == "autoescape" for arg in _all_args(function)):
        return None
    for node in ast.walk(function):
        if not (isinstance(node, ast.Name) and node.id == "autoescape" and isinstance(node.ctx, ast.Load)):
            continue
        for ancestor in tree.ancestors(node):
            if isinstance(ancestor, (ast.If, ast.IfExp, ast.While, ast.Call)):
                return (f"the filter {function.name}() takes the template's autoescape setting and escapes by it "
                        f"(line {node.lineno}); its output is unescaped only where the template author turned autoescaping off")
            if isinstance(ancestor, ast.stmt):
                break
    return None


def _is_template_library(tree: SourceTree, expr: ast.expr) -> bool:
    """``register`` (by name), or a module-level name bound to ``Library()``."""
    if not isinstance(expr, ast.Name):
        return False
    if expr.id == "register":
        return True
    libraries: set[str] | None = tree.memo.get("sources.template_libraries")
    if libraries is None:
        libraries = set()
        for stmt in tree.module.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and (
                    tree.qualname(stmt.value.func) or "").rsplit(".", 1)[-1] == "Library":
                libraries.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        tree.memo["sources.template_libraries"] = libraries
    return expr.id in libraries


def _registered_hooks(tree: SourceTree) -> dict[str, frozenset[str]]:
    """Names of module-level functions registered by call: as template filters or tags
    (``register.filter("name", f)``, ``register.simple_tag(f)``) and as ``list_display``
    callables of an admin class. Computed once per tree, by one iterative walk."""
    found: dict[str, frozenset[str]] | None = tree.memo.get("sources.registered_hooks")
    if found is not None:
        return found
    template: set[str] = set()
    admin: set[str] = set()
    for node in ast.walk(tree.module):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TEMPLATE_REGISTRARS \
                and _is_template_library(tree, node.func.value):
            template.update(a.id for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Name))
        elif isinstance(node, ast.ClassDef) and _base_named(tree, node, _ADMIN_BASE_SUFFIXES):
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "list_display" for t in stmt.targets) \
                        and isinstance(stmt.value, (ast.Tuple, ast.List)):
                    admin.update(e.id for e in stmt.value.elts if isinstance(e, ast.Name))
    found = {"template": frozenset(template), "admin": frozenset(admin)}
    tree.memo["sources.registered_hooks"] = found
    return found


def _base_named(tree: SourceTree, owner: ast.ClassDef, suffixes: tuple[str, ...]) -> bool:
    return any((tree.qualname(base) or "").rsplit(".", 1)[-1].endswith(suffixes) for base in owner.bases)


def _display_decorated(tree: SourceTree, function: FunctionNode) -> bool:
    """Decorated with Django's ``admin.display`` (``@admin.display(...)``, ``@display``)."""
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = tree.qualname(target) or ""
        if name == "django.contrib.admin.display" or name.endswith("admin.display") or name == "admin.decorators.display":
            return True
    return False


def _admin_options(tree: SourceTree, owner: ast.ClassDef) -> frozenset[str]:
    """Method names an admin class lists in its display options (string entries)."""
    names: set[str] = set()
    for stmt in owner.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id in _ADMIN_DISPLAY_OPTIONS for t in stmt.targets) \
                and isinstance(stmt.value, (ast.Tuple, ast.List)):
            names.update(e.value for e in stmt.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return frozenset(names)


def handler_parameter(tree: SourceTree, function: FunctionNode, name: str, sink: str | None = None) -> Source | None:
    """Classifies a parameter of a route handler, view, CLI command or Django hook.

    Args:
        tree: The parsed file.
        function: The function that declares the parameter.
        name: The parameter's name.
        sink: The sink the value reaches, when known (``"html"`` lets a template filter's
            autoescape contract count as escaping).

    Returns:
        A source when the framework fills the parameter from the request or command line
        (with a sanitiser when it admits only a safe type); None when the function is not a
        handler, or the parameter is ``self``, the request object itself or a dependency.
    """
    kind = handler_kind(tree, function)
    if kind is None or name in ("self", "cls", "request", "req") or name in _HOOK_FLAGS.get(kind, ()):
        return None
    if kind == "view" and _called_in_file(tree, function):
        # Shaped like a view, but called by code in this file (a helper such as
        # render_flatpage(request, page)): its callers fill the parameters, not the URL router.
        return None
    arg = next((a for a in _all_args(function) if a.arg == name), None)
    if arg is None:
        return None
    annotation = tree.qualname(arg.annotation) if arg.annotation is not None else None
    if isinstance(arg.annotation, ast.Subscript) and (tree.qualname(arg.annotation.value) or "") in ("Literal", "typing.Literal", "typing_extensions.Literal"):
        annotation = "Literal"
    if annotation is not None and annotation.rsplit(".", 1)[-1] in _REQUEST_TYPES:
        return None
    default = _default_of(function, arg)
    if isinstance(default, ast.Call) and (tree.qualname(default.func) or "").rsplit(".", 1)[-1] in _DEPENDENCY_MARKERS:
        return None
    channel: Channel = "cli" if kind == "cli" else "http"
    where = {"cli": "command-line option", "template": "template data", "widget": "form data",
             "admin": "a model instance users filled in"}.get(kind, "request parameter")
    description = f"parameter {name!r} of {_HANDLER_NAMES[kind]} {function.name}() ({where})"
    if kind == "template" and sink == "html":
        flag = _autoescape_contract(tree, function)
        if flag is not None:
            return Source(channel=channel, description=description, sanitiser=flag)
    if annotation == "Literal":
        return Source(channel=channel, description=description, sanitiser=f"the framework admits only the Literal values declared for {name!r}")
    if annotation is not None and annotation in _SAFE_TYPES:
        return Source(channel=channel, description=description, sanitiser=f"the framework converts {name!r} to {annotation}")
    converter = _route_converter(function, name)
    if converter in _SAFE_CONVERTERS:
        return Source(channel=channel, description=description, sanitiser=f"the route converter <{converter}:{name}> admits only that type")
    return Source(channel=channel, description=description)


def cli_option_restriction(tree: SourceTree, attribute: ast.Attribute, facts: "Facts") -> str | None:
    """Tells whether ``args.name`` (``args`` from ``parse_args()``) can hold only safe values.

    argparse rejects a command line whose option is not one of its declared ``choices`` or
    does not convert with its ``type`` (``int``, ``float``), so such an option is restricted
    before the program sees it. The file's ``add_argument`` calls are indexed once per tree,
    so an attribute whose name no option declares costs a dictionary look-up.

    Args:
        tree: The parsed file.
        attribute: The attribute read, e.g. ``options.cmd``.
        facts: Resolves names to values and tells constants apart (the taint tracer).

    Returns:
        A description of the restriction, or None when the option is not restricted (or is
        not an argparse option this file declares).
    """
    declared: dict[str, list[ast.Call]] | None = tree.memo.get("sources.argparse")
    if declared is None:
        declared = {}
        for node in ast.walk(tree.module):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                dest = _argparse_dest(node)
                if dest is not None:
                    declared.setdefault(dest, []).append(node)
        tree.memo["sources.argparse"] = declared
    calls = declared.get(attribute.attr)
    if not calls:
        return None
    parsed = facts.literal(attribute.value)
    if not (isinstance(parsed, ast.Call) and isinstance(parsed.func, ast.Attribute) and parsed.func.attr in _CLI_METHODS):
        return None
    for node in calls:
        for item in node.keywords:
            if item.arg == "choices" and facts.is_constant(facts.literal(item.value)):
                return f"argparse admits only the choices declared for {attribute.attr!r} on line {node.lineno}"
            if item.arg == "type" and (tree.qualname(item.value) or "") in ("int", "float"):
                return f"argparse converts {attribute.attr!r} to {tree.qualname(item.value)} (line {node.lineno})"
    return None


def _argparse_dest(call: ast.Call) -> str | None:
    for item in call.keywords:
        if item.arg == "dest" and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str):
            return item.value.value
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    long = next((n for n in names if n.startswith("--")), None)
    if long is not None:
        return long[2:].replace("-", "_")
    plain = next((n for n in names if not n.startswith("-")), None)
    return plain


def _called_in_file(tree: SourceTree, function: FunctionNode) -> bool:
    """True when some call in the file, outside the function itself, calls it by name."""
    calls = tree.memo.get("sources.called_names")
    if calls is None:
        calls = {}
        for node in ast.walk(tree.module):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                if called is not None:
                    calls.setdefault(called, []).append(node)
        tree.memo["sources.called_names"] = calls
    return any(tree.function_of(call) is not function for call in calls.get(function.name, ()))


def _default_of(function: FunctionNode, arg: ast.arg) -> ast.expr | None:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    if arg in positional:
        offset = len(positional) - len(args.defaults)
        index = positional.index(arg)
        return args.defaults[index - offset] if index >= offset else None
    if arg in args.kwonlyargs:
        return args.kw_defaults[args.kwonlyargs.index(arg)]
    return None


def _route_converter(function: FunctionNode, name: str) -> str | None:
    for decorator in function.decorator_list:
        if not isinstance(decorator, ast.Call) or not decorator.args:
            continue
        rule = decorator.args[0]
        if isinstance(rule, ast.Constant) and isinstance(rule.value, str):
            match = re.search(r"<(?:(\w+)(?:\([^)]*\))?:)?" + re.escape(name) + ">", rule.value)
            if match:
                return match.group(1) or "string"
    return None
