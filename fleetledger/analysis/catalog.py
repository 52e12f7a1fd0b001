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
                  ``attribute`` (``"Type.member"``), ``type``, optional ``when`` (with
                  ``positions`` and ``defaults``): ``open()`` of a ``.py`` name for writing.
``[[source]]``    outside data: ``call`` (its result) | ``read`` (a qualified name) | ``type``
                  with ``attributes``/``methods`` (members of values of that type);
                  ``channel``, ``what``.
``[[handler]]``   an entry point a framework calls with outside data (see ``Handler``).
``[[sink]]``      where tainted data does harm (see ``Sink``).
``[[sanitiser]]`` a call or method whose result is safe for some kinds.
``[[guard]]``     a check that, when it holds, makes a value safe for some kinds.
``[[check]]``     an API misuse found without taint (a weak hash, a cookie without Secure).
``[[exit]]``      a call that never returns (``call``), which ends a path like ``raise``.
``[[pure]]``      a library function whose result is computed from its arguments alone (``call``):
                  with constant arguments its result is built from constants, not of unknown origin;
                  ``ends_as_last``: it ends as its last argument ends (``os.path.join``).
``[[container]]`` a library type holding values under keys its methods name (see ``Container``).
``[[reconfigure]]`` a method that changes what its object is (``method``, ``type``, ``when``,
                  ``removes``): when the condition holds (or may), the variable naming the
                  receiver gets ``type`` too (``parser.setFeature(feature_external_ges, True)``:
                  a parser that resolves external entities); with ``removes``, loses it.
``[[constant]]``  a library constant: ``name`` (qualified) and ``value``.
``[[alias]]``     a library module that is another library's module under another name
                  (``six.moves.urllib`` is ``urllib``): ``name`` and ``target``.
``[[render]]``    a call that renders a repository template file with a context (``Render``).
``[[invokes]]``   a call that calls a function it is given with arguments it is given (``Invoke``).
``[[return_sink]]`` methods of subclasses of library classes whose returned value the framework
                  runs or sends (``ReturnSink``): ``bases``, ``methods``, ``kind``, ``element``.
``[[compared]]``  a source channel whose values outside data must not be compared with by ``==``
                  (``Compared``: an HMAC): ``channel``, ``kind``.

In conditions (``when``, ``unless``, ``arg_in``), a value that is a library name (not a
literal) compares as its qualified name: ``{ Loader = ["yaml.SafeLoader"] }``.

