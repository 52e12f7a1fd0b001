"""The taint engine's entry point: analyse one file (with the modules of the same repository it
imports) and report its flows, API misuses and sink evidence.

``analyse`` interprets the file's module body, then every function in it: each function's
summary is computed (which reports any outside data its body reads and sends to a sink), every
handler is interpreted once more with its parameters bound to what its framework passes, and
the parameters of the file's public functions are treated as outside data supplied by the
library's callers (a library's public function is its entry point), with channel ``api``.
Findings in other files reached from this one are reported too; their paths say where.

The work is bounded by counting, not by a clock (``WORK_UNITS``: statements and expressions
evaluated): the same file is cut at the same point on any machine, so a replayed or resumed run
gives the same report, and nothing is interrupted from outside (a signal raised inside the
interpreter's parser corrupts it). What is not analysed when the budget runs out is listed in
``FileAnalysis.not_analysed`` with the reason, never silently skipped.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from . import catalog as catalog_module
from . import summaries, switches
from .budget import Budget, BudgetExceeded
from .definitions import FunctionInfo, iter_functions
from .dependencies import Dependencies
from .entries import handler_values, numeric_annotation, parameter_values
from .facts import CHANNEL_RANK, Evidence, Flow, Misuse, site_of
from .interp import Frame
from .interp_sinks import return_sinks
from .model_records import Catalog, Sink
from .program import Loader, Program
from .registered_elsewhere import call_registered, registered_elsewhere
from .substitution import made_for
from .values import EMPTY, Label, caller_state, join

DATA_METHODS = frozenset(f"{name}()" for kind in (str, bytes, list, tuple, dict, set) for name in dir(kind)
                         if not name.startswith("_")) | {"__getitem__()", "__iter__()"} | {
    f"{name}()" for name in ("read", "read1", "readall", "readline", "readlines", "getvalue")}
"""Methods of Python's own data types (``x.strip()``, ``x.split()``, ``x.format()``...) and the
reads of its file objects (``io.IOBase``: ``stream.read()``): a value a public function reads
from its parameter through these is derived from the caller's data; a value read through any
other attribute or method is the state of an object the caller passed."""
WORK_UNITS = 2_000_000
"""Statements and expressions evaluated per file, the imported modules' included. A 5,000-line
module takes about 100,000; the budget stops only pathological files."""
MAX_FLOWS = 200
"""Flows reported per file; more are counted in ``not_analysed``."""


@dataclass(frozen=True, kw_only=True)
class FileAnalysis:
    """What the engine found in one file.

    Attributes:
        flows: Outside data reaching sinks (candidates), sorted by position.
        misuses: API misuses found without taint.
        evidence: What reached each sink the engine evaluated, tainted or not.
        not_analysed: What was cut short, with the reason, for the report.
        read: Repository-relative paths of the other files the analysis read.
        depends: Every file read (this one included) and every lookup made, with what the
            shared pieces it adopted depended on (``dependencies``): what decides the result.
        escaped: For each weak random number (``(path, line, col)`` of the call) that leaves
            what the engine follows without reaching a modelled security sink: how it left.
        work_units_used: Units of the work budget spent (``WORK_UNITS`` at most).
    """

    flows: tuple[Flow, ...]
    misuses: tuple[Misuse, ...]
    evidence: tuple[Evidence, ...]
    not_analysed: tuple[str, ...]
    read: tuple[str, ...]
    escaped: dict[tuple[str, int, int], list[str]]
    work_units_used: int = 0
    depends: Dependencies = field(default_factory=Dependencies)

    @classmethod
    def nothing(cls) -> FileAnalysis:
        """The analysis of a file the engine was not asked to analyse."""
        return cls(flows=(), misuses=(), evidence=(), not_analysed=(), read=(), escaped={})


def analyse(path: str, tree: ast.Module, *, paths: list[str] | None = None, loader: Loader | None = None,
            catalog: Catalog | None = None, work_units: int = WORK_UNITS, is_test: Callable[[str], bool] | None = None,
            shas: Mapping[str, str] | None = None,
            templates: Callable[[str], tuple[str, str] | None] | None = None) -> FileAnalysis:
    """Analyses one file.

    Args:
        path: The file's repository-relative path (forward slashes).
        tree: Its syntax tree (``parser.parse_module``).
        paths: Repository-relative paths of the other Python files the analysis may read.
        loader: Reads and parses one of ``paths`` (None: no other file is read).
        catalog: The library models (the shipped ones when omitted).
        work_units: The work budget.
        is_test: Tells whether a path is test code (no public-API flows are reported there).
        shas: Path -> SHA-256 of every file the analysis may read, this one included. When
            given, summaries of functions are shared with later analyses of the same files in
            this process (``summaries._SHARED``); pass the same mapping object each time.
        templates: Finds a template file of the repository by the name a view renders it
            under: ``(path, text)`` or None (None: templates are not read).

    Returns:
        The analysis. Never raises for the file's content.
    """
    program = Program(catalog or catalog_module.default(), [*(paths or []), path], loader or (lambda p: None),
                      Budget(work_units), shas=shas)
    program.template_finder = templates
    module = program.add_module(path, tree)
    test_file = bool(is_test and is_test(path))
    try:
        program.run(module)
        for class_id in sorted(module.classes):
            # The file's classes know their bases' modules before any summary reads them
            # (``class Login(Base)``, ``Base`` another module's ``RequestHandler``: its sinks
            # and sources are ``self.redirect``, ``self.get_argument``).
            program.class_mro(class_id, load=True)
        functions = list(iter_functions(module))
        _share_library_stores(program, functions)
        for function in functions:
            _function(program, function, test_file)
        if not test_file:
            for function, handler, node in registered_elsewhere(program, module):
                try:
                    call_registered(program, module, function, handler, node)
                except RecursionError:
                    program.note(f"{path}: {function.qualname}() not analysed as the {handler.framework} handler "
                                 "registered here (it nests too deep for the engine)")
    except BudgetExceeded:
        program.note(f"{path}: analysis stopped at the work budget ({work_units} units); "
                     "the functions after that point were not analysed")
    flows = [f for kept in program.flows.values() for f in kept]
    if len(flows) > MAX_FLOWS:
        # Keep the worst: outside data from the network first, a caller's parameter last.
        flows.sort(key=lambda f: (CHANNEL_RANK.get(f.label.channel, 3), f.site.path, f.site.line, f.site.col, f.kind))
        program.note(f"{path}: {len(flows) - MAX_FLOWS} more flow(s) not reported (at most {MAX_FLOWS} per file, "
                     "the ones from the network kept first)")
        flows = flows[:MAX_FLOWS]
    flows.sort(key=lambda f: (f.site.path != path, f.site.path, f.site.line, f.site.col, f.kind, f.label.line))
    depends = program.depends.flattened()
    return FileAnalysis(
        flows=tuple(flows),
        misuses=tuple(sorted(program.misuses.values(), key=lambda m: (m.site.path, m.site.line, m.site.col, m.kind))),
        evidence=tuple(sorted(program.evidence.values(), key=lambda e: (e.site.path, e.site.line, e.site.col, e.kind))),
        not_analysed=tuple(program.cut_short),
        read=tuple(sorted(depends.files - {path})),
        escaped=dict(program.escaped),
        work_units_used=program.budget.used,
        depends=depends,
    )


def _share_library_stores(program: Program, functions: list[FunctionInfo]) -> None:
    """Computes the summaries of the module's functions first and joins what they store on
    library objects named by globals (``Summary.library_stores``) into
    ``Program.library_state``, which handlers then read: a ``before_request`` hook's
    ``g.user = ...`` is what a view reads as ``g.user``, whichever is defined first. What a
    handler stores stays its own (``g`` lives for one request). Summaries themselves never read
    it, so each stays the same whatever else the program holds."""
    for function in functions:
        found = summaries.summary(program, function)
        if program.handler_of(function) is not None:
            continue  # a view's store is its own request's, not another view's
        for key, value in found.library_stores.items():
            program.library_state[key] = join(program.library_state.get(key, EMPTY), value)


def _function(program: Program, function: FunctionInfo, test_file: bool) -> None:
    found = summaries.summary(program, function)
    handler = program.handler_of(function)
    if handler is not None:
        try:
            _handler(program, function, handler)
        except RecursionError:
            program.note(f"{function.module.path}: {function.qualname}() not analysed as a {handler.framework} "
                         "handler (it nests too deep for the engine)")
    elif not test_file:
        caller = None if function.public else template_caller(program, function)
        if function.public or caller is not None:
            _api(program, function, found, caller)
    if function.public:
        for label in found.returns.all_labels():
            if label.channel == "random":
                program.escape(label, f"returned by the public function {function.qualname}()")


def _handler(program: Program, function: FunctionInfo, handler: object) -> None:
    """Interprets a handler with its parameters bound to what its framework passes."""
    from .model_handlers import Handler

    assert isinstance(handler, Handler)
    env = handler_values(program, function, handler, parameter_values(program, function))
    frame = Frame(program, function.module, function, env, summarising=False)
    node = function.node
    assert not isinstance(node, ast.Lambda)
    frame.block(node.body)
    if not handler.returns_sink:
        return
    sink = Sink(target=f"{handler.framework} response", is_method=False, kind=handler.returns_sink, args=(0,),
                what=f"the body of the {handler.framework} response, sent as an HTML page", model="handler")
    for value, statement in frame.returns_at:
        returned = statement.value
        if isinstance(returned, ast.Tuple) and returned.elts:
            if _declares_other_content(returned):
                continue
            body, returned = value.get(0), returned.elts[0]
        else:
            body = value
        if body is None or (body.types - {"str"}) or isinstance(returned, _JSON_LITERALS):
            continue  # a response object, or a dict or list the framework sends as JSON
        frame.sink_value(sink, site_of(statement.value or statement, function.module.path, function.qualname), body,
                         "the returned value")


_JSON_LITERALS = (ast.Dict, ast.List, ast.DictComp, ast.ListComp, ast.Set, ast.SetComp)


def _declares_other_content(returned: ast.Tuple) -> bool:
    """``return body, status, {"Content-Type": "text/plain"}``: headers that declare a content
    type other than HTML."""
    for element in returned.elts[1:]:
        if isinstance(element, ast.Dict):
            for key, value in zip(element.keys, element.values):
                if (isinstance(key, ast.Constant) and str(key.value).lower() == "content-type"
                        and isinstance(value, ast.Constant) and "html" not in str(value.value).lower()):
                    return True
    return False


def _api(program: Program, function: FunctionInfo, found: summaries.Summary, caller: FunctionInfo | None) -> None:
    """Reports the sinks a public function's parameters reach as flows from its callers
    (``caller``: for a private hook, the public method of a base class that calls it,
    ``template_caller``). A method a framework calls for what it returns (``[[return_sink]]``,
    Django's ``as_sql``) gets its arguments from the framework: only its instance's state is
    its callers' data. A switch of the function (a parameter defaulting to ``True`` or
    ``False``) is taken as left as it is (``switches``): turned on, it is
    its caller's choice, flagged at that caller."""
    called_by_framework = bool(return_sinks(program, function))
    if found.sinks:  # what its callers' data reaches with its switches as they are
        found = switches.with_switch_defaults(program, function) or found
    for hit in found.sinks:
        for label in hit.value.all_labels():
            if label.channel != "param" or label.safe_for(hit.sink.kind, hit.sink.needs_file) or not made_for(label, function):
                continue
            if called_by_framework and label.param != 0:
                continue
            if program.catalog.kinds[hit.sink.kind].channels.isdisjoint({"api"}) or (
                    hit.sink.channels and "api" not in hit.sink.channels):
                continue
            if function.bound and label.param == 0:
                # The instance: its state, unless the constructor stored a caller's argument there.
                constructed = _constructor_parameter(program, function, caller_state(label))
                if constructed is None:
                    continue
                init, param = constructed
                what = f"parameter {param.arg!r} of the public constructor {init.qualname.rpartition('.')[0]}()"
                where = init
            else:
                if any(member not in DATA_METHODS for member in caller_state(label)):
                    continue  # an attribute or a method of an object the caller passed: that object's state
                param, where = function.params[label.param], function
                if numeric_annotation(param.annotation):
                    continue  # ``pid: int``: a caller keeping to the signature passes no text
                what = (f"parameter {param.arg!r} of the public function {function.qualname}()" if caller is None else
                        f"parameter {param.arg!r} of {function.qualname}(), which the public {caller.qualname}() calls")
            origin = Label(channel="api", what=what, path=where.module.path, line=param.lineno, col=param.col_offset,
                           cleaned=label.cleaned, sanitisers=label.sanitisers, steps=label.steps)
            program.report(Flow(kind=hit.sink.kind, sink=hit.sink, site=hit.site, label=origin, role=hit.role))


