"""Models of what a library or framework does with the analysed code's values (``[[render]]``,
``[[invokes]]``, ``[[return_sink]]`` and ``[[compared]]`` entries of ``models/*.toml``): the
templates it renders, the functions it calls, the returned values it runs, the values it must
not compare in variable time.
"""

from __future__ import annotations

from dataclasses import dataclass

UNREAD_TEMPLATE = "templates (unread)"
"""The model name of the sinks ``Frame.markup_in_context`` makes (HTML markup given to a template
the scan cannot read), which ``verdicts.from_trace`` judges uncertain."""


@dataclass(frozen=True, kw_only=True)
class Render:
    """A call that renders a template file of the repository with a context.

    Attributes:
        target: Qualified call name or ``"Type.method"``.
        template_arg: Position of the template's name.
        template_keyword: Keyword of the template's name.
        context_arg: Position of the context dictionary (-1: none).
        context_keyword: Keyword of the context dictionary.
        context_kwargs: The call's other keyword arguments are the context (Flask).
    """

    target: str
    template_arg: int = 0
    template_keyword: str = ""
    context_arg: int = -1
    context_keyword: str = ""
    context_kwargs: bool = False


@dataclass(frozen=True, kw_only=True)
class Invoke:
    """A library call that calls a function it is given with arguments it is given (an
    executor, a thread, an event loop's callback): the engine evaluates that call as if the code
    made it, so a sink passed as the function (``loop.run_in_executor(None, exec, code)``) or a
    function of the analysed code (``Thread(target=work, args=(data,))``) sees the arguments.

    Attributes:
        target: ``call`` qualified name, or ``"Type.method"``.
        function: Position of the function argument (-1: only by keyword).
        function_keyword: Keyword of the function argument (``""``: only by position).
        args_from: The positional arguments from this position on are the function's (-1: none).
        args_tuple: Position of a tuple argument holding the function's positional arguments
            (-1: none); ``args_keyword`` names it when passed by keyword.
        args_keyword: See ``args_tuple``.
        keywords: True when the call's other keyword arguments are the function's.
        returns: True when the call gives (once awaited) what the function returns
            (``await asyncio.to_thread(f, x)`` is ``f(x)``); False: its own result (a thread).
    """

    target: str
    function: int = -1
    function_keyword: str = ""
    args_from: int = -1
    args_tuple: int = -1
    args_keyword: str = ""
    keywords: bool = False
    returns: bool = False


@dataclass(frozen=True, kw_only=True)
class ReturnSink:
    """A framework convention: what a method of a subclass of a library class returns is run
    or sent by the framework, so the returned value is a sink (Django's ``as_sql()`` of an
    expression, a lookup or a function returns ``(sql, params)``, and the database runs ``sql``).

    Attributes:
        bases: Library classes (qualified) whose subclasses' methods are concerned.
        methods: The method names.
        kind: The sink kind of the returned value.
        element: When the method returns a tuple the engine knows item by item, the item that
            is the sink (``0``: the SQL text); None: the whole value.
        what: Words for reports.
        model: The model file it comes from.
    """

    bases: tuple[str, ...]
    methods: frozenset[str]
    kind: str
    element: int | None = None
    what: str = ""
    model: str = ""


@dataclass(frozen=True, kw_only=True)
class Compared:
    """Values of a source channel that outside data must not be compared with by ``==``,
    ``!=`` or ``in`` (an HMAC computed by the code, channel ``"mac"``): Python's comparison of
    texts stops at the first difference, so its time tells an attacker how much of a guess was
    right (CWE-208); ``hmac.compare_digest`` takes the same time whatever differs.

    Attributes:
        channel: The source channel of the secret values (a marker channel no kind takes).
        kind: The sink kind of the other operand.
        what: Words for reports.
        model: The model file it comes from.
    """

    channel: str
    kind: str
    what: str = ""
    model: str = ""
