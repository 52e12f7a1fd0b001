"""The library models: sources, sinks, sanitisers, guards, types and checks, read from data.

Knowledge about libraries and frameworks lives in TOML files under ``analysis/models/``, one
per library or framework, in the spirit of CodeQL's models-as-data (``*.model.yml``) and Pysa's
model files: a new framework is a new data file, not new code. The engine (``interp``) is
generic and names no library. Every name in a model is a library API name or a framework
convention, never a name chosen by the analysed code's author.

A model file holds arrays of tables (each documented in ``models/README.md``):

``[[kind]]``      a vulnerability class: ``name``, ``cwe``, ``title``, ``channels`` it accepts.
``[[object]]``    a module-level object and its type: ``name``, ``type``.
``[[type]]``      a library type: ``name``, ``bases`` (other library types it inherits from).
``[[returns]]``   the type a call, method or attribute gives: ``call`` | ``method`` |
                  ``attribute`` (``"Type.member"``), ``type``, optional ``when``.
``[[source]]``    outside data: ``call`` (its result) | ``read`` (a qualified name) | ``type``
                  with ``attributes``/``methods`` (members of values of that type);
                  ``channel``, ``what``.
``[[handler]]``   an entry point a framework calls with outside data (see ``Handler``).
``[[sink]]``      where tainted data does harm (see ``Sink``).
``[[sanitiser]]`` a call or method whose result is safe for some kinds.
``[[guard]]``     a check that, when it holds, makes a value safe for some kinds.
``[[check]]``     an API misuse found without taint (a weak hash, a cookie without Secure).
``[[exit]]``      a call that never returns (``call``), which ends a path like ``raise``.
``[[constant]]``  a library constant: ``name`` (qualified) and ``value``.
``[[render]]``    a call that renders a repository template file with a context (``Render``).

In conditions (``when``, ``unless``, ``arg_in``), a value that is a library name (not a
literal) compares as its qualified name: ``{ Loader = ["yaml.SafeLoader"] }``.

Names: ``call`` and ``read`` are qualified names with import aliases resolved
(``"subprocess.run"``, ``"flask.request"``); ``method`` is ``"Type.name"``, where ``Type`` may
be ``"*"`` for any receiver whose type is unknown (used only for method names a library
defines for exactly this purpose, such as DB-API's ``execute``); builtins are bare names
(``"eval"``).
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

MODELS_PACKAGE = "fleetledger.analysis"
MODELS_FOLDER = "models"
UNTYPED = "*"


class ModelError(ValueError):
    """A library model file is malformed; the message names the file, the entry and the key."""


@dataclass(frozen=True, kw_only=True)
class Kind:
    """A vulnerability class a sink belongs to.

    Attributes:
        name: Short name, e.g. ``"sql"``.
        cwe: The CWE number.
        title: A title for reports, e.g. ``"SQL injection"``.
        channels: Label channels that make a flow a finding of this kind (``"random"`` for
            weak randomness; the outside-data channels for injections).
    """

    name: str
    cwe: int
    title: str
    channels: frozenset[str]


@dataclass(frozen=True, kw_only=True)
class Condition:
    """A condition on a call's arguments, read from the constants the engine knows.

    Attributes:
        keywords: Keyword name -> constant it must equal (``{"shell": True}``); a keyword
            that is not passed takes the value in ``defaults``.
        defaults: Keyword name -> the value the library uses when it is not passed.
        positions: Keyword name -> the position the same parameter has when passed
            positionally.
    """

    keywords: Mapping[str, Any] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    positions: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Sink:
    """A place where tainted data does harm.

    Attributes:
        target: ``call`` qualified name, or ``"Type.method"`` for a method.
        is_method: True for a method sink.
        kind: The vulnerability kind.
        args: Positions of the dangerous arguments (``-1``: every positional argument).
        keywords: Keyword names of the dangerous arguments.
        receiver: True when the receiver itself is the dangerous value (``path.open()``).
        when: The sink applies only when this holds (``shell=True``).
        unless: The sink does not apply when this holds (``usedforsecurity=False``).
        absent: The sink applies only when none of these keywords is passed (by name, or by
            position per ``positions``): ``lxml.etree.fromstring`` without a ``parser``.
        positions: Keyword -> position, for ``absent``.
        host_fixed: For URL sinks, what a constant prefix that fixes the scheme and host (or
            a path on this site) means: ``"safe"`` (a redirect that stays on a known site) or
            ``"partial"`` (a request to a fixed host whose path or query the data picks: a
            partial SSRF, reported as such); ``""``: prefixes do not matter.
        program: For command sinks taking an argument vector: only the program (element 0, or
            the command string of a shell started with ``-c``) is dangerous.
        what: Words for reports, e.g. ``"the SQL text run by execute()"``.
        model: The model file it comes from.
    """

    target: str
    is_method: bool
    kind: str
    args: tuple[int, ...] = ()
    keywords: tuple[str, ...] = ()
    receiver: bool = False
    when: Condition | None = None
    unless: Condition | None = None
    absent: tuple[str, ...] = ()
    positions: Mapping[str, int] = field(default_factory=dict)
    host_fixed: str = ""
    program: bool = False
    what: str = ""
    model: str = ""


@dataclass(frozen=True, kw_only=True)
class Sanitiser:
    """A call whose result is safe for some kinds.

    Attributes:
        target: Qualified call name or ``"Type.method"``.
        is_method: True for a method.
        kinds: Kinds the result is safe for (``"*"``: every kind).
        args_contain: For a method such as ``str.replace``: it sanitises only when one of its
            first argument's constant characters is among these (``"\\n"`` for log injection).
        when: It sanitises only when this holds (``MultiDict.get(k, type=int)``).
        what: Words for traces.
    """

    target: str
    is_method: bool
    kinds: frozenset[str]
    args_contain: str = ""
    when: Condition | None = None
    what: str = ""


@dataclass(frozen=True, kw_only=True)
class Guard:
    """A check that makes a value safe for some kinds where it holds.

    Attributes:
        target: Qualified call name or ``"Type.method"``.
        is_method: True for a method (the checked value is the receiver).
        arg: For a call: the position of the checked value.
        keyword: For a call: the keyword the checked value may be passed by instead.
        kinds: Kinds the checked value is safe for where the check is true.
        pattern: For a regular expression check (``re.fullmatch(PATTERN, value)``): the
            position of the pattern. The check then protects only when the pattern is a
            constant, anchored at both ends, and admits only letters, digits, ``_`` and ``-``.
        through: For a method check: the receiver must be one of these calls applied to the
            checked value (``os.path.realpath(p).startswith(base)`` checks ``p``); empty: the
            receiver is the checked value itself.
        compare: The call is a projection of the checked value (``urlparse(url)``) whose
            attributes, compared with constants or tested for emptiness, check the value.
        what: Words for traces.
    """

    target: str
    is_method: bool
    arg: int = 0
    keyword: str = ""
    kinds: frozenset[str] = frozenset({"*"})
    pattern: int = -1
    through: tuple[str, ...] = ()
    compare: bool = False
    what: str = ""


@dataclass(frozen=True, kw_only=True)
class Handler:
    """An entry point: a function the framework calls with outside data.

    Attributes:
        framework: The framework's name, for traces.
        decorators: Decorator method names (``"route"``) or qualified decorator names
            (``"click.command"``) that mark a handler.
        decorator_receivers: Types the decorator's object must have (``"flask.Flask"``);
            ``"*"`` also accepts an object of unknown type.
        path_argument: The decorator's first argument must be a constant URL rule starting
            with ``"/"`` (how routing decorators are told from others of the same name).
        bases: Library classes whose subclasses' methods named in ``methods`` are handlers.
        methods: Method names of those subclasses that the framework calls.
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


