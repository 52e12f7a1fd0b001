"""The object a decorator or a registration call is made on, where a function's local names
hold it.

Entry points are found before any function is interpreted, by evaluating a decorator's or a
registering call's receiver in its module (``@app.route`` with ``app = Flask(__name__)`` at the
top level). Many programs build that object inside a function instead: an application factory
(``app = Flask(__name__)`` in ``create_app()``) or a command-line ``main()`` building its
parsers (``run = commands.add_parser("run")``, then ``run.set_defaults(handler=f)``). For such a
receiver, ``receiver_value`` follows the holding function's simple assignments to the names the
receiver reads (``name = value``, and ``for name in values``: one of their elements,
flow-insensitively: every assignment of a name counts), through at most ``MAX_CHAIN`` names, and
evaluates the receiver with those names bound (``for command in Command.__subclasses__():
parser.set_defaults(main=command.main)`` registers each subclass's ``main``). Only library
calls and the module's own definitions are evaluated this way, as in the module's frame; the
holding function's parameters stay unknown.

Cost: each (function, name) is evaluated once per program (``Program.locals``), and the holding
function is found in a map built once per module, so a factory registering thousands of views
after thousands of assignments costs one pass over each, not their product.
"""

from __future__ import annotations

import ast
import functools
from typing import TYPE_CHECKING

from .definitions import FunctionInfo, ModuleInfo
from .interp import Frame
from .values import EMPTY, Value, join
from .walks import child_nodes, walk

if TYPE_CHECKING:
    from .program import Program

MAX_CHAIN = 6
"""Names followed back from a receiver (``parser`` -> ``commands`` -> ``run``)."""


def receiver_value(program: Program, module: ModuleInfo, expr: ast.expr) -> Value:
    """The value of ``expr`` (a decorator's or registering call's receiver) of ``module``.

    Args:
        program: The program being analysed (its module has been run).
        module: The module whose syntax tree holds ``expr``.
        expr: The receiver expression (a node of that tree).

    Returns:
        The value as the module's frame computes it, with the names the innermost function
        holding ``expr`` assigns bound first (see the module docstring); the module's value of
        ``expr`` when no function holds it.
    """
    holder = _holders(module).get(id(expr))
    env = dict(module.globals)
    if holder is not None:
        env.update(_bound(program, module, holder, expr, 0))
    return Frame(program, module, None, env, summarising=False).expr(expr)


def _bound(program: Program, module: ModuleInfo, holder: FunctionInfo, node: ast.AST, depth: int) -> dict[str, Value]:
    """The names ``node`` reads that ``holder`` assigns (its parameters: unknown), bound."""
    assigned = _assignments(holder.node)
    out: dict[str, Value] = {}
    for name in {n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}:
        if any(param.arg == name for param in holder.params):
            out[name] = EMPTY
        elif name in assigned:
            out[name] = _local(program, module, holder, name, depth)
    return out


def _local(program: Program, module: ModuleInfo, holder: FunctionInfo, name: str, depth: int) -> Value:
    key = (holder.id, name)
    if key in program.locals:
        return program.locals[key]
    if depth >= MAX_CHAIN:
        return EMPTY
    program.locals[key] = EMPTY  # a name assigned from itself (x = x.child()) reads nothing more
    values = []
    for value, each in _assignments(holder.node)[name]:
        env = {**module.globals, **_bound(program, module, holder, value, depth + 1)}
        frame = Frame(program, module, None, env, summarising=False)
        values.append(frame.element(frame.expr(value), value) if each else frame.expr(value))
    program.locals[key] = join(*values)
    return program.locals[key]


@functools.lru_cache(maxsize=16)
def _holders(module: ModuleInfo) -> dict[int, FunctionInfo]:
    """id of each expression node of ``module`` inside a function -> the innermost such function
    (lambdas left out); built once per module."""
    by_node = {id(f.node): f for f in module.functions.values() if not isinstance(f.node, ast.Lambda)}
    out: dict[int, FunctionInfo] = {}
    stack: list[tuple[ast.AST, FunctionInfo | None]] = [(module.tree, None)]
    while stack:
        node, holder = stack.pop()
        holder = by_node.get(id(node), holder)
        if holder is not None and isinstance(node, ast.expr):
            out[id(node)] = holder
        stack.extend((child, holder) for child in child_nodes(node))
    return out


@functools.lru_cache(maxsize=64)
def _assignments(function: ast.AST) -> dict[str, list[tuple[ast.expr, bool]]]:
    """Name -> the values ``function``'s own body assigns to it, each with whether the name
    takes one of its elements: ``(value, False)`` for ``name = value``, ``(values, True)`` for
    ``for name in values`` (nested definitions left out); built once per function (nodes hash
    by identity)."""
    out: dict[str, list[tuple[ast.expr, bool]]] = {}
    stack = child_nodes(function)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).append((node.value, False))
        elif isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name):
            out.setdefault(node.target.id, []).append((node.iter, True))
        stack.extend(child_nodes(node))
    return out
