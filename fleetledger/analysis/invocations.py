"""The call a library makes with a function it is given (``[[invokes]]``): written as code at
the library call's place, so the engine evaluates it as the analysed code's own call
(``loop.run_in_executor(None, exec, code)`` runs ``exec(code)``).
"""

from __future__ import annotations

import ast
from typing import Any

from .model_conventions import Invoke
from .values import Value, join

def invoked(invoke: Invoke, node: ast.Call) -> ast.Call | None:
    """The call ``invoke`` makes, written as code at ``node``'s place: ``exec(code)`` for
    ``loop.run_in_executor(None, exec, code)``, ``work(data)`` for ``Thread(target=work,
    args=(data,))``; None when the function is not passed. An argument tuple that is not
    written out (``args=values``) is passed starred."""
    keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
    positional = [a for a in node.args if not isinstance(a, ast.Starred)]
    if len(positional) != len(node.args) and max(invoke.function, invoke.args_tuple, invoke.args_from) >= len(positional):
        return None  # a starred argument before the ones named: positions unknown
    function = positional[invoke.function] if 0 <= invoke.function < len(positional) else keywords.get(invoke.function_keyword)
    if function is None:
        return None
    args: list[ast.expr] = []
    if invoke.args_from >= 0:
        args.extend(node.args[invoke.args_from:])
    packed = node.args[invoke.args_tuple] if 0 <= invoke.args_tuple < len(node.args) else keywords.get(invoke.args_keyword)
    if isinstance(packed, (ast.Tuple, ast.List)):
        args.extend(packed.elts)
    elif packed is not None:
        args.append(ast.copy_location(ast.Starred(value=packed, ctx=ast.Load()), packed))
    named = {invoke.function_keyword, invoke.args_keyword}
    passed = [k for k in node.keywords if invoke.keywords and k.arg not in named]
    return ast.copy_location(ast.Call(func=function, args=args, keywords=passed), node)


def invoke_all(frame: Any, invokes: tuple[Invoke, ...], node: ast.Call) -> Value | None:
    """Evaluates, in ``frame`` (an interpreter frame), each call ``invokes`` makes at ``node``
    (``invoked``); returns what the functions of those that give their function's result
    (``Invoke.returns``) return, joined, or None when none does."""
    given = []
    for invoke in invokes:
        called = invoked(invoke, node)
        if called is not None:
            value = frame.call(called)
            if invoke.returns:
                given.append(value)
    return join(*given) if given else None