Names: ``call`` and ``read`` are qualified names with import aliases resolved
(``"subprocess.run"``, ``"flask.request"``); ``method`` is ``"Type.name"``, where ``Type`` may
be ``"*"`` for any receiver whose type is unknown (used only for method names a library
defines for exactly this purpose, such as DB-API's ``execute``); builtins are bare names
(``"eval"``).

This module reads and checks the model files (``load``, ``default``); the records they become,
and the ``Catalog`` that indexes them, are in ``model_records``.
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from collections.abc import Mapping
from importlib import resources
from typing import Any

from .model_handlers import Handler
from .model_records import (RECEIVER_PATTERN, Catalog, Check, Compared, Condition, Container, Guard, Invoke, Kind, Render,
                            ReturnSink, Sanitiser, Sink, Source)

MODELS_PACKAGE = "fleetledger.analysis"
MODELS_FOLDER = "models"


class ModelError(ValueError):
    """A library model file is malformed; the message names the file, the entry and the key."""


_KEYS: dict[str, frozenset[str]] = {
    "meta": frozenset({"library", "about", "modules"}),
    "kind": frozenset({"name", "cwe", "title", "channels", "blocked_by", "literal_quotes", "checks_make_safe"}),
    "object": frozenset({"name", "type"}),
    "type": frozenset({"name", "bases"}),
    "returns": frozenset({"call", "method", "attribute", "type", "when", "defaults", "positions", "attributes"}),
    "source": frozenset({"call", "read", "type", "attributes", "methods", "channel", "what", "route_fixed", "own_url",
                         "own_site"}),
    "handler": frozenset({"framework", "decorators", "decorator_receivers", "path_argument", "bases", "methods",
                          "request_parameter", "imports", "request_type", "annotations", "parameters",
                          "safe_annotations", "safe_converters", "excluded_defaults", "returns_sink", "channel",
                          "framework_parameters", "request_position", "start_response",
                          "asgi_send", "asgi_receive", "registrations"}),
    "sink": frozenset({"call", "method", "kind", "args", "keywords", "receiver", "when", "unless", "defaults",
                       "positions", "absent", "host_fixed", "program", "element", "channels", "needs_file", "argv_from",
                       "operands_from", "slow_pattern", "slow_flags", "matches", "what", "when_called",
                       "texts_only", "unless_set"}),
    "sanitiser": frozenset({"call", "method", "kinds", "args_contain", "only_items", "when", "when_unknown", "defaults",
                            "positions", "what"}),
    "guard": frozenset({"call", "method", "arg", "keyword", "kinds", "pattern", "through", "compare", "parts", "joined_by",
                        "common", "empty_kinds", "own_kinds", "only_empty", "raises", "normalised_by", "absolute_only", "what"}),
    "exit": frozenset({"call"}),
    "pure": frozenset({"call", "ends_as_last"}),
    "container": frozenset({"type", "store", "load", "key_args"}),
    "reconfigure": frozenset({"method", "type", "when", "positions", "defaults", "removes"}),
    "constant": frozenset({"name", "value"}),
    "alias": frozenset({"name", "target"}),
    "return_sink": frozenset({"bases", "methods", "kind", "element", "what"}),
    "compared": frozenset({"channel", "kind", "what"}),
    "invokes": frozenset({"call", "method", "function", "function_keyword", "args_from", "args_tuple", "args_keyword",
                          "keywords", "returns"}),
    "render": frozenset({"call", "method", "template_arg", "template_keyword", "context_arg", "context_keyword",
                         "context_kwargs"}),
    "check": frozenset({"call", "method", "cwe", "kind", "title", "required", "positions", "arg_in", "arg", "when", "untracked",
                        "unless", "defaults", "message", "backtracks", "backtracks_keyword", "backtracks_flags", "whole_match",
                        "literal_arg", "literal_keyword", "min_args"}),
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
                                title=_str(row, "title", name, n), channels=frozenset(_list(row, "channels", name, n)),
                                blocked_by=_blocked_by(row, name, n), literal_quotes=_quotes(row, name, n),
                                checks_make_safe=bool(row.get("checks_make_safe", True)))
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
        self.returned_attributes: dict[str, dict[str, int]] = {}
        self.sources_call: dict[str, Source] = {}
        self.sources_read: dict[str, Source] = {}
        self.sources_type: dict[str, Source] = {}
        self.handlers: list[Handler] = []
        self.sinks: dict[str, list[Sink]] = {}
        self.sanitisers: dict[str, list[Sanitiser]] = {}
        self.guards: dict[str, list[Guard]] = {}
        self.checks: dict[str, list[Check]] = {}
        self.exits: set[str] = set()
        self.pure: set[str] = set()
        self.ends_as_last: set[str] = set()
        self.containers: dict[str, Container] = {}
        self.reconfigures: dict[str, list[tuple[str, Condition | None, bool]]] = {}
        self.invokes: dict[str, list[Invoke]] = {}
        self.return_sinks: list[ReturnSink] = []
        self.compared: dict[str, Compared] = {}
        self.constants: dict[str, Any] = {}
        self.aliases: dict[str, str] = {}
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
            attributes = row.get("attributes", {})
            if not isinstance(attributes, dict) or not all(isinstance(v, int) for v in attributes.values()):
                raise ModelError(f"{where}: attributes must be a table of attribute = argument position")
            if attributes:
                self.returned_attributes[target] = dict(attributes)
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
                host_fixed=_choice(row, "host_fixed", ("", "safe", "partial"), where), program=bool(row.get("program", False)),
                element=_element(row, where),
                channels=frozenset(_list(row, "channels", name, n, default=[])),
                needs_file=bool(row.get("needs_file", False)), argv_from=int(row.get("argv_from", -1)),
                operands_from=int(row.get("operands_from", -1)), slow_pattern=_pattern_at(row, "slow_pattern", where, -1),
                slow_flags=int(row.get("slow_flags", -1)), matches=_choice(row, "matches", ("anywhere", "start", "whole"), where),
                what=str(row.get("what", "")), model=name, when_called=bool(row.get("when_called", False)),
                texts_only=bool(row.get("texts_only", False)), unless_set=bool(row.get("unless_set", False))))
            if not (row.get("args") or row.get("keywords") or row.get("receiver")):
                raise ModelError(f"{where}: a sink needs args, keywords or receiver")
        elif table == "sanitiser":
            target, is_method = _target(row, where)
            self.sanitisers.setdefault(target, []).append(Sanitiser(
                target=target, is_method=is_method, kinds=self._kinds(row, where),
                args_contain=str(row.get("args_contain", "")), when=_condition(row.get("when"), row, where),
                when_unknown=bool(row.get("when_unknown", False)),
                only_items=tuple(int(a) for a in row.get("only_items", [])), what=str(row.get("what", target))))
        elif table == "guard":
            target, is_method = _target(row, where)
            self.guards.setdefault(target, []).append(Guard(
                target=target, is_method=is_method, arg=int(row.get("arg", 0)), keyword=str(row.get("keyword", "")),
                kinds=self._kinds(row, where),
                pattern=_pattern_at(row, "pattern", where, RECEIVER_PATTERN, -1), through=tuple(row.get("through", [])),
                compare=bool(row.get("compare", False)), parts=tuple(str(p) for p in row.get("parts", [])),
                joined_by=tuple(row.get("joined_by", [])), common=_choice(row, "common", ("", "paths", "characters"), where),
                raises=row.get("raises", False) is True, only_empty=row.get("only_empty", False) is True,
                normalised_by=tuple(row.get("normalised_by", [])),
                absolute_only=tuple(row.get("absolute_only", [])),
                empty_kinds=self._kinds({"kinds": row["empty_kinds"]}, where) if "empty_kinds" in row else None,
                own_kinds=self._kinds({"kinds": row["own_kinds"]}, where) if "own_kinds" in row else None,
                what=str(row.get("what", target))))
        elif table == "exit":
            self.exits.add(_str(row, "call", name, n))
        elif table == "pure":
            self.pure.add(_str(row, "call", name, n))
            if row.get("ends_as_last", False) is True:
                self.ends_as_last.add(_str(row, "call", name, n))
        elif table == "reconfigure":
            target, _ = _target(row, where)
            self.reconfigures.setdefault(target, []).append((_str(row, "type", name, n),
                                                             _condition(row.get("when"), row, where),
                                                             bool(row.get("removes", False))))
        elif table == "container":
            type_name = _str(row, "type", name, n)
            self.containers[type_name] = Container(
                type=type_name, store=frozenset(_list(row, "store", name, n, default=[])),
                load=frozenset(_list(row, "load", name, n, default=[])), key_args=int(_need(row, "key_args", name, n)))
        elif table == "constant":
            self.constants[_str(row, "name", name, n)] = _need(row, "value", name, n)
        elif table == "alias":
            self.aliases[_str(row, "name", name, n)] = _str(row, "target", name, n)
        elif table == "return_sink":
            self.return_sinks.append(ReturnSink(
                bases=tuple(_list(row, "bases", name, n)), methods=frozenset(_list(row, "methods", name, n)),
                kind=self._kind(row, where), element=int(row["element"]) if "element" in row else None,
                what=str(row.get("what", "")), model=name))
        elif table == "compared":
            channel = _str(row, "channel", name, n)
            self.compared[channel] = Compared(channel=channel, kind=self._kind(row, where),
                                              what=str(row.get("what", "")), model=name)
        elif table == "invokes":
            target, _ = _target(row, where)
            invoke = Invoke(target=target, function=int(row.get("function", -1)),
                            function_keyword=str(row.get("function_keyword", "")), args_from=int(row.get("args_from", -1)),
                            args_tuple=int(row.get("args_tuple", -1)), args_keyword=str(row.get("args_keyword", "")),
                            keywords=bool(row.get("keywords", False)), returns=bool(row.get("returns", False)))
            if invoke.function < 0 and not invoke.function_keyword:
                raise ModelError(f"{where}: an invokes entry needs function or function_keyword")
            self.invokes.setdefault(target, []).append(invoke)
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
                message=str(row.get("message", "")), untracked=bool(row.get("untracked", False)),
                backtracks=int(row.get("backtracks", -1)), backtracks_keyword=str(row.get("backtracks_keyword", "")),
                backtracks_flags=int(row.get("backtracks_flags", -1)),
                whole_match=bool(row.get("whole_match", False)), literal_arg=int(row.get("literal_arg", -1)),
                literal_keyword=str(row.get("literal_keyword", "")), min_args=int(row.get("min_args", 0))))

    def _source(self, row: dict[str, Any], name: str, n: int, where: str) -> None:
        channel = _str(row, "channel", name, n)
        what = str(row.get("what", ""))
        if "type" in row:
            target = str(row["type"])
            old = self.sources_type.get(target)
            attributes = frozenset(row.get("attributes", [])) | (old.attributes if old else frozenset())
            methods = frozenset(row.get("methods", [])) | (old.methods if old else frozenset())
            fixed = frozenset(row.get("route_fixed", [])) | (old.route_fixed if old else frozenset())
            if not fixed <= attributes:
                raise ModelError(f"{where}: route_fixed must name some of the source's attributes")
            own = frozenset(row.get("own_url", [])) | (old.own_url if old else frozenset())
            site = frozenset(row.get("own_site", [])) | (old.own_site if old else frozenset())
            if not site <= own <= attributes | methods:
                raise ModelError(f"{where}: own_url must name some of the source's attributes or methods, own_site some of own_url")
            self.sources_type[target] = Source(target=target, form="type", attributes=attributes, methods=methods,
                                               channel=channel, what=what or (old.what if old else target),
                                               route_fixed=fixed, own_url=own, own_site=site)
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
            returns={k: tuple(v) for k, v in self.returns.items()}, returned_attributes=self.returned_attributes,
            sources_call=self.sources_call, sources_read=self.sources_read, sources_type=self.sources_type,
            handlers=tuple(self.handlers), sinks={k: tuple(v) for k, v in self.sinks.items()},
            sanitisers={k: tuple(v) for k, v in self.sanitisers.items()},
            guards={k: tuple(v) for k, v in self.guards.items()},
            checks={k: tuple(v) for k, v in self.checks.items()}, exits=frozenset(self.exits), pure=frozenset(self.pure),
            ends_as_last=frozenset(self.ends_as_last),
            containers=dict(self.containers), reconfigures={k: tuple(v) for k, v in self.reconfigures.items()},
            constants=self.constants, aliases=self.aliases, renders={k: tuple(v) for k, v in self.renders.items()}, files=files,
            invokes={k: tuple(v) for k, v in self.invokes.items()}, return_sinks=tuple(self.return_sinks),
            compared=dict(self.compared))


