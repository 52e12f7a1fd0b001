"""The library models as the engine reads them: one record type per kind of model entry
(vulnerability kinds, sinks, sanitisers, guards, sources, checks, the conditions they depend
on; handlers are in ``model_handlers``, what frameworks do with the code's values in
``model_conventions``) and the ``Catalog`` that indexes them for the engine's look-ups.
``catalog`` reads the model files (``models/*.toml``) into these records.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .model_conditions import Condition, Kind  # (re-exported: the records' building blocks)
from .model_conventions import Compared, Invoke, Render, ReturnSink
from .model_handlers import Handler

UNTYPED = "*"
"""The receiver type of a method model that applies to any receiver whose type is unknown
(``"*.execute"``)."""

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
        element: When the argument is a tuple, list or dict the engine knows item by item, only
            this item (a position, or a dict's key) reaches the sink
            (``flask.make_response((body, headers))``: the body); None: the whole argument.
        channels: When not empty, only data of these origins makes a flow here (narrower than
            the kind's: an existence check is a probe for a remote client, not for a caller of
            a library's function).
        needs_file: The sink acts only on a file (``open``): a path naming a folder makes it
            fail, so a name that can at most end in its folder's parent does no harm here.
        argv_from: For a program started with an argument vector of its own (``os.execv``,
            ``os.spawnl``): the position from which the arguments are that vector (a list or
            tuple there, or the positional arguments from there on), whose first item only
            names the program; the program (``args``) and the rest of the vector then choose
            what runs as ``program`` says (a shell's ``-c`` text). -1: not such a sink.
        operands_from: For a program started with its arguments listed after it
            (``asyncio.create_subprocess_exec(program, *args)``): the position from which the
            positional arguments (and any unpacked ones) are the program's own arguments,
            ``argv[1:]``; the program and they then choose what runs as ``program`` says.
            -1: not such a sink.
        slow_pattern: For a regular expression's matching: where the pattern is (an argument
            position, or -1 for the receiver's ``pattern`` attribute, a compiled pattern); the
            sink applies only when it is a constant whose matching can take polynomial time
            (``backtracking.polynomial``). None: not such a sink.
        slow_flags: The position of the ``re`` flags argument (also passed as ``flags``; -1: the
            receiver's ``flags`` attribute, or none).
        matches: Where the matching starts: ``"anywhere"`` (``search``, ``findall``, ``sub``...),
            ``"start"`` (``match``) or ``"whole"`` (``fullmatch``).
        what: Words for reports, e.g. ``"the SQL text run by execute()"``.
        model: The model file it comes from.
        when_called: The sink holds only where what the call returns is itself called
            (``getattr``'s name, which chooses what runs: ``reflection``).
        texts_only: The argument is a path only when it is a text: the call also takes an
            open file in its place (``zipfile.ZipFile(request.files["f"])`` reads the upload,
            no path), so a value of a library or an analysed class's type is not a path here.
        unless_set: The ``unless`` keywords are also attributes of the object the call
            returns: a constant ``unless`` names, assigned to one of them right after the call
            (``resp.mimetype = "application/json"``), makes the sink not apply, as passing it
            would (``set_after``).
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
    element: int | str | None = None
    channels: frozenset[str] = frozenset()
    needs_file: bool = False
    argv_from: int = -1
    operands_from: int = -1
    slow_pattern: int | None = None
    slow_flags: int = -1
    matches: str = "anywhere"
    what: str = ""
    model: str = ""
    when_called: bool = False
    texts_only: bool = False
    unless_set: bool = False


@dataclass(frozen=True, kw_only=True)
class Sanitiser:
    """A call whose result is safe for some kinds.

    Attributes:
        target: Qualified call name or ``"Type.method"``.
        is_method: True for a method.
        kinds: Kinds the result is safe for (``"*"``: every kind).
        args_contain: For a method such as ``str.replace``: it sanitises only when one of its
            first argument's constant characters is among these (``"\\n"`` for log injection).
        when: It sanitises only when this holds (``MultiDict.get(k, type=int)``), or also where
            the engine cannot tell with ``when_unknown`` (a template name it cannot read).
        only_items: When not empty, it sanitises only the data its first argument (a list or tuple)
            holds at these positions alone (``urlunparse(parts)``: the query, ``parts[4]``).
        what: Words for traces.
    """

    target: str
    is_method: bool
    kinds: frozenset[str]
    args_contain: str = ""
    when: Condition | None = None
    when_unknown: bool = False
    only_items: tuple[int, ...] = ()
    what: str = ""


RECEIVER_PATTERN = -2
"""``Guard.pattern`` of a compiled pattern's method: the pattern is the receiver's."""


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
            ``RECEIVER_PATTERN`` for a method of a compiled pattern (``NAME.fullmatch(value)``):
            the pattern is the one the receiver was compiled from, and the checked value is
            the argument at ``arg``, not the receiver.
        through: For a method check: the receiver must be one of these calls applied to the
            checked value (``os.path.realpath(p).startswith(base)`` checks ``p``); empty: the
            receiver is the checked value itself.
        compare: The call is a projection of the checked value (``urlparse(url)``) whose
            attributes, compared with constants or tested for emptiness, check the value.
        parts: With ``compare``: the attributes of the projection whose check checks the value
            (a URL's ``hostname`` or ``netloc``, not its ``scheme`` or ``path``); empty: any.
        joined_by: With ``through``: calls that join a folder and a name (``os.path.join``);
            a ``through`` call applied to one of them (``realpath(join(BASE, name))``) checks
            the joined name, the call's last argument. With ``compare``: calls whose result
            keeps the checked part of their last argument when it has one
            (``urlparse(urljoin(base, url)).netloc`` is ``url``'s host, or ``base``'s).
        empty_kinds: With ``compare``: the kinds still checked where the check lets the part be
            empty (``not parts.netloc``, a comparison with ``""``, a substring test, a host
            checked after ``urljoin``): a URL with no host is no server to fetch, but a
            browser reads ``/\\evil.example`` or ``///evil.example`` as another site. None:
            every kind.
        own_kinds: With ``compare``: the kinds checked by a comparison with the request's own
            URL or host (a browser sends the real host; a client making the server fetch
            chooses its ``Host``). None: every kind.
        only_empty: With ``compare``: only a check letting the part be only empty checks (``if u.scheme: raise``).
        common: ``"paths"``: the call returns what the paths of its first argument (a list or
            tuple) have in common (``os.path.commonpath([base, p])``): where it equals one of
            them, each other element that is a variable (or, with ``through``, a ``through``
            call of one) lies inside that one; ``"characters"``: their common prefix, character
            by character (``commonprefix``): only where that one ends with a separator.
        normalised_by: With ``through``: the calls among them that normalise a path (collapse
            its ``..``: ``realpath``, ``resolve``); when given, the checked value must have gone
            through one of them (a lexical check of ``Path(base, name)`` lets ``..`` out).
        absolute_only: Of ``normalised_by``, the calls that normalise only an absolute path
            (``normpath("../x")`` keeps its ``..``): their result is ``marks.NORMALISED`` only for one.
        raises: The call raises unless the check holds, returning something true where it does
            (``Path.relative_to``): a call statement of it that returned proves it, as ``if`` does;
            only without keyword arguments (Python 3.12's ``walk_up=True`` accepts a path outside).
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
    parts: tuple[str, ...] = ()
    joined_by: tuple[str, ...] = ()
    common: str = ""
    empty_kinds: frozenset[str] | None = None
    own_kinds: frozenset[str] | None = None
    only_empty: bool = False
    raises: bool = False
    normalised_by: tuple[str, ...] = ()
    absolute_only: tuple[str, ...] = ()
    what: str = ""


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
        route_fixed: For ``"type"``: attributes a matched route fixes (the request's path):
            read in a function that only routes without variable parts reach, they are that
            route's text, not outside data (``routes.fixed_path``).
        own_url: For ``"type"``: attributes and methods that give the request's own URL, path
            or host: a link can choose them only as an address of this very site, so a
            redirect to them leaves the site only where a path starting with ``//`` reaches
            the view (labels from them carry ``Label.own_url``).
        own_site: Of ``own_url``, those that are the request's own absolute URL (scheme and host
            first): a redirect to one stays on this site whatever its path (labels from them are
            clean for redirects).
    """

    target: str
    form: str
    attributes: frozenset[str] = frozenset()
    methods: frozenset[str] = frozenset()
    channel: str = "http"
    what: str = ""
    route_fixed: frozenset[str] = frozenset()
    own_url: frozenset[str] = frozenset()
    own_site: frozenset[str] = frozenset()