def template_caller(program: Program, method: FunctionInfo) -> FunctionInfo | None:
    """For a private method of a public class (``PythonREPLTool._run``): the public method of
    one of its classes' bases that calls it on the instance (``BaseTool.run`` calling
    ``self._run(...)``), or None. Python looks ``self._run`` up on the instance's class, so the
    override is what the inherited public method runs: the template-method pattern makes the
    hook part of the class's public API, its parameters its callers' data."""
    if method.public or method.cls is None or method.cls.name.startswith("_") or not method.bound or (
            method.name.startswith("__")):
        return None
    for base in program.class_mro(method.cls.id)[1:]:
        if base not in program.classes and "." in base:
            program.resolve(base)  # a base of another module of the code, loaded where it is needed
        info = program.classes.get(base)
        if info is None:
            continue
        for name, fid in sorted(info.methods.items()):
            caller = program.functions.get(fid)
            if caller is not None and caller.public and name != method.name and method.name in caller.self_calls():
                return caller
    return None


def _constructor_parameter(program: Program, method: FunctionInfo, access: tuple[str, ...]) -> (
        tuple[FunctionInfo, ast.arg] | None):
    """For ``self.url`` read in a public method (``access`` ``("url", ...)``): the public
    ``__init__`` of the method's class and its parameter whose data it stores there
    (``self.url = url``), so that ``Loader(url).load()`` is an entry point as
    ``load(url)`` would be; None when the attribute holds no constructor argument (or what the
    method reads from it is not plain data)."""
    if not access or method.cls is None or any(member not in DATA_METHODS for member in access[1:]):
        return None
    # The method's own class first, then the subclasses that inherit it (``Trunc(x, kind)``
    # stores ``self.kind`` that ``TruncBase.as_sql`` reads).
    owner = method.cls.id
    # (The classes known now: a hierarchy read with ``load=True`` may add classes while this walks.)
    classes = [owner, *sorted(c for c in list(program.classes) if c != owner and owner in program.class_mro(c)
                              and program.method(c, method.name) == method.id)]
    for class_id in classes:
        fid = program.method(class_id, "__init__")
        init = program.functions.get(fid) if fid is not None else None
        if init is None or not init.public or init.cls is None or init.cls.id != class_id and class_id != owner:
            continue  # a subclass whose constructor is the one already looked at
        stored = summaries.summary(program, init).writes.get((0, access[0]))
        for label in stored.all_labels() if stored is not None else ():
            if label.channel == "param" and label.param > 0 and made_for(label, init) and all(
                    m in DATA_METHODS for m in caller_state(label)):
                return init, init.params[label.param]
    return None