@dataclass(frozen=True, kw_only=True)
class Source:
    """Outside data.

    Attributes:
        target: A qualified call or read name, or a type whose members are listed.
        form: ``"call"``, ``"read"`` or ``"type"``.
        attributes: For ``"type"``: attribute names whose reads are outside data.
        methods: For ``"type"``: method names whose results are outside data.
        channel: Where the data comes from.
        what: Words for traces.
    """

    target: str
    form: str
    attributes: frozenset[str] = frozenset()
    methods: frozenset[str] = frozenset()
    channel: str = "http"
    what: str = ""


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
class Check:
    """An API misuse found without taint.

    Attributes:
        target: Qualified call name or ``"Type.method"``.
        is_method: True for a method.
        cwe: The CWE it reports.
        kind: The check's short name (``"weak-hash"``).
        title: For reports.
        required: Keyword -> constant that must be passed for the call to be safe
            (``{"secure": True}``, or a list of acceptable constants); a missing keyword or
            another constant is a finding, a non-constant value is left alone.
        positions: Keyword -> position, for the ``required`` keywords passed positionally.
        arg_in: The call is a finding only when its argument at ``arg`` is a constant in this
            set (compared case-insensitively): ``hashlib.new("md5")``.
        arg: The argument position ``arg_in`` looks at.
        when: The call is a finding only when this holds (``resolve_entities=True``).
        unless: The call is safe when this holds.
        message: What is wrong and what to do.
    """

    target: str
    is_method: bool
    cwe: int
    kind: str
    title: str
    required: Mapping[str, Any] = field(default_factory=dict)
    positions: Mapping[str, int] = field(default_factory=dict)
    arg_in: frozenset[str] = frozenset()
    arg: int = 0
    when: Condition | None = None
    unless: Condition | None = None
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class Catalog:
    """Every model, indexed for the engine's look-ups (read-only after loading).

    Attributes:
        kinds: Kind name -> kind.
        objects: Qualified name of a module-level object -> its type.
        bases: Library type -> its library base types.
        returns: ``call``/``"Type.member"`` -> list of ``(type, when)``.
        sources_call / sources_read: Qualified name -> source.
        sources_type: Type -> source listing its tainted members.
        handlers: Every handler model.
        sinks: Qualified call name or ``"Type.method"`` -> sinks.
        sanitisers / guards / checks: Likewise.
        exits: Calls that never return (``flask.abort``, ``sys.exit``): a path ends there.
        constants: Library constants: qualified name -> value.
        renders: Calls that render a template file with a context.
        files: The model files loaded, by name.
    """

    kinds: Mapping[str, Kind]
    objects: Mapping[str, str]
    bases: Mapping[str, tuple[str, ...]]
    returns: Mapping[str, tuple[tuple[str, Condition | None], ...]]
    sources_call: Mapping[str, Source]
    sources_read: Mapping[str, Source]
    sources_type: Mapping[str, Source]
    handlers: tuple[Handler, ...]
    sinks: Mapping[str, tuple[Sink, ...]]
    sanitisers: Mapping[str, tuple[Sanitiser, ...]]
    guards: Mapping[str, tuple[Guard, ...]]
    checks: Mapping[str, tuple[Check, ...]]
    exits: frozenset[str]
    constants: Mapping[str, Any]
    renders: Mapping[str, tuple[Render, ...]]
    files: tuple[str, ...]

    def knows(self, qualified: str) -> bool:
        """True when some model names ``qualified`` or a member of it (a call, a read, an
        object, a type, a module whose functions are modelled...)."""
        return qualified in self._names

    @functools.cached_property
    def _names(self) -> frozenset[str]:
        names: set[str] = set(self.exits)
        for table in (self.sinks, self.sources_call, self.sources_read, self.objects, self.sanitisers, self.checks,
                      self.returns, self.bases, self.constants, self.guards, self.renders):
            for key in table:
                parts = key.split(".")
                names.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
        return frozenset(names)

    def mro(self, type_name: str) -> tuple[str, ...]:
        """Returns ``type_name`` and its library bases, nearest first (cycles ignored)."""
        out: list[str] = []
        todo = [type_name]
        while todo:
            current = todo.pop(0)
            if current in out:
                continue
            out.append(current)
            todo.extend(self.bases.get(current, ()))
        return tuple(out)


