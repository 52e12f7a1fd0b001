"""What every rewrite shares: the finding's site, a rewrite's change, ``NoRewrite``, and
readings of call nodes (keywords, arguments, the value a local name stands for)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from .strings import Piece, pieces
from .text import Edit, Source


class NoRewrite(Exception):
    """No safe rewrite is known for this finding; the message says why."""


@dataclass(frozen=True, kw_only=True)
class Site:
    """Where a finding points and what its trace says.

    Attributes:
        kind: The weakness kind (``sql``, ``command``, ``weak-hash``...).
        api: The library API at the sink (``yaml.load``), or None for a bandit-only finding.
        role: The sink's role (``argument 1``, ``the returned value``), or "".
        line, col, end_line, end_col: The node's span (1-based lines, character columns;
            ``end_line`` and ``end_col`` may be None).
        source: The trace's source (``path``, ``line``, ``col``, ``channel``), or None.
    """

    kind: str
    api: str | None
    role: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None
    source: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class Change:
    """A rewrite's edits, the modules it needs imported, its name and why it is safe."""

    name: str
    rationale: str
    edits: list[Edit]
    imports: tuple[str, ...] = ()
    expected: tuple[str, ...] = field(default=())
    """Detector rules a re-scan may report on the new code as a known, accepted residue of this
    rewrite (bandit's B603 note on every subprocess call with an argument list)."""


def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def argument(call: ast.Call, role: str) -> ast.expr:
    """The argument the sink's role names (``argument 2``), the first one by default.

    Raises:
        NoRewrite: the call has no such positional argument.
    """
    match = re.match(r"argument (\d+)", role)
    index = int(match.group(1)) - 1 if match else 0
    if index >= len(call.args) or isinstance(call.args[index], ast.Starred):
        called = dotted(call.func)
        raise NoRewrite(f"the value is not a plain positional argument of {f'{called}()' if called else 'the call'} "
                        f"(a method of an object built in place, a keyword, *args)")
    return call.args[index]


def constant_parts(node: ast.expr) -> list[Piece]:
    """The pieces of a string-built value that takes outside data.

    Raises:
        NoRewrite: the value is constant, or not built in place from text and values.
    """
    if isinstance(node, ast.Constant):
        raise NoRewrite("the value is constant: nothing from outside reaches the call")
    parts = pieces(node)
    if parts is None:
        raise NoRewrite(f"the value ({ast.unparse(node)[:80]}) is not built in place from constant text and values, "
                        "so where the outside data sits in it is not known")
    if not any(p.node is not None for p in parts):
        raise NoRewrite("the value is constant: nothing from outside reaches the call")
    return parts


def remove_keyword(src: Source, call: ast.Call, kw: ast.keyword) -> Edit:
    """The edit that deletes a keyword argument with the comma before it (or after it)."""
    items: list[ast.AST] = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
    index = items.index(kw)
    start, end = src.span(kw)
    if index > 0:
        start = src.span(items[index - 1])[1]
    elif len(items) > 1:
        end = src.span(items[1])[0]
    return Edit(start=start, end=end, new="")


def assigned(src: Source, call: ast.Call, arg: ast.expr) -> tuple[ast.expr, bool]:
    """The value a sink's argument stands for: the argument itself, or, for a local name
    assigned once before the call (``q = "..." + x; cur.execute(q)``), the assigned value.

    Returns:
        ``(value, through_name)``.

    Raises:
        NoRewrite: the name is a parameter, global, assigned more than once or after the call,
            or read elsewhere (other than by ``print``), where a changed value would change
            what that code does.
    """
    if not isinstance(arg, ast.Name):
        return arg, False
    name = arg.id
    scope: ast.AST = src.tree
    for node in ast.walk(src.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and contains(node, call):
            scope = node  # the innermost: ast.walk visits outer functions first
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        params = scope.args
        if name in {a.arg for a in [*params.posonlyargs, *params.args, *params.kwonlyargs,
                                    *(x for x in (params.vararg, params.kwarg) if x)]}:
            raise NoRewrite(f"the value comes in as the parameter {name} of {scope.name}(); a rewrite there is left "
                            "to its callers")
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(scope)):
        raise NoRewrite(f"{name} is declared global or nonlocal")
    stores = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
    assigns = [n for n in ast.walk(scope) if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]
    if len(stores) != 1 or len(assigns) != 1:
        raise NoRewrite(f"the value is the variable {name}, assigned in {len(stores)} places; which value reaches the "
                        "call is not certain")
    assign = assigns[0]
    if (assign.end_lineno or assign.lineno) >= call.lineno:
        raise NoRewrite(f"{name} is assigned after the call (in a loop?)")
    printed = {id(n) for p in ast.walk(scope) if isinstance(p, ast.Call) and dotted(p.func) == "print"
               for n in ast.walk(p)}
    others = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
              and n is not arg and id(n) not in printed]
    if others:
        raise NoRewrite(f"{name} is also used at line {others[0].lineno}, where a changed value would change what that "
                        "code does")
    return assign.value, True




def contains(tree: ast.AST, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(tree))




def imported_from(src: Source, name: str, module: str) -> bool:
    return any(isinstance(n, ast.ImportFrom) and n.module == module and any((a.asname or a.name) == name for a in n.names)
               for n in ast.walk(src.tree))