@dataclass(frozen=True, kw_only=True)
class Container:
    """A library type that holds values under keys its methods name (``ConfigParser``:
    ``set(section, option, value)`` then ``get(section, option)``).

    Attributes:
        type: The library type.
        store: Methods that store their last positional argument under the key their first
            ``key_args`` arguments form.
        load: Methods that return what is stored under the key their first ``key_args``
            arguments form.
        key_args: How many leading arguments form the key.
    """

    type: str
    store: frozenset[str]
    load: frozenset[str]
    key_args: int


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
        untracked: A finding only where the receiver is an object the engine does not follow
            (a parameter, an attribute): where it does, a ``[[reconfigure]]`` of the same call
            carries the state to the sinks instead.
        backtracks: Position of a regular expression argument (-1: none): the call is a
            finding only when that argument is a constant pattern whose matching can take
            exponential time (``backtracking.exponential``); ``backtracks_keyword`` names it
            when passed by keyword, ``whole_match`` says the call matches the whole text, and
            ``backtracks_flags`` is the position of its ``re`` flags (also passed as ``flags``:
            ``re.VERBOSE`` makes a comment no part of the pattern).
        literal_arg: Position of a secret argument (a signing or encryption key, a password;
            -1: none): the call is a finding only when that argument (or ``literal_keyword``)
            is a non-empty string or bytes constant, a secret written in the source (CWE-798):
            anyone who can read the code or its history holds it.
        min_args: The call is a finding only when it passes at least this many arguments
            (positional and keyword): a web response's ``set_cookie(name, value)`` takes a name
            and a value, a cookie jar's ``set_cookie(cookie)`` one Cookie object.
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
    untracked: bool = False
    backtracks: int = -1
    backtracks_keyword: str = ""
    backtracks_flags: int = -1
    whole_match: bool = False
    literal_arg: int = -1
    literal_keyword: str = ""
    min_args: int = 0


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
        pure: Library functions whose result is computed from their arguments alone
            (``base64.b64decode``): with constant arguments, a constant-built result.
        ends_as_last: Pure functions whose result ends as their last argument ends
            (``os.path.join``): it keeps that argument's constant ``suffix``.
        return_sinks: Methods of subclasses of library classes whose returned value is a sink
            (``ReturnSink``).
        compared: Source channel -> what comparing a value of it with outside data is
            (``Compared``).
        returned_attributes: ``call`` -> attribute -> argument position: the object a call
            returns keeps these arguments (passed there or by the keyword of the attribute's
            name) as its attributes (``re.compile(p).pattern`` is ``p``).
        containers: Library type -> the keyed container it is (``Container``).
        reconfigures: ``"Type.method"`` -> ``(type, when, removes)``: the type the receiver's
            variable gets (or, with ``removes``, loses) when the method is called with ``when``
            holding.
        constants: Library constants: qualified name -> value.
        aliases: Library modules that are other libraries' modules under another name:
            qualified name -> the name it stands for (``six.moves.urllib`` -> ``urllib``).
        renders: Calls that render a template file with a context.
        invokes: Calls that call a function they are given (``Invoke``).
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
    pure: frozenset[str]
    containers: Mapping[str, Container]
    reconfigures: Mapping[str, tuple[tuple[str, Condition | None, bool], ...]]
    constants: Mapping[str, Any]
    renders: Mapping[str, tuple[Render, ...]]
    files: tuple[str, ...]
    invokes: Mapping[str, tuple[Invoke, ...]] = field(default_factory=dict)
    ends_as_last: frozenset[str] = frozenset()
    returned_attributes: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    return_sinks: tuple[ReturnSink, ...] = ()
    compared: Mapping[str, Compared] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)

    def knows(self, qualified: str) -> bool:
        """True when some model names ``qualified`` or a member of it (a call, a read, an
        object, a type, a module whose functions are modelled...)."""
        return qualified in self.names

    @functools.cached_property
    def names(self) -> frozenset[str]:
        """Every name a model names, with each of its dotted prefixes (``requests``,
        ``requests.Session``, ``requests.Session.get``)."""
        names: set[str] = set(self.exits) | set(self.pure) | set(self.reconfigures)
        for table in (self.sinks, self.sources_call, self.sources_read, self.objects, self.sanitisers, self.checks,
                      self.returns, self.bases, self.constants, self.guards, self.renders, self.invokes):
            for key in table:
                parts = key.split(".")
                names.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
        return frozenset(names)

    def unaliased(self, qualified: str) -> str:
        """The name ``qualified`` stands for once a module alias that starts it is replaced
        (``six.moves.urllib.request.urlopen`` -> ``urllib.request.urlopen``); else itself."""
        if self.aliases:
            parts = qualified.split(".")
            for cut in range(len(parts), 0, -1):
                target = self.aliases.get(".".join(parts[:cut]))
                if target is not None:
                    return ".".join([target, *parts[cut:]])
        return qualified

    def is_type(self, name: str) -> bool:
        """True when ``name`` is a library type the models describe: a type with bases or
        tainted members, one that calls return, or the owner of a modelled sink method
        (``"Type.method"``). Indexed once, as the engine asks for every base of every class."""
        return name in self._types

    @functools.cached_property
    def _types(self) -> frozenset[str]:
        names: set[str] = set(self.bases) | set(self.sources_type)
        names.update(t for entries in self.returns.values() for t, _ in entries)
        for key in self.sinks:
            parts = key.split(".")
            names.update(".".join(parts[:n]) for n in range(1, len(parts)))
        return frozenset(names)

    @functools.cached_property
    def raising_methods(self) -> frozenset[str]:
        """The method names of the guards that raise unless they hold (``relative_to``)."""
        return frozenset(key.rpartition(".")[2] for key, guards in self.guards.items() if any(g.raises for g in guards))

    def mro(self, type_name: str) -> tuple[str, ...]:
        """Returns ``type_name`` and its library bases, nearest first (cycles ignored)."""
        out: list[str] = []
        todo = [type_name]
        while todo:
            current = todo.pop(0)
            if current not in out:
                out.append(current)
                todo.extend(self.bases.get(current, ()))
        return tuple(out)
