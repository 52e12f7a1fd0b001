"""What the taint engine reports: sites, sink hits, flows, sink evidence and function summaries.

These are plain records; the engine (``interp``, ``program``) makes them and the scan turns
them into candidates (``jobs/scan/detect``). Nothing here knows a library.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from .model_records import Sink
from .values import Label, Step, Value

CHANNEL_RANK = {"http": 0, "network": 0, "random": 1, "cli": 2, "stdin": 2, "env": 2, "file": 2, "api": 3}
"""How strong a source's channel is, for ordering flows and traces (0: outside data from the
network; 3: a caller's parameter of a public function); a channel not listed ranks after all."""


@dataclass(frozen=True, slots=True)
class Site:
    """A place in the analysed code.

    Attributes:
        path: Repository-relative file path.
        line / col: Start, 1-based line and 0-based UTF-8 byte column (the parser's).
        end_line / end_col: End, likewise.
        scope: Qualified name of the enclosing function (``"<module>"`` at module level).
    """

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    scope: str

    def contains(self, line: int, col: int) -> bool:
        """True when (line, byte column) lies inside the site's span."""
        return (self.line, self.col) <= (line, col) <= (self.end_line, self.end_col)

    def to_json(self) -> dict[str, Any]:
        """Returns the site as JSON (read-only)."""
        return {"path": self.path, "line": self.line, "col": self.col, "end_line": self.end_line,
                "end_col": self.end_col, "scope": self.scope}


@dataclass(frozen=True, slots=True)
class SinkHit:
    """A value that reached a sink.

    Attributes:
        sink: The sink model.
        site: The sink call's span.
        value: The value that reached it.
        role: Which argument it was, for a person: ``"argument 1"``, ``"keyword url"``.
    """

    sink: Sink
    site: Site
    value: Value
    role: str


@dataclass(frozen=True, slots=True)
class Deferred:
    """A method call on a receiver of unknown type, kept in a summary (``deferred_calls``).

    Attributes:
        receiver: The receiver's value (parameter labels: ``self.logger`` is parameter 0
            read at ``("logger",)``).
        method: The method's name.
        args: The positional arguments' values.
        kwargs: The keyword arguments' values.
        star: The values of ``*a`` and ``**kw`` arguments.
        node: The call in the callee's tree.
        site: The call's span, where a flow found later is reported.
        hops: Summaries it was deferred through before this one's (``deferred_calls.MAX_HOPS``).
    """

    receiver: Value
    method: str
    args: tuple[Value, ...]
    kwargs: tuple[tuple[str, Value], ...]
    star: tuple[Value, ...]
    node: ast.Call
    site: Site
    hops: int = 0


@dataclass(frozen=True, slots=True)
class Flow:
    """Outside data (or a weak random number) reaching a sink unsanitised: a candidate.

    Attributes:
        kind: The sink's kind (``"sql"``).
        sink: The sink model.
        site: Where the sink is.
        label: The origin and its road (``label.steps``).
        role: Which argument of the sink.
        partial: The data picks only part of a URL whose scheme and host are fixed (a
            partial SSRF): less than the sink's full harm.
    """

    kind: str
    sink: Sink
    site: Site
    label: Label
    role: str
    partial: bool = False

    def trace_json(self) -> dict[str, Any]:
        """Returns the trace (source -> steps -> sink, sanitisers seen) as JSON (read-only)."""
        return {
            "source": self.label.to_json(),
            "steps": [step.to_json() for step in self.label.steps],
            "sink": {**self.site.to_json(), "what": self.sink.what or self.sink.target, "role": self.role,
                     "model": self.sink.model, "api": self.sink.target},
            "sanitisers": list(self.label.sanitisers),
            **({"partial": True} if self.partial else {}),
        }


@dataclass(frozen=True, slots=True)
class Misuse:
    """An API misuse found without taint (a ``check`` model matched).

    Attributes:
        kind: The check's short name.
        cwe: Its CWE.
        title: For reports.
        site: The call's span.
        message: What is wrong.
    """

    kind: str
    cwe: int
    title: str
    site: Site
    message: str


