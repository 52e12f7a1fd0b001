"""The constant a helper of the analysed code returns for constant arguments, computed where a
check needs a constant and the helper's summary does not give one.

A summary describes a function for any arguments, so it keeps what flows but not what a method
of a parameter makes of a constant: ``tobytes(PATTERN)``, with ``tobytes`` returning
``s.encode("latin-1")`` for a text, is not a constant after the summary is applied, although
the pattern compiled is. Where a check reads a constant (the pattern a regular expression
check judges), a call of a module-level function of the analysed code whose arguments are all
constants is computed again with its parameters bound to them (a summary made for those
arguments only, as ``switch_values`` makes one for switches), and its result read. The
function must be small (``MAX_STATEMENTS``): this is constant propagation into a helper, not
an interpreter for whole programs.
"""

from __future__ import annotations

import ast
import weakref
from typing import TYPE_CHECKING

from . import summaries
from .values import Value

if TYPE_CHECKING:
    from .interp import Frame

MAX_STATEMENTS = 24
"""Statements a helper may hold to be computed for constant arguments (a conversion or a
wrapper: ``tobytes`` has 3)."""
_CONSTANT_TYPES = (str, bytes, int, float, bool, type(None))


def folded(frame: Frame, node: ast.expr) -> Value | None:
    """What the call ``node`` returns when it calls a module-level function of the analysed code
    with constant arguments only, computed with its parameters bound to them.

    Args:
        frame: Where the call is evaluated (its names and program).
        node: The argument expression a check needs as a constant.

    Returns:
        The value the function returns for those arguments (a constant, or one of a few, where
        its body makes one), or None when ``node`` is not such a call: not a call, a callee
        that is not exactly one such function (or one being computed), an argument that is
        not a constant or holds a call, unpacked arguments, or a body over ``MAX_STATEMENTS``.

    Raises:
        BudgetExceeded: the work budget ran out while computing it (as for any summary).
    """
    if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
        return None
    if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
        return None
    if any(isinstance(inner, ast.Call) for arg in [*node.args, *node.keywords] for inner in ast.walk(arg)):
        return None  # (its arguments are read again here: a call among them would run twice)
    program = frame.program
    callee = frame.expr(node.func)
    found = set(callee.functions)
    for qualified in program.library_refs(callee.types):  # ``from pkg.compat import tobytes``, as calls resolve it
        local = program.resolve(qualified) if "." in qualified else None
        if local is not None and local[0] == "function":
            found.add(local[1])
    function = program.functions.get(found.pop()) if len(found) == 1 else None
    if function is None or function.cls is not None or function.id in program.in_progress:
        return None
    if _statements(function.node) > MAX_STATEMENTS:
        return None
    args = [frame.expr(arg) for arg in node.args]
    kwargs = {str(k.arg): frame.expr(k.value) for k in node.keywords}
    if not all(v.is_const and isinstance(v.const, _CONSTANT_TYPES) for v in [*args, *kwargs.values()]):
        return None
    bound = summaries.bind_arguments(function, args, kwargs, [])
    key = (function.id, "constants", tuple(sorted((i, type(v.const).__name__, v.const) for i, v in bound.items())))
    return program.specialised_summary(
        key, lambda: summaries.compute(program, function, frame.depth + 1, bound=bound)).returns


_COUNTED: weakref.WeakKeyDictionary[ast.AST, int] = weakref.WeakKeyDictionary()


def _statements(node: ast.AST) -> int:
    """The statements a function holds, counted once per function (a file may check thousands
    of patterns made by one long helper)."""
    count = _COUNTED.get(node)
    if count is None:
        count = _COUNTED[node] = sum(isinstance(n, ast.stmt) for n in ast.walk(node))
    return count
