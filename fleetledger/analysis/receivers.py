"""The object a decorator or a registration call is made on, where a function's local names
hold it.

Entry points are found before any function is interpreted, by evaluating a decorator's or a
registering call's receiver in its module (``@app.route`` with ``app = Flask(__name__)`` at the
top level). Many programs build that object inside a function instead: an application factory
(``app = Flask(__name__)`` in ``create_app()``) or a command-line ``main()`` building its
parsers (``run = commands.add_parser("run")``, then ``run.set_defaults(handler=f)``). For such a
receiver, ``receiver_value`` follows the holding function's simple assignments to the names the
receiver reads (``name = value``, flow-insensitively: every assignment of a name counts), through
at most ``MAX_CHAIN`` of them, and evaluates the receiver with those names bound. Only library
calls and the module's own definitions are evaluated this way, as in the module's frame; the
holding function's parameters stay unknown.
"""

from __future__ import annotations

import ast
import functools
from typing import TYPE_CHECKING

from .definitions import FunctionInfo, ModuleInfo
from .interp import Frame
from .values import EMPTY, Value, join

if TYPE_CHECKING:
    from .program import Program

MAX_CHAIN = 6
"""Assignments followed back from a receiver (``parser`` -> ``commands`` -> ``run``)."""


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
    globals_ = dict(module.globals)
    holder = _holding_function(module, expr)
    if holder is None:
        return Frame(program, module, None, globals_, summarising=False).expr(expr)
    assigned = _assignments(holder.node)
    shadowed = {param.arg for param in holder.params}
    env: dict[str, Value] = {name: EMPTY for name in shadowed if name in globals_}

    def bind(node: ast.AST, depth: int) -> None:
        for name in _loaded_names(node):
            if name in env or name in shadowed or name not in assigned or depth >= MAX_CHAIN:
                continue
            env[name] = EMPTY  # a name assigned from itself (x = x.child()) ends here
            values = []
            for value in assigned[name]:
                bind(value, depth + 1)
                values.append(Frame(program, module, None, {**globals_, **env}, summarising=False).expr(value))
            env[name] = join(*values)

    bind(expr, 0)
    return Frame(program, module, None, {**globals_, **env}, summarising=False).expr(expr)


def _holding_function(module: ModuleInfo, expr: ast.expr) -> FunctionInfo | None:
    """The innermost function (not a lambda) whose definition contains ``expr``, or None."""
    where = (expr.lineno, expr.col_offset)
    best: FunctionInfo | None = None
    for function in module.functions.values():
        node = function.node
        if isinstance(node, ast.Lambda) or node.end_lineno is None or node.end_col_offset is None:
            continue
        if (node.lineno, node.col_offset) <= where <= (node.end_lineno, node.end_col_offset) and (
                best is None or node.lineno >= best.node.lineno):
            best = function
    return best


@functools.lru_cache(maxsize=64)
def _assignments(function: ast.AST) -> dict[str, list[ast.expr]]:
    """Name -> the values ``function``'s own body assigns to it by ``name = value`` (nested
    definitions left out); built once per function (nodes hash by identity)."""
    out: dict[str, list[ast.expr]] = {}
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).append(node.value)
        stack.extend(ast.iter_child_nodes(node))
    return out


def _loaded_names(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