_KEYS: dict[str, frozenset[str]] = {
    "meta": frozenset({"library", "about", "modules"}),
    "kind": frozenset({"name", "cwe", "title", "channels"}),
    "object": frozenset({"name", "type"}),
    "type": frozenset({"name", "bases"}),
    "returns": frozenset({"call", "method", "attribute", "type", "when"}),
    "source": frozenset({"call", "read", "type", "attributes", "methods", "channel", "what"}),
    "handler": frozenset({"framework", "decorators", "decorator_receivers", "path_argument", "bases", "methods",
                          "request_parameter", "imports", "request_type", "annotations", "parameters",
                          "safe_annotations", "safe_converters", "excluded_defaults", "returns_sink", "channel"}),
    "sink": frozenset({"call", "method", "kind", "args", "keywords", "receiver", "when", "unless", "defaults",
                       "positions", "absent", "host_fixed", "program", "what"}),
    "sanitiser": frozenset({"call", "method", "kinds", "args_contain", "when", "defaults", "positions", "what"}),
    "guard": frozenset({"call", "method", "arg", "keyword", "kinds", "pattern", "through", "compare", "what"}),
    "exit": frozenset({"call"}),
    "constant": frozenset({"name", "value"}),
    "render": frozenset({"call", "method", "template_arg", "template_keyword", "context_arg", "context_keyword",
                         "context_kwargs"}),
    "check": frozenset({"call", "method", "cwe", "kind", "title", "required", "positions", "arg_in", "arg", "when",
                        "unless", "defaults", "message"}),
}