EVIDENCE_RANK = {"tainted": 5, "parameter": 4, "unknown": 3, "sanitised": 2, "constant": 1}


@dataclass(frozen=True, slots=True)
class Evidence:
    """What reached a sink, whatever it was: the facts a detector's candidate at that sink is
    judged by.

    Attributes:
        kind: The sink's kind.
        site: The sink's span.
        state: ``"tainted"`` (outside data, unsanitised), ``"parameter"`` (a parameter of the
            enclosing function: its callers decide), ``"unknown"`` (a value from code the engine
            does not see), ``"sanitised"`` (every non-constant part was sanitised or checked for
            this kind) or ``"constant"`` (built only from constants).
        detail: One sentence for a person.
        sanitisers: What sanitised it, when ``state == "sanitised"``.
    """

    kind: str
    site: Site
    state: str
    detail: str
    sanitisers: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Returns the evidence as JSON (read-only)."""
        return {"kind": self.kind, "site": self.site.to_json(), "state": self.state, "detail": self.detail,
                "sanitisers": list(self.sanitisers)}


@dataclass(slots=True)
class Summary:
    """What a function does with its parameters, in terms of parameter labels.

    Attributes:
        returns: The return value (labels of channel ``param`` stand for the arguments).
        sinks: Sink hits whose value carries parameter labels.
        writes: ``(parameter index, attribute)`` -> the value the function stores there
            (``self.x = p`` in a constructor).
        complete: False when the analysis was cut short or the function is being analysed
            (a recursive call): callers then assume the result carries every argument.
        global_stores: ``(global container of the function's module, by key)`` -> what the
            function stores in it, by a key (``REGISTRY[name] = fn`` in a registering
            decorator) or as an item (``HOOKS.append(fn)``); a call in the module's body adds
            the functions it passed to that global.
        library_stores: ``(library object named by a global, attribute)`` -> what the
            function stores on it (``flask.g.user = ...`` in a ``before_request`` hook), its
            parameters' data left out: state every function of the program may read
            (``Program.library_state``).
        argument_checks: Truth of the result -> parameter index -> the sink kinds the
            argument is checked for wherever the function returns a value of that truth
            (``predicates``): ``if is_safe(url):`` proves what ``is_safe`` checks.
        deferred: Method calls on its parameters whose type only a caller knows, checked
            where the summary is applied (``deferred_calls``).
        raises: What the exceptions it may raise carry (``raise Redirect(url)``), its own
            ``raise`` statements' and its callees' alike; None when it raises nothing the
            engine follows. A caller's handler (``except Redirect as e``) binds it.
    """

    returns: Value
    sinks: list[SinkHit] = field(default_factory=list)
    writes: dict[tuple[int, str], Value] = field(default_factory=dict)
    complete: bool = True
    global_stores: dict[tuple[str, bool], Value] = field(default_factory=dict)
    library_stores: dict[tuple[str, str], Value] = field(default_factory=dict)
    argument_checks: dict[bool, dict[int, frozenset[str]]] = field(default_factory=dict)
    deferred: tuple[Deferred, ...] = ()
    raises: Value | None = None


def step(site: Site, what: str) -> Step:
    """Returns a step at a site's start."""
    return Step(path=site.path, line=site.line, col=site.col, what=what)


PASSED_TO = "passed to "
"""How the step at a call of the analysed code's function or class starts (``passed_to``): the
scan reports a flow that leaves a file there (``jobs.scan.taint``)."""


def passed_to(site: Site, callee: str) -> Step:
    """Returns the step of data passed at ``site`` to the analysed code's ``callee`` (a name)."""
    return step(site, f"{PASSED_TO}{callee}()")


def site_of(node: ast.AST, path: str, scope: str) -> Site:
    """Returns the span of a node as a ``Site``."""
    line = getattr(node, "lineno", 1)
    col = getattr(node, "col_offset", 0)
    return Site(path=path, line=line, col=col, end_line=getattr(node, "end_lineno", None) or line,
                end_col=getattr(node, "end_col_offset", None) or col, scope=scope)
