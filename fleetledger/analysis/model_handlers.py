"""The entry-point model as the engine reads it (``[[handler]]`` entries of ``models/*.toml``):
how a framework marks the functions it calls with outside data.
"""

from __future__ import annotations

from dataclasses import dataclass


AFTER_SELF = -2
"""``Handler.request_position`` for a decorator that takes functions and methods alike
(Werkzeug's ``Request.application``): the request comes first, after ``self`` in a method."""


@dataclass(frozen=True, kw_only=True)
class Handler:
    """An entry point: a function the framework calls with outside data.

    Attributes:
        framework: The framework's name, for traces.
        decorators: Decorator method names (``"route"``) or qualified decorator names
            (``"click.command"``) that mark a handler.
        decorator_receivers: Types the decorator's object must have (``"flask.Flask"``);
            ``"*"`` also accepts an object of unknown type.
        path_argument: The decorator must be called, and on an object of unknown type its
            first argument must be a URL rule, a text starting with ``"/"`` (how routing
            decorators are told from others of the same name); on an object of one of the
            ``decorator_receivers`` types, the rule may be any (``f"{prefix}/items"``).
        bases: Library classes whose subclasses' methods named in ``methods`` are handlers;
            none, with ``methods`` and ``imports``: the methods so named of any class of a
            module that imports the framework (Falcon's resources are plain classes whose
            ``on_get`` and the like the framework calls).
        methods: Method names of those subclasses that the framework calls; a name ending in
            ``*`` names every method starting so (graphene's ``resolve_*``: the framework finds
            a field's resolver by that prefix).
        request_parameter: A framework convention: the first parameter (after ``self``) with
            this name holds the request (``"request"`` in Django, aiohttp, Pyramid,
            Starlette); needs one of ``imports`` to be imported by the module.
        imports: Module prefixes whose import makes the convention apply.
        request_type: The type given to the request parameter.
        annotations: Parameter annotations (qualified) that mark a request parameter.
        parameters: ``"all"``: every other parameter is outside data (route arguments,
            query parameters); ``"none"``: only the request parameter is.
        safe_annotations: Annotations that make the framework accept only safe values
            (``"int"``, ``"uuid.UUID"``); a parameter so annotated is not outside data.
        safe_converters: URL rule converters that admit only safe values (Flask's
            ``<int:id>``): a parameter the decorator's rule declares so is not outside data.
        excluded_defaults: Calls whose result as a default marks a parameter the framework
            fills itself (``"fastapi.Depends"``).
        returns_sink: A kind whose sink the handler's return value is (``"xss"`` for
            frameworks that send a returned string as an HTML page), or ``""``.
        channel: The channel of the outside data.
        framework_parameters: How many leading positional parameters the framework fills
            itself (GraphQL resolvers: the parent object and the resolve info, whether the
            resolver is written as a method or a static method); -1: only ``self`` of a method.
        request_position: The index (``self`` counted) of the parameter that holds the request,
            whatever its name (Sanic passes it first, Falcon after ``self``); ``AFTER_SELF``: the
            first parameter after a method's ``self`` (a function's first); -1: none.
        start_response: For a protocol without decorators or bases (WSGI, PEP 3333): a
            function that calls one of its parameters with an HTTP status line first
            (``start_response("200 OK", headers)``) is a handler; that parameter is typed as
            this qualified name (whose models are its sinks) and the parameters before it are
            outside data (``environ``). "": not such a handler.
        asgi_send: For ASGI (asgiref's specification): a coroutine function that awaits one
            of its parameters with an event message (``send({"type": "http.response.start",
            ...})``), or whose parameters are named ``scope, receive, send``, is a handler; that
            parameter is typed as this qualified name and the ones before it are outside data
            (``protocols.asgi_sender``). "": not such a handler.
        asgi_receive: The type given to the parameter just before ``asgi_send``'s (the
            specification's ``receive``, whose events are outside data), or "".
        registrations: Calls that register a function as one of ``decorators`` would:
            ``(method, position, keyword)``, e.g. ``("add_url_rule", 2, "view_func")``: a
            function passed there to ``X.add_url_rule(rule, endpoint, f)`` is a handler as if
            decorated ``@X.route(rule, endpoint)`` (the call's arguments before it). Keyword
            ``"*"`` (with position -1): a function passed as any keyword's value whose name
            the scope calls as a method, as argparse's ``parser.set_defaults(handler=f)`` with
            ``args.handler(args)``.
    """

    framework: str
    decorators: tuple[str, ...] = ()
    decorator_receivers: tuple[str, ...] = ()
    path_argument: bool = False
    bases: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    request_parameter: str = ""
    imports: tuple[str, ...] = ()
    request_type: str = ""
    annotations: tuple[str, ...] = ()
    parameters: str = "all"
    safe_annotations: tuple[str, ...] = ()
    safe_converters: tuple[str, ...] = ()
    excluded_defaults: tuple[str, ...] = ()
    returns_sink: str = ""
    channel: str = "http"
    framework_parameters: int = -1
    request_position: int = -1
    start_response: str = ""
    asgi_send: str = ""
    asgi_receive: str = ""
    registrations: tuple[tuple[str, int, str], ...] = ()

    def request_index(self, bound: bool) -> int:
        """The index (``self`` counted) of the request parameter in a function (``bound``: a
        method), or -1."""
        return (1 if bound else 0) if self.request_position == AFTER_SELF else self.request_position

    def names_method(self, name: str) -> bool:
        """True when ``name`` is one of ``methods`` (or starts as one ending in ``*`` does)."""
        return any(name == m or (m.endswith("*") and name.startswith(m[:-1])) for m in self.methods)