def load(texts: Mapping[str, str]) -> Catalog:
    """Builds a catalog from model files' texts.

    Args:
        texts: File name -> TOML text.

    Returns:
        The catalog.

    Raises:
        ModelError: a file is not valid TOML, has an unknown table or key, misses a required
            key, names an unknown kind, or gives a value of the wrong type.
    """
    kinds: dict[str, Kind] = {}
    entries: list[tuple[str, str, int, dict[str, Any]]] = []
    for name in sorted(texts):
        try:
            data = tomllib.loads(texts[name])
        except tomllib.TOMLDecodeError as error:
            raise ModelError(f"{name}: not valid TOML: {error}") from None
        for table, value in data.items():
            if table not in _KEYS:
                raise ModelError(f"{name}: unknown table [{table}]; known: {', '.join(sorted(_KEYS))}")
            rows = [value] if table == "meta" else value
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                raise ModelError(f"{name}: [{table}] must be an array of tables ([[{table}]])")
            for n, row in enumerate(rows, start=1):
                unknown = set(row) - _KEYS[table]
                if unknown:
                    raise ModelError(f"{name}: [[{table}]] #{n} has unknown key(s) {sorted(unknown)}")
                if table == "kind":
                    kind = Kind(name=_str(row, "name", name, n), cwe=int(_need(row, "cwe", name, n)),
                                title=_str(row, "title", name, n), channels=frozenset(_list(row, "channels", name, n)))
                    kinds[kind.name] = kind
                elif table != "meta":
                    entries.append((name, table, n, row))
    builder = _Builder(kinds)
    for name, table, n, row in entries:
        builder.add(name, table, n, row)
    return builder.catalog(tuple(sorted(texts)))