def _target(row: dict[str, Any], where: str, also: tuple[str, ...] = ()) -> tuple[str, bool]:
    forms = [key for key in ("call", "method", *also) if key in row]
    if len(forms) != 1:
        raise ModelError(f"{where}: give exactly one of {', '.join(('call', 'method', *also))}")
    target = str(row[forms[0]])
    if forms[0] in ("method", "attribute") and "." not in target:
        raise ModelError(f"{where}: {forms[0]} must be 'Type.name' ('*.name' for any receiver), not {target!r}")
    return target, forms[0] in ("method", "attribute")


def _pattern_at(row: dict[str, Any], key: str, where: str, receiver: int, absent: int | None = None) -> int | None:
    """A model's pattern position (``slow_pattern``, a guard's ``pattern``): an argument's, or
    ``receiver`` for ``"receiver"`` (a method of a compiled pattern); ``absent`` when absent."""
    value = row.get(key, absent)
    if value == "receiver" and row.get("method") is not None:
        return receiver
    if value is not absent and (not isinstance(value, int) or value < 0):
        raise ModelError(f"{where}: {key} must be an argument position or, for a method, 'receiver', not {value!r}")
    return value


def _choice(row: dict[str, Any], key: str, allowed: tuple[str, ...], where: str) -> str:
    """``row[key]`` (``allowed[0]`` when absent), which must be one of ``allowed``."""
    value = row.get(key, allowed[0])
    if value not in allowed:
        raise ModelError(f"{where}: {key} must be one of {', '.join(repr(a) for a in allowed if a)}, not {value!r}")
    return str(value)


