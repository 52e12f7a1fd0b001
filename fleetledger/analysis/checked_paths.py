"""A check written on an expression, not a variable: ``if not is_safe(request.args["next"]):
abort(400)`` then ``redirect(request.args["next"])``.

An **access path** is a variable followed by attribute reads, subscripts by constants and
``.get(constant[, constant])`` calls (the ``Mapping`` protocol's read, PEP 3119), up to
``MAX_DEPTH`` steps: ``request.args["next"]``, ``request.args.get("next")``,
``state["next"][0]``. Python evaluates it again at each read, and reads the same object's same
entry while nothing rebinds the variable or stores into it. So what a check proves of the path
(``Statements.narrow``) holds for the path's later reads in the same function, on the branches
the check covers: the narrowed value is kept in the frame's variables under the key ``"@" +
ast.unparse(path)`` (no identifier starts with ``@``), which branches join like variables but
keep only when every branch has it (``join_envs``). A fact holds only while the path's variable
holds the very value it was proven on (any rebinding, a store into it, ``del``, a change the
engine follows in place gives the variable a new value), and is forgotten after a call that may
change the object otherwise (``called``): one given the variable's object or an object read from
it (``setattr(state, ...)``, ``state.pop(0)``, ``helper(state["a"])``; a call only reading a
path, ``state.get("k")``, or given exactly a checked path's value, changes nothing), and any call
of a function of the analysed code named by a variable, or of ``exec``/``eval`` (it may rebind
what it reaches: a closure's ``nonlocal``, a global). An alias taken after the check forgets it
(``shared``); a change through an alias taken before, or from another module, is not seen, as
for variables.

Only in a function's body: a module's or class body's variables are its globals or attributes.
A plain name and ``name.attribute`` are narrowed as variables (``predicates.subject``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .values import Value, clean
from .walks import walk

if TYPE_CHECKING:
    from .interp import Frame

PREFIX = "@"
MAX_DEPTH = 8
"""Steps an access path has at most (deeper: not narrowed)."""
MAX_KEY_CHARS = 200
"""Characters a constant key of an access path has at most (a longer one: not narrowed, so that
a path's variable name stays short to build at each read)."""
_MAX_INT = 10 ** MAX_KEY_CHARS


def root(expr: ast.expr) -> str | None:
    """The variable an access path starts from, or None when ``expr`` is not one (or is a plain
    name)."""
    node, depth = expr, 0
    while depth <= MAX_DEPTH:
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Subscript) and _short(node.slice):
            node = node.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and not node.keywords and 1 <= len(node.args) <= 2 and all(_short(a) for a in node.args)):
            node = node.func.value
        else:
            break
        depth += 1
    return node.id if isinstance(node, ast.Name) and 0 < depth <= MAX_DEPTH else None


def _short(node: ast.expr) -> bool:
    """True for a constant key: a text of at most ``MAX_KEY_CHARS`` characters, or a number
    whose digits are no more (``ast.unparse`` of a longer integer may raise ``ValueError``)."""
    if not isinstance(node, ast.Constant):
        return False
    value = node.value
    if isinstance(value, (str, bytes)):
        return len(value) <= MAX_KEY_CHARS
    return value is None or isinstance(value, (bool, float)) or (isinstance(value, int) and abs(value) < _MAX_INT)


def key(frame: Frame, expr: ast.expr) -> str:
    """The frame variable that holds what was proven of the access path ``expr`` (``"@" +
    ast.unparse(expr)``), registering the path's node for ``narrow``; empty when ``expr`` is not
    an access path, or outside a function."""
    if frame.function is None or root(expr) is None:
        return ""
    name = PREFIX + ast.unparse(expr)
    frame.path_nodes[name] = expr
    return name


def narrow(frame: Frame, name: str, kinds: frozenset[str], what: str, exact: Value | None) -> None:
    """Gives the access path ``name`` (a ``key``) what a check proved of it: ``exact``, or its
    value cleaned for ``kinds`` by ``what``."""
    node = frame.path_nodes.get(name)
    variable = root(node) if node is not None else None
    if node is None or variable is None:
        return
    holder = _holder(frame, variable)
    if holder is None:
        return
    current = frame.env.get(name) if frame.path_holders.get(name) is holder else None
    if current is None:
        current = frame.expr(node)
    frame.env[name] = exact if exact is not None else clean(current, kinds, what)
    frame.path_holders[name] = holder
    frame.narrowed_roots.add(variable)


def lookup(frame: Frame, node: ast.expr) -> Value | None:
    """What a check proved of the access path ``node``, where one holds on this branch; None
    otherwise (the path is evaluated as usual)."""
    variable = root(node)
    if variable is None or variable not in frame.narrowed_roots:
        return None
    name = PREFIX + ast.unparse(node)
    held = frame.env.get(name)
    if held is None or frame.path_holders.get(name) is not _holder(frame, variable):
        return None  # (the variable was given another value since the check)
    return held


def called(frame: Frame, call: ast.Call) -> None:
    """Forgets, after ``call`` ran, what it may have changed of the checked paths (see the
    module's docstring)."""
    if root(call) is not None:
        return  # ``state.get("k")``: a read
    func = call.func
    if isinstance(func, ast.Name):
        named = frame.env.get(func.id) or frame.module.globals.get(func.id)
        if (named is not None and named.functions) or (named is None and func.id in _RUNNING_CODE):
            for variable in list(frame.narrowed_roots):
                forget(frame, variable)
            return
    receiver = [func.value] if isinstance(func, ast.Attribute) else []
    for part in (*receiver, *call.args, *(keyword.value for keyword in call.keywords)):
        shared(frame, part.value if isinstance(part, ast.Starred) else part)


def shared(frame: Frame, expr: ast.expr) -> None:
    """Forgets the checked paths of the variables whose object, or an object read from it,
    ``expr`` hands on (to a call, or to another name: ``alias = state``, ``box = state["box"]``,
    then changed through it); exactly a checked path's value hands on nothing else. A walrus
    inside ``expr`` (a comprehension's: PEP 572 binds it in the function) rebinds its target."""
    if isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)) and PREFIX + ast.unparse(expr) in frame.env:
        return
    for node in walk(expr):
        if isinstance(node, ast.Name) and node.id in frame.narrowed_roots:
            forget(frame, node.id)


_RUNNING_CODE = frozenset({"exec", "eval"})
"""Builtins that run code given as text: it may rebind or change any variable."""


def _holder(frame: Frame, variable: str) -> Value | None:
    """The value the variable holds here (the function's own, a closure's or a global)."""
    if variable in frame.env:
        return frame.env[variable]
    closure = frame.function.closure if frame.function is not None else None
    if closure and variable in closure:
        return closure[variable]
    return frame.module.globals.get(variable)


def forget_under(frame: Frame, target: ast.expr | None) -> None:
    """``forget`` for the variable an object changed in place starts from (``state.update(d)``,
    ``state["next"].append(v)``, a helper storing into ``state``)."""
    while isinstance(target, (ast.Attribute, ast.Subscript, ast.Call)):
        target = target.func if isinstance(target, ast.Call) else target.value
    if isinstance(target, ast.Name):
        forget(frame, target.id)


def forget(frame: Frame, variable: str) -> None:
    """Forgets what was proven of the access paths of ``variable`` (it was rebound or stored
    into). ``Frame.narrowed_roots`` keeps it: it only tells which reads may be narrowed."""
    if variable not in frame.narrowed_roots:
        return
    for name in [n for n in frame.env if n.startswith(PREFIX) and (n[1:].startswith((variable + ".", variable + "[")))]:
        del frame.env[name]