class _Builder:
    def __init__(self, kinds: dict[str, Kind]) -> None:
        self.kinds = kinds
        self.objects: dict[str, str] = {}
        self.bases: dict[str, tuple[str, ...]] = {}
        self.returns: dict[str, list[tuple[str, Condition | None]]] = {}
        self.sources_call: dict[str, Source] = {}
        self.sources_read: dict[str, Source] = {}
        self.sources_type: dict[str, Source] = {}
        self.handlers: list[Handler] = []
        self.sinks: dict[str, list[Sink]] = {}
        self.sanitisers: dict[str, list[Sanitiser]] = {}
        self.guards: dict[str, list[Guard]] = {}
        self.checks: dict[str, list[Check]] = {}
        self.exits: set[str] = set()
        self.constants: dict[str, Any] = {}
        self.renders: dict[str, list[Render]] = {}

    def add(self, name: str, table: str, n: int, row: dict[str, Any]) -> None:
        where = f"{name}: [[{table}]] #{n}"
        if table == "object":
            self.objects[_str(row, "name", name, n)] = _str(row, "type", name, n)
        elif table == "type":
            self.bases[_str(row, "name", name, n)] = tuple(_list(row, "bases", name, n, default=[]))
        elif table == "returns":
            target, _ = _target(row, where, also=("attribute",))
            self.returns.setdefault(target, []).append((_str(row, "type", name, n), _condition(row.get("when"), row, where)))
        elif table == "source":
            self._source(row, name, n, where)
        elif table == "handler":
            self.handlers.append(_handler(row, where))
        elif table == "sink":
            target, is_method = _target(row, where)
            kind = self._kind(row, where)
            self.sinks.setdefault(target, []).append(Sink(
                target=target, is_method=is_method, kind=kind, args=tuple(int(a) for a in row.get("args", [])),
                keywords=tuple(row.get("keywords", [])), receiver=bool(row.get("receiver", False)),
                when=_condition(row.get("when"), row, where), unless=_condition(row.get("unless"), row, where),
                absent=tuple(row.get("absent", [])), positions={k: int(v) for k, v in row.get("positions", {}).items()},
                host_fixed=_host_fixed(row.get("host_fixed", ""), where), program=bool(row.get("program", False)),
                what=str(row.get("what", "")), model=name))
            if not (row.get("args") or row.get("keywords") or row.get("receiver")):
                raise ModelError(f"{where}: a sink needs args, keywords or receiver")
        elif table == "sanitiser":
            target, is_method = _target(row, where)
            self.sanitisers.setdefault(target, []).append(Sanitiser(
                target=target, is_method=is_method, kinds=self._kinds(row, where),
                args_contain=str(row.get("args_contain", "")), when=_condition(row.get("when"), row, where),
                what=str(row.get("what", target))))
        elif table == "guard":
            target, is_method = _target(row, where)
            self.guards.setdefault(target, []).append(Guard(
                target=target, is_method=is_method, arg=int(row.get("arg", 0)), keyword=str(row.get("keyword", "")),
                kinds=self._kinds(row, where),
                pattern=int(row.get("pattern", -1)), through=tuple(row.get("through", [])),
                compare=bool(row.get("compare", False)), what=str(row.get("what", target))))
        elif table == "exit":
            self.exits.add(_str(row, "call", name, n))
        elif table == "constant":
            self.constants[_str(row, "name", name, n)] = _need(row, "value", name, n)
        elif table == "render":
            target, _ = _target(row, where)
            self.renders.setdefault(target, []).append(Render(
                target=target, template_arg=int(row.get("template_arg", 0)),
                template_keyword=str(row.get("template_keyword", "")), context_arg=int(row.get("context_arg", -1)),
                context_keyword=str(row.get("context_keyword", "")), context_kwargs=bool(row.get("context_kwargs", False))))
        elif table == "check":
            target, is_method = _target(row, where)
            self.checks.setdefault(target, []).append(Check(
                target=target, is_method=is_method, cwe=int(_need(row, "cwe", name, n)), kind=_str(row, "kind", name, n),
                title=_str(row, "title", name, n), required=dict(row.get("required", {})),
                positions={k: int(v) for k, v in row.get("positions", {}).items()},
                arg_in=frozenset(str(v).lower() for v in row.get("arg_in", [])), arg=int(row.get("arg", 0)),
                when=_condition(row.get("when"), row, where), unless=_condition(row.get("unless"), row, where),
                message=str(row.get("message", ""))))

    def _source(self, row: dict[str, Any], name: str, n: int, where: str) -> None:
        channel = _str(row, "channel", name, n)
        what = str(row.get("what", ""))
        if "type" in row:
            target = str(row["type"])
            old = self.sources_type.get(target)
            attributes = frozenset(row.get("attributes", [])) | (old.attributes if old else frozenset())
            methods = frozenset(row.get("methods", [])) | (old.methods if old else frozenset())
            self.sources_type[target] = Source(target=target, form="type", attributes=attributes, methods=methods,
                                               channel=channel, what=what or (old.what if old else target))
        elif "call" in row:
            self.sources_call[str(row["call"])] = Source(target=str(row["call"]), form="call", channel=channel,
                                                        what=what or f"{row['call']}()")
        elif "read" in row:
            self.sources_read[str(row["read"])] = Source(target=str(row["read"]), form="read", channel=channel,
                                                        what=what or str(row["read"]))
        else:
            raise ModelError(f"{where}: a source needs call, read or type")

    def _kind(self, row: dict[str, Any], where: str) -> str:
        kind = row.get("kind")
        if kind not in self.kinds:
            raise ModelError(f"{where}: unknown kind {kind!r}; known: {', '.join(sorted(self.kinds))}")
        return str(kind)

    def _kinds(self, row: dict[str, Any], where: str) -> frozenset[str]:
        kinds = frozenset(row.get("kinds", []))
        unknown = kinds - set(self.kinds) - {"*"}
        if not kinds or unknown:
            raise ModelError(f"{where}: kinds must name known kinds or '*', not {sorted(unknown) or 'nothing'}")
        return kinds

    def catalog(self, files: tuple[str, ...]) -> Catalog:
        return Catalog(
            kinds=self.kinds, objects=self.objects, bases=self.bases,
            returns={k: tuple(v) for k, v in self.returns.items()},
            sources_call=self.sources_call, sources_read=self.sources_read, sources_type=self.sources_type,
            handlers=tuple(self.handlers), sinks={k: tuple(v) for k, v in self.sinks.items()},
            sanitisers={k: tuple(v) for k, v in self.sanitisers.items()},
            guards={k: tuple(v) for k, v in self.guards.items()},
            checks={k: tuple(v) for k, v in self.checks.items()}, exits=frozenset(self.exits),
            constants=self.constants, renders={k: tuple(v) for k, v in self.renders.items()}, files=files)


