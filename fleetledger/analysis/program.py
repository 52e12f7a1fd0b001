"""The analysed program: the modules reachable from one file (what each defines is in
``definitions``), how names resolve across them, and the function summaries the engine
computes on demand.

A ``Program`` starts from one file (the file being scanned) and loads the modules of the same
repository that it imports, lazily and within a budget, through a ``loader`` that only reads
files the caller allows (the policy decides). Module names come from paths as Python's import
system finds them (``definitions.module_index``: ``src/shop/views.py`` is ``shop.views`` when
``src`` is not a package), and an import resolves to the module of that name.

Summaries are computed the first time a call needs one (``summaries.summary``), by interpreting
the function with its parameters bound to parameter labels (``interp``); a recursive call met
while its own summary is being computed sees an incomplete summary (the call's result then
carries every argument), which is the usual bottom-up approximation for recursion. The
interpreter reaches summaries through the program (``apply_summary``, ``construct``), so that
``interp`` imports neither ``program`` nor ``summaries``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from . import constructors, entries, helper_constants, summaries, summary_sharing
from .budget import Budget
from .dependencies import Dependencies
from .definitions import ClassInfo, FunctionInfo, ModuleInfo, index, module_index, module_name, top_names
from .facts import Evidence, EVIDENCE_RANK, Flow, Misuse, Site, Summary
from .interp import Frame, run_module
from .model_handlers import Handler
from .model_records import Catalog
from .name_resolution import NameResolution
from .interp_sinks import return_sinks
from .values import Label, Value, clean

MAX_MODULES = 128
"""Modules a program loads besides its root file. The modules of a class's bases are loaded
(``class_mro``), as Python imports them to define it: a file of Django's admin, whose classes
derive from forms, models and views, needs about 80 (64 left out the root file's own imports)."""

Loader = Callable[[str], "tuple[str, ast.Module] | None"]
"""Given a repository-relative path, returns ``(path, tree)`` or None when the file may not or
cannot be read (the caller's policy and parser decide)."""


class Program(NameResolution):
    """The modules reachable from one root file, and their summaries.

    Args:
        catalog: The library models.
        paths: Repository-relative paths of the Python files the program may load.
        loader: Reads and parses one of ``paths``.
        budget: The work budget shared by everything the program analyses.
    """

    def __init__(self, catalog: Catalog, paths: list[str], loader: Loader, budget: Budget,
                 shas: Mapping[str, str] | None = None) -> None:
        self.catalog = catalog
        self.shas = shas
        self.scope = _scope(catalog, shas) if shas is not None else None
        self.stack: list[str] = []
        self.unstable: set[str] = set()
        self.running: list[str] = []  # paths of the modules whose bodies are being interpreted
        self.root_dependent: set[str] = set()  # of those, the ones not to share (``summaries.root_dependent``)
        self.loader = loader
        self.budget = budget
        self.modules: dict[str, ModuleInfo] = {}
        self.functions: dict[str, FunctionInfo] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.summaries: dict[str, Summary] = {}
        self.in_progress: set[str] = set()
        self.reentered: set[str] = set()  # functions called while their summary was being computed
        self.provisional: dict[str, Summary] = {}  # a cycle head's summary of the round before
        self.made: list[str] = []  # functions whose summaries this analysis made, in order
        self.iterating = 0  # cycle heads whose second or later round is being computed
        self.specialised: dict[tuple[object, ...], tuple[Summary, Dependencies]] = {}  # ``summaries.specialised``
        # ``summary_sharing``: which computations depend on this analysis, and when each began
        # (``serial``) and each summary was made; the deepest call chain of the one under way.
        self.dependent: set[str] = set()
        self.specialised_volatile: set[tuple[object, ...]] = set()  # specialised entries made in a cycle, or dependent
        self.specialised_functions: set[str] = set()  # the functions of those
        self.serial = 0
        self.started: list[int] = []
        self.born: dict[object, int] = {}
        self.deepest = 0
        self.flat_deps: dict[int, tuple[Dependencies, Dependencies]] = {}  # ``summary_sharing._flat``
        self.fixed_paths: dict[str, tuple[str, ...] | None] = {}  # ``routes.fixed_path``, per function
        self.flows: dict[tuple[str, int, int, str, str], list[Flow]] = {}
        self.misuses: dict[tuple[str, int, int, str], Misuse] = {}
        self.evidence: dict[tuple[str, int, int, str], Evidence] = {}
        # ``(library object named by a global, attribute)`` -> what the analysed module's
        # functions store there (``Summary.library_stores``), read by handlers (``flask.g``).
        self.library_state: dict[tuple[str, str], Value] = {}
        self.handlers: dict[str, Handler | None] = {}  # ``handler_of``, per function id
        self.overrides: dict[str, tuple[int, list[str]]] = {}  # method id -> (classes seen, its overrides): predicates
        self.cut_short: list[str] = []
        self.escaped: dict[tuple[str, int, int], list[str]] = {}
        # functools.partial objects by where they were made ("path:line:col"): the callee's value
        # and expression, the bound positional values, the bound keyword values.
        self.partials: dict[str, tuple[Value, ast.expr, list[Value], dict[str, Value]]] = {}
        self.calling_partials: set[str] = set()
        self.reading_properties: set[str] = set()  # property getters being applied (``Expressions.attribute``)
        self.depends = Dependencies()  # the files read (this one's included) and the lookups made
        self.summary_deps: dict[str, Dependencies] = {}
        self._tracking: list[Dependencies] = []
        self.callers: dict[str, int] = {}
        planned = tuple(sorted(paths))
        self.by_name, self._names = module_index(planned)  # import name -> path, path -> name
        self.tops = top_names(planned)  # first parts of the analysed code's module names
        self._failed: set[str] = set()
        self.root = ""  # the path of the file being analysed (the first module added)
        self.template_finder: Callable[[str], tuple[str, str] | None] | None = None
        self._templates: dict[str, tuple[str, list[Any]] | None] = {}
        NameResolution.__init__(self)
        self.copies: dict[str, tuple[bool, Dependencies]] = {}  # ``vendoring.vendored_name``, per package
        self.locals: dict[tuple[str, str], Value] = {}  # ``receivers.receiver_value``: (function id, name)
        self.returned: dict[str, frozenset[str]] = {}  # ``entries.returned_types``, per function id
        self.subclasses: dict[str, tuple[int, dict[str, tuple[str, ...]]]] = {}  # ``constructors._subclasses``, per module
        self.overrides: dict[tuple[str, str], frozenset[str]] = {}  # ``hooks.dispatched``, per (class, hook)
        self.passing: set[tuple[str, tuple[int, ...]]] = set()  # ``passed_types`` lookups under way
        self.passed: dict[tuple[str, tuple[int, ...]], frozenset[str]] = {}  # ``passed_types``, found

    # -- modules -------------------------------------------------------------------------

    def add_module(self, path: str, tree: ast.Module) -> ModuleInfo:
        """Indexes a parsed module (its defs, classes and imports) and returns it."""
        name, package = module_name(path)
        indexed = self._names.get(path)
        name = indexed or name  # the import name, not the folder path
        module = ModuleInfo(name=name, path=path, tree=tree, is_package=package)
        self.root = self.root or path
        self.modules[name] = module
        module.deps.files.add(path)
        module.deps.modules[path] = indexed
        self.depend(module.deps)
        index(module)
        self.functions.update(module.functions)
        self.classes.update(module.classes)
        return module

    def find_module(self, dotted: str) -> ModuleInfo | None:
        """Returns the loaded or loadable module whose import name is ``dotted``
        (``module_index``), or None. The lookup and what the module depends on become
        dependencies of the analysis (``depend``); it costs a unit of the work budget."""
        self.budget.spend()
        if dotted in self.modules:
            module = self.modules[dotted]
            self._looked_up(dotted, module.path)
            self.depend(module.deps)
            return module
        path = self.by_name.get(dotted)
        self._looked_up(dotted, path)
        if path is None:
            return None
        if path in self._failed:
            self.touch(path)
            return None
        for module in self.modules.values():
            if module.path == path:
                self.depend(module.deps)
                return module
        if len(self.modules) > MAX_MODULES:
            self.note(f"{dotted}: not loaded (more than {MAX_MODULES} modules)")
            self._failed.add(path)
            return None
        key = self.shared_module_key(path)
        shared = _SHARED_MODULES.get(key) if key is not None else None
        if shared is not None:
            return self._adopt(shared)
        loaded = self.loader(path)
        if loaded is None:
            self._failed.add(path)
            self.touch(path)
            return None
        module = self.add_module(*loaded)
        if key is not None:
            self.run(module)
            if module.path in self.root_dependent:
                return module
            if len(_SHARED_MODULES) >= MAX_SHARED_MODULES:
                _SHARED_MODULES.clear()
            module.deps = module.deps.flattened()  # complete now: read at every adoption (``_adopt``)
            _SHARED_MODULES[key] = module
        return module

    def run(self, module: ModuleInfo) -> None:
        """Interprets a module's body once (``interp.run_module``); what that depends on is
        added to the module's own dependencies, and the caller depends on them."""
        if module.analysed:
            self.depend(module.deps)
            return
        self.running.append(module.path)
        try:
            with self.tracking() as deps:
                run_module(self, module)
        finally:
            self.running.pop()
        module.deps.add(deps)

    # -- dependencies --------------------------------------------------------------------

    def touch(self, path: str) -> None:
        """Notes that the analysis read the file ``path`` (``dependencies``)."""
        self.depends.files.add(path)
        for open_ in self._tracking:
            open_.files.add(path)

    def _looked_up(self, dotted: str, path: str | None) -> None:
        """Notes that the import name ``dotted`` resolved to ``path`` (None: to no file)."""
        self.depends.names[dotted] = path
        for open_ in self._tracking:
            open_.names[dotted] = path

    def depend(self, deps: Dependencies) -> None:
        """Notes that the analysis depends on ``deps`` (a shared piece it adopted, a lookup),
        by reference (``Dependencies.add``): O(pieces being computed around it)."""
        self.depends.add(deps)
        for open_ in self._tracking:
            open_.add(deps)

    def specialised_summary(self, key: tuple[object, ...], make: Callable[[], tuple[Summary, Dependencies]]) -> Summary:
        """The summary made for some calls only (``summaries.specialised``,
        ``switch_values.at_call``, ``switches.with_switch_defaults``), kept for this analysis
        under ``key``: made by ``make()`` on first use; later uses depend on what it read.
        Raises what ``make`` raises (``BudgetExceeded``)."""
        known = self.specialised.get(key)
        if known is None:
            known = self.specialised[key] = make()
            summary_sharing.made_specialised(self, key)
        else:
            self.depend(known[1])
            if key in self.specialised_volatile:
                summary_sharing.read_made(self, key)
        return known[0]

    @contextmanager
    def tracking(self) -> Iterator[Dependencies]:
        """Collects, for the time of the ``with`` block, what the analysis depends on into a
        new ``Dependencies`` (as well as into the analysis's own): the dependencies of one
        piece of work that is kept for later (a module's body, a function summary)."""
        deps = Dependencies()
        self._tracking.append(deps)
        try:
            yield deps
        finally:  # ``with`` blocks nest, so the last one opened closes first
            self._tracking.pop()

    def shared_module_key(self, path: str) -> tuple[str, str, str] | None:
        """The key under which an imported module, indexed and with its body interpreted, is
        shared with other analyses of the same scope, or None."""
        sha = self.shas.get(path) if self.shas is not None else None
        return None if self.scope is None or sha is None else (self.scope, path, sha)

    def _adopt(self, module: ModuleInfo) -> ModuleInfo:
        """Makes a module another analysis of this scope loaded (and interpreted) part of this
        program: its functions and classes become resolvable here."""
        self.modules[module.name] = module
        self.depend(module.deps)
        self.functions.update(module.functions)
        self.classes.update(module.classes)
        # The modules its body loaded are loaded here too, as running it would have: its
        # globals may name their functions and classes (``gettext_lazy = lazy(gettext)`` is
        # a function nested in ``lazy``'s module), which must resolve here.
        for name, path in sorted(module.deps.names.items()):
            if path is not None:
                self.find_module(name)
        return module

    def find_template(self, name: str) -> tuple[str, list[Any]] | None:
        """The repository's template file of a name (``"blog/post.html"``) and its unescaped
        variable writes (``templates.unescaped``), or None when it is not found or may not be
        read."""
        from . import templates

        if name not in self._templates:
            found = self.template_finder(name) if self.template_finder is not None else None
            self._templates[name] = (found[0], templates.unescaped(found[1])) if found is not None else None
        known = self._templates[name]
        self.depend(Dependencies(files={known[0]} if known is not None else set(),
                                 templates={name: known[0] if known is not None else None}))
        return known

    def shared_key(self, function: FunctionInfo) -> tuple[str, ...] | None:
        """The key under which the function's summary may be shared with other analyses of the
        same scope, or None (no scope, or its module's hash is unknown)."""
        if self.scope is None or self.shas is None:
            return None
        sha = self.shas.get(function.module.path)
        return None if sha is None else (self.scope, function.id, sha)

    # -- classes -------------------------------------------------------------------------

    def class_mro(self, class_id: str, *, load: bool = False) -> list[str]:
        """Returns the class, its local bases and then every library base, nearest first.

        Args:
            class_id: A class of the analysed code, or a library type's qualified name.
            load: Also load the module of ``class_id`` when it names a class of a module not
                loaded yet (an annotation's ``pkg.base.Handler``), to follow its bases: for
                what makes a class a framework's handler. Loading a module costs its body's
                interpretation, so what is asked of every type (its methods' models) does
                not. The bases of a class of the analysed code are always followed into
                their modules (``from ..base import Handler``, bound before its module was
                needed), whatever ``load`` says.
        """
        out: list[str] = []
        todo = [(class_id, load)]
        while todo:
            current, loading = todo.pop(0)
            if current in out or len(out) > 32:
                continue
            out.append(current)
            info = self.classes.get(current)
            if info is not None:
                # Python defines a class only after importing its bases: their modules are
                # loaded, so the bases a class of the analysed code names never depend on
                # which modules this analysis (or one whose summaries it adopted) loaded first.
                todo.extend((base, True) for base in info.bases)
            elif current in self.catalog.bases:
                todo.extend((base, loading) for base in self.catalog.bases[current])
            elif current in self.catalog.returns:  # a class known by the type its call makes
                todo.extend((t, loading) for t, when in self.catalog.returns[current] if when is None)
            elif current.partition(".")[0] in self.tops:
                local = self.resolve(current) if loading else self._loaded_class(current)
                if local is not None and local[0] == "class":
                    todo.append((local[1], loading))
        return out

    def _loaded_class(self, qualified: str) -> tuple[str, str] | None:
        """``("class", id)`` for a class named ``module.Name`` whose module is loaded already;
        None otherwise (nothing is loaded for it)."""
        module_name, _, name = qualified.rpartition(".")
        path = self.by_name.get(module_name)
        loaded = module_name in self.modules or path is not None and any(m.path == path for m in self.modules.values())
        module = self.find_module(module_name) if loaded else None
        value = module.globals.get(name) if module is not None else None
        found = sorted(value.functions & self.classes.keys()) if value is not None else []
        return ("class", found[0]) if len(found) == 1 else None

    def method(self, class_id: str, name: str) -> str | None:
        """Returns the function id of ``name`` as the class or its local bases define it."""
        for current in self.class_mro(class_id):
            info = self.classes.get(current)
            if info is not None and name in info.methods:
                return info.methods[name]
        return None

    # -- results -------------------------------------------------------------------------

    def report(self, flow: Flow) -> None:
        """Records a flow; at most three per sink site, kind and origin kind are kept."""
        key = (flow.site.path, flow.site.line, flow.site.col, flow.kind, flow.role)
        kept = self.flows.setdefault(key, [])
        if any(f.label.key == flow.label.key for f in kept) or len(kept) >= 3:
            return
        kept.append(flow)

    def report_misuse(self, misuse: Misuse) -> None:
        """Records an API misuse (once per site and kind)."""
        self.misuses.setdefault((misuse.site.path, misuse.site.line, misuse.site.col, misuse.kind), misuse)

    def record_evidence(self, evidence: Evidence) -> None:
        """Keeps, per sink site and kind, the worst evidence seen."""
        key = (evidence.site.path, evidence.site.line, evidence.site.col, evidence.kind)
        old = self.evidence.get(key)
        if old is None or EVIDENCE_RANK[evidence.state] > EVIDENCE_RANK[old.state]:
            self.evidence[key] = evidence

    def escape(self, label: Label, how: str) -> None:
        """Records that a weak random number (``label``) left what the engine follows."""
        kept = self.escaped.setdefault((label.path, label.line, label.col), [])
        if how not in kept and len(kept) < 3:
            kept.append(how)

    def note(self, text: str) -> None:
        """Records something that was not analysed, with the reason."""
        if text not in self.cut_short and len(self.cut_short) < 50:
            self.cut_short.append(text)

    # -- handlers ------------------------------------------------------------------------

    def handler_of(self, function: FunctionInfo) -> Handler | None:
        """Returns the framework handler model that makes ``function`` an entry point
        (``entries.handler_of``, computed once per function and analysis)."""
        if function.id not in self.handlers:
            self.handlers[function.id] = entries.handler_of(self, function)
        return self.handlers[function.id]

    # -- calls into the analysed code ----------------------------------------------------

    def summary(self, function: FunctionInfo, depth: int = 0) -> Summary:
        """Returns a function's summary, computing it on first use (``summaries.summary``),
        for the interpreter's modules, which do not import summaries."""
        return summaries.summary(self, function, depth)

    def apply_summary(self, frame: Frame, function: FunctionInfo, args: list[Value], kwargs: dict[str, Value],
                      star: list[Value], node: ast.Call, site: Site) -> Value:
        """Applies a function's summary at a call in ``frame`` (``summaries.apply``); returns
        the call's value. The interpreter reaches summaries through its program, so that it
        does not import them (summaries interpret functions)."""
        result = summaries.apply(frame, function, args, kwargs, star, node, site)
        for model in return_sinks(self, function):
            # Its own return was that sink already (``super().as_sql(...)`` forwarded by an
            # override): the text is reported once, where it is built.
            result = clean(result, frozenset({model.kind}), f"{function.qualname}() (checked where it returns)")
        return result

    def stored_types(self, frame: Frame, class_id: str, attr: str) -> frozenset[str]:
        """What ``__init__`` of a class of the analysed code stores in an attribute of the new
        instance, as types only (``{"requests.Session"}`` for ``session``): another method reads
        ``self.session`` as an object of that type (``constructors.stored_types``)."""
        return constructors.stored_types(frame, class_id, attr)

    def folded(self, frame: Frame, node: ast.expr) -> Value | None:
        """What a call of a helper of the analysed code returns for its constant arguments
        (``helper_constants.folded``), for a check that needs a constant."""
        return helper_constants.folded(frame, node)

    def construct(self, frame: Frame, class_id: str, args: list[Value], kwargs: dict[str, Value],
                  star: list[Value], node: ast.Call, site: Site) -> Value:
        """Evaluates ``Class(...)`` for a class of the analysed code at a call in ``frame``
        (``constructors.construct``)."""
        return constructors.construct(frame, class_id, args, kwargs, star, node, site)


_SCOPES: dict[int, tuple[Mapping[str, str], str]] = {}
_SHARED_MODULES: dict[tuple[str, str, str], ModuleInfo] = {}
MAX_SHARED_MODULES = 2_000
"""Imported modules (indexed, their bodies interpreted) shared by the analyses of one worker
process, keyed by scope, path and content hash. The file being analysed is never taken from
here: its own analysis runs afresh, so that what it reports is complete."""


def _scope(catalog: Catalog, shas: Mapping[str, str]) -> str:
    """A digest of the files an analysis may read (paths and hashes) and of the models."""
    import hashlib

    known = _SCOPES.get(id(shas))
    if known is not None and known[0] is shas:
        return known[1]
    digest = hashlib.sha256(repr((id(catalog), sorted(shas.items()))).encode()).hexdigest()
    _SCOPES.clear()
    _SCOPES[id(shas)] = (shas, digest)
    return digest
