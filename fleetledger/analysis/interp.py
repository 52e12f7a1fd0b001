"""The taint engine's abstract interpreter: one pass over a function's statements in order.

Each statement maps an environment (variable -> ``Value``) to the next: an assignment binds,
an ``if`` runs both branches on copies refined by what the condition proves (``guards``) and
joins them, a loop runs its body until the environment stops changing (at most
``LOOP_ROUNDS`` times), ``try``/``with``/``match`` join their paths, and a path that returns,
raises, breaks or continues stops contributing to what follows. Conditions that fold to a
constant (``if 7 * 3 > 20:``) take only the branch that runs. This is the textbook
flow-sensitive, path-insensitive analysis (Kildall's monotone framework); its cost is linear in
the function's size times the loop rounds.

Expressions are evaluated to ``Value``s: literals to constants, names to their binding (local,
then the module's globals, then a library reference), string building (``+``, ``%``,
``.format``, f-strings, ``join``) to the join of its parts, containers to values that remember
their keys, attribute reads and calls by the library models (``catalog``) or, for the analysed
code's own functions, by their summaries (``program``). A call the models do not describe
passes its arguments' taint to its result (taint in, taint out), and a value that comes from
nothing the engine sees carries an ``opaque`` label, so that a sink's evidence can tell "built
from constants" from "origin unknown".

``Frame`` is one class assembled from its parts, one module each: ``interp_statements``
(statements and assignment), ``interp_expressions`` (expressions), ``interp_calls`` (calls and
their resolution) and ``interp_sinks`` (what reaches the models' sinks, template renders and
misuse checks). It calls into the analysed code's functions through its program
(``Program.apply_summary``), never by importing ``summaries``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from .budget import BudgetExceeded
from .definitions import FunctionInfo, ModuleInfo
from .facts import Deferred, Site, SinkHit, site_of, step
from .interp_calls import Calls
from .interp_exceptions import Exceptions
from .interp_expressions import Expressions
from .interp_loops import Loops
from .interp_match import Matching
from .interp_operators import Operators
from .interp_runtime_names import RuntimeNames
from .interp_sinks import Sinks
from .interp_statements import Statements
from .values import Value

if TYPE_CHECKING:
    from .program import Program


class Frame(Statements, Exceptions, Loops, Matching, Expressions, Operators, RuntimeNames, Calls, Sinks):
    """The interpretation of one function body or module body.

    Args:
        program: The program (models, summaries, results).
        module: The module the code is in.
        function: The function, or None for a module body.
        env: Initial variables (parameters, or the module's globals being built).
        summarising: True when parameters carry ``param`` labels and the frame's results form
            the function's summary.
        depth: How many summaries are being computed around this one.
    """

    def __init__(self, program: Program, module: ModuleInfo, function: FunctionInfo | None, env: dict[str, Value],
                 *, summarising: bool, depth: int = 0) -> None:
        self.program = program
        self.catalog = program.catalog
        self.module = module
        self.function = function
        self.env = env
        self.summarising = summarising
        # Flows, evidence and misuses are recorded only from the analysed file's own code (and
        # its calls into other files): what another file's code finds by itself is that file's
        # to report, and whether it is found here would depend on whether its summary was
        # computed here or shared by another analysis (``Program.report``).
        self.own = module.path == program.root
        self.depth = depth
        self.scope = function.qualname if function else "<module>"
        self.alive = True
        self.returned: list[Value] = []
        self.yielded: list[Value] = []
        self.returns_at: list[tuple[Value, ast.Return]] = []
        self.raised: list[Value] = []
        self.swallowing = 0  # enclosing ``with suppress(...)`` or ``try`` whose ``finally`` returns
        self.hits: dict[tuple[int, int, str, str], SinkHit] = {}
        self.writes: dict[tuple[int, str], Value] = {}
        self.global_stores: dict[tuple[str, bool], Value] = {}
        self.library_stores: dict[tuple[str, str], Value] = {}
        self.argument_checks: dict[bool, dict[int, frozenset[str]]] = {}  # predicates.Checks
        self.deferred: list[Deferred] = []  # ``deferred_calls.defer``
        self.loops: list[tuple[list[dict[str, Value]], list[dict[str, Value]]]] = []
        self.conditions: dict[str, ast.expr] = {}
        self.operands: dict[str, set[str]] = {}  # a name -> the remembered checks that read it
        self.narrowed_roots: set[str] = set()  # variables with a checked access path (``checked_paths``)
        self.path_nodes: dict[str, ast.expr] = {}  # ``checked_paths.key`` -> its expression
        self.path_holders: dict[str, Value] = {}  # ``checked_paths.key`` -> its variable's value when checked
        self.locals, self.global_names = function.names() if function else (frozenset(), frozenset())

    def site(self, node: ast.AST) -> Site:
        return site_of(node, self.module.path, self.scope)

    def step(self, node: ast.AST, what: str) -> Any:
        return step(self.site(node), what)


def run_module(program: Program, module: ModuleInfo) -> None:
    """Interprets a module's body once (imports, definitions, module-level code), filling its
    globals; module-level sinks are reported like any other. Idempotent."""
    if module.analysed:
        return
    module.analysed = True
    frame = Frame(program, module, None, module.globals, summarising=False)
    try:
        frame.block(module.tree.body)
    except BudgetExceeded:
        program.note(f"{module.path}: module body not analysed to the end (work budget used up)")
    except RecursionError:
        program.note(f"{module.path}: module body not analysed to the end (it nests too deep for the engine)")
    module.globals.update(frame.env)