def _target(row: dict[str, Any], where: str, also: tuple[str, ...] = ()) -> tuple[str, bool]:
    forms = [key for key in ("call", "method", *also) if key in row]
    if len(forms) != 1:
        raise ModelError(f"{where}: give exactly one of {', '.join(('call', 'method', *also))}")
    target = str(row[forms[0]])
    if forms[0] in ("method", "attribute") and "." not in target:
        raise ModelError(f"{where}: {forms[0]} must be 'Type.name' ('*.name' for any receiver), not {target!r}")
    return target, forms[0] in ("method", "attribute")


def _host_fixed(value: Any, where: str) -> str:
    if value not in ("", "safe", "partial"):
        raise ModelError(f"{where}: host_fixed must be 'safe' or 'partial', not {value!r}")
    return str(value)


def _condition(value: Any, row: dict[str, Any], where: str) -> Condition | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ModelError(f"{where}: a condition must be a table of keyword = constant")
    return Condition(keywords=dict(value), defaults=dict(row.get("defaults", {})),
                     positions={k: int(v) for k, v in row.get("positions", {}).items()})


def _handler(row: dict[str, Any], where: str) -> Handler:
    if "framework" not in row:
        raise ModelError(f"{where}: a handler needs framework")
    parameters = row.get("parameters", "all")
    if parameters not in ("all", "none"):
        raise ModelError(f"{where}: parameters must be 'all' or 'none'")
    return Handler(
        framework=str(row["framework"]), decorators=tuple(row.get("decorators", [])),
        decorator_receivers=tuple(row.get("decorator_receivers", [])), path_argument=bool(row.get("path_argument", False)),
        bases=tuple(row.get("bases", [])), methods=tuple(row.get("methods", [])),
        request_parameter=str(row.get("request_parameter", "")), imports=tuple(row.get("imports", [])),
        request_type=str(row.get("request_type", "")), annotations=tuple(row.get("annotations", [])),
        parameters=parameters, safe_annotations=tuple(row.get("safe_annotations", [])),
        safe_converters=tuple(row.get("safe_converters", [])),
        excluded_defaults=tuple(row.get("excluded_defaults", [])), returns_sink=str(row.get("returns_sink", "")),
        channel=str(row.get("channel", "http")))


def _need(row: dict[str, Any], key: str, name: str, n: int) -> Any:
    if key not in row:
        raise ModelError(f"{name}: entry #{n} needs {key!r}")
    return row[key]


def _str(row: dict[str, Any], key: str, name: str, n: int) -> str:
    value = _need(row, key, name, n)
    if not isinstance(value, str):
        raise ModelError(f"{name}: entry #{n}: {key} must be a string")
    return value


def _list(row: dict[str, Any], key: str, name: str, n: int, default: list[Any] | None = None) -> list[Any]:
    value = row.get(key, default) if default is not None else _need(row, key, name, n)
    if not isinstance(value, list):
        raise ModelError(f"{name}: entry #{n}: {key} must be a list")
    return value


def model_texts() -> dict[str, str]:
    """Returns the shipped model files: name -> text (read-only)."""
    folder = resources.files(MODELS_PACKAGE) / MODELS_FOLDER
    return {entry.name: entry.read_text(encoding="utf-8") for entry in folder.iterdir() if entry.name.endswith(".toml")}


@functools.cache
def default() -> Catalog:
    """Returns the catalog of the shipped models, loaded once per process.

    Raises:
        ModelError: a shipped model file is malformed (a packaging bug; the tests load them).
    """
    return load(model_texts())


def version() -> str:
    """Returns a hash of the shipped model files' content: part of every analysis result's key,
    so that a result made with other models is never reused."""
    import hashlib

    digest = hashlib.sha256()
    for name, text in sorted(model_texts().items()):
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    return digest.hexdigest()[:16]