def _condition(value: Any, row: dict[str, Any], where: str) -> Condition | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ModelError(f"{where}: a condition must be a table of keyword = constant")
    for keyword, wanted in value.items():
        texts = isinstance(wanted, dict) and wanted and set(wanted) <= {"endswith", "has_text"} and all(
            _texts(v) for v in wanted.values())
        if isinstance(wanted, dict) and not texts and not (len(wanted) == 1 and (
                isinstance(wanted.get("contains"), list) or isinstance(wanted.get("has"), dict))):
            raise ModelError(f"{where}: the condition on {keyword!r} must be a constant, a list of constants, "
                             "{ contains = [...] }, { has = { key = constant } }, { endswith = [texts] } or "
                             "{ has_text = [texts] }")
    return Condition(keywords=dict(value), defaults=dict(row.get("defaults", {})),
                     positions={k: int(v) for k, v in row.get("positions", {}).items()})


def _element(row: dict[str, Any], where: str) -> int | str | None:
    """A sink's ``element``: an item's position (a tuple or list) or key (a dict), or None."""
    element = row.get("element")
    if element is None or isinstance(element, (int, str)) and not isinstance(element, bool):
        return element
    raise ModelError(f"{where}: element must be an item's position or a dict's key, not {element!r}")


def _texts(value: Any) -> bool:
    """True for a non-empty list of non-empty strings."""
    return isinstance(value, list) and bool(value) and all(isinstance(t, str) and t for t in value)


def _handler(row: dict[str, Any], where: str) -> Handler:
    if "framework" not in row:
        raise ModelError(f"{where}: a handler needs framework")
    parameters = row.get("parameters", "all")
    if parameters not in ("all", "none"):
        raise ModelError(f"{where}: parameters must be 'all' or 'none'")
    plain = {f.name: (str if f.default is dataclasses.MISSING else type(f.default))(row[f.name])
             for f in dataclasses.fields(Handler) if f.name in row and f.name != "registrations"}  # as its default's type
    return Handler(**plain, registrations=tuple((str(r["method"]), int(r["function"]), str(r.get("keyword", "")))
                                                for r in row.get("registrations", [])))


def _need(row: dict[str, Any], key: str, name: str, n: int) -> Any:
    if key not in row:
        raise ModelError(f"{name}: entry #{n} needs {key!r}")
    return row[key]


def _str(row: dict[str, Any], key: str, name: str, n: int) -> str:
    value = _need(row, key, name, n)
    if not isinstance(value, str):
        raise ModelError(f"{name}: entry #{n}: {key} must be a string")
    return value


def _blocked_by(row: dict[str, Any], name: str, n: int) -> tuple[tuple[str, str, str], ...]:
    """A kind's ``blocked_by``: a list of ``{ text = "...", after = "..." }`` tables, each with
    an optional ``inside = true`` or ``last = true``; returns ``(text, after, flag)`` with flag
    ``"inside"``, ``"last"`` or ``""``."""
    out = []
    for entry in _list(row, "blocked_by", name, n, default=[]):
        if (not isinstance(entry, dict) or not {"text", "after"} <= set(entry) <= {"text", "after", "inside", "last"}
                or not all(isinstance(entry[k], str) and entry[k] for k in ("text", "after"))
                or not all(isinstance(entry.get(k, False), bool) for k in ("inside", "last"))
                or entry.get("inside") and entry.get("last")):
            raise ModelError(f"{name}: entry #{n}: each blocked_by entry must be "
                             f"{{ text = \"...\", after = \"...\" }} with an optional inside = true or last = true")
        out.append((entry["text"], entry["after"], "inside" if entry.get("inside") else "last" if entry.get("last") else ""))
    return tuple(out)


def _quotes(row: dict[str, Any], name: str, n: int) -> frozenset[str]:
    """A kind's ``literal_quotes``: a list of one-character strings."""
    quotes = _list(row, "literal_quotes", name, n, default=[])
    if not all(isinstance(q, str) and len(q) == 1 for q in quotes):
        raise ModelError(f"{name}: entry #{n}: literal_quotes must list one-character strings, like [\"'\"]")
    return frozenset(quotes)


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
