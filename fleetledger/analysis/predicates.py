"""Functions of the analysed code that check their arguments: a validator written by the code's
author (``is_safe_redirect_url(url)``, ``allowed_file(name)``) proves, where its result has a
given truth, what every return of that truth proved about the argument.

The facts come from the function's own body, never from its name. While a function's summary is
computed, each ``return`` is read twice, for each truth its value may have: the conditions on
the path to it (the frame's narrowed variables) plus what the returned expression proves with
that truth (``conditions.proven``) say which sink kinds each parameter, still holding the
caller's argument, was checked for. A constant ``True`` is only truthy, ``False``/``None`` (and
the end of the body) only falsy. The function proves, for a truth, what all of its returns of
that truth prove (the intersection): one unchecked truthy return and ``if f(x):`` proves
nothing. It is the classic interprocedural summary of a predicate (as Pysa's and CodeQL's
barrier guards are, written there by hand for library functions).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import checked_paths
from .values import Value

if TYPE_CHECKING:
    from .definitions import FunctionInfo
    from .interp import Frame
    from .program import Program

Checks = dict[bool, dict[int, frozenset[str]]]
"""Truth of the result -> parameter index -> sink kinds the argument was checked for."""


def record_return(frame: Frame, expression: ast.expr | None, value: Value) -> None:
    """Adds what one ``return`` proves about the parameters, for each truth its value may have.

    Args:
        frame: The frame computing a function's summary, at the ``return``.
        expression: The returned expression (None for a bare ``return`` or the body's end).
        value: Its value.
    """
    function = frame.function
    if function is None or not frame.summarising or len(function.params) <= (1 if function.bound else 0):
        return  # no argument to prove anything about
    truths = [bool(value.const)] if value.is_const and _plain(value.const) else [True, False]
    testing = expression is not None and not value.is_const and isinstance(expression, _TESTS)
    for truth in truths:
        saved = dict(frame.env)
        try:
            if testing:
                frame.refine(expression, truth)  # type: ignore[arg-type]
            _meet(frame.argument_checks, truth, _checked(frame))
        finally:
            frame.env = saved


_TESTS = (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Call, ast.Name, ast.NamedExpr, ast.Attribute, ast.Await)
"""Returned expressions whose truth may prove something (``conditions.proven`` reads these)."""


def proofs(frame: Frame, call: ast.Call, truth: bool, *, awaited: bool = False) -> list[tuple[str, frozenset[str], str, None]]:
    """What ``call``, a call of functions of the analysed code, proves about the variables it is
    passed when its result has ``truth``: their summaries' ``argument_checks``, met over every
    function the callee may be (a method's overrides in subclasses included). A decorated
    function (its wrapper decides what the call returns) and a coroutine function called
    without ``await`` (the call is a coroutine object, always true) prove nothing.

    Args:
        frame: The frame where the condition is tested.
        call: The call tested.
        truth: The truth of its result on the path.
        awaited: True for ``await call``.

    Returns:
        ``(variable, kinds, what checked it, None)`` per plain variable passed where a
        parameter is checked (``conditions.Proof``).
    """
    return _passed_checks(frame, call, awaited, lambda checks: checks.get(truth, {}),
                          f"the check {ast.unparse(call)[:60]} found {'true' if truth else 'false'}")


def validations(frame: Frame, call: ast.Call, *, awaited: bool = False) -> list[tuple[str, frozenset[str], str, None]]:
    """What ``call``, a call of functions of the analysed code made as a statement (its result
    unused), proves about the variables it is passed once it has returned: what each of its
    returns proves, whatever its truth (the meet of its ``argument_checks`` over both). A
    validator that raises unless its argument is good (``if not name.isidentifier(): raise
    ValueError(...)``) returns only after the check passed; a predicate whose result is ignored
    proves nothing, since its false returns checked nothing. Decorated and not-awaited
    coroutine functions prove nothing (``proofs``).

    Args:
        frame: The frame where the call runs.
        call: The call.
        awaited: True for ``await call``.

    Returns:
        ``(variable, kinds, what checked it, None)`` per plain variable passed where a
        parameter is checked (``conditions.Proof``).
    """
    return _passed_checks(frame, call, awaited, _whatever_truth, f"the validation {ast.unparse(call)[:60]}, which returned")


def _whatever_truth(checks: Checks) -> dict[int, frozenset[str]]:
    """What the returns of every truth checked (the meet over both truths)."""
    met: dict[int, frozenset[str]] | None = None
    for per_truth in checks.values():
        met = dict(per_truth) if met is None else {
            i: _both(k, per_truth[i]) for i, k in met.items() if i in per_truth and _both(k, per_truth[i])}
    return met or {}


def _passed_checks(frame: Frame, call: ast.Call, awaited: bool, checks_of: Callable[[Checks], dict[int, frozenset[str]]],
                   what: str) -> list[tuple[str, frozenset[str], str, None]]:
    """``(variable, kinds, what, None)`` for each variable ``call`` passes to a parameter that
    ``checks_of`` (applied to each callee's ``argument_checks``) says is checked, met over every
    function the callee may be; none when one is opaque (``_opaque``)."""
    functions = _callees(frame, call)
    if not functions or any(_opaque(function, awaited) for function in functions):
        return []
    found: dict[str, frozenset[str]] | None = None
    for function in functions:
        checks = checks_of(frame.program.summary(function, frame.depth + 1).argument_checks)
        passed = _passed(frame, function, call)
        mine = {name: checks[index] for index, name in passed.items() if checks.get(index)}
        found = mine if found is None else {n: _both(k, mine[n]) for n, k in found.items() if n in mine and _both(k, mine[n])}
    return [(name, kinds, what, None) for name, kinds in sorted((found or {}).items())]


def _callees(frame: Frame, call: ast.Call) -> list[FunctionInfo]:
    """The functions of the analysed code ``call`` may run (None of them when it may also run
    something else), overrides of a called method in the subclasses of its class included."""
    program = frame.program
    callee = frame.expr(call.func)
    ids = set(callee.functions)
    for ref in (t[1:] for t in callee.types if t.startswith("=")):
        if "." not in ref or frame.catalog.knows(ref):
            return []  # a builtin or a library's: its models say what it checks
        local = program.resolve(ref)
        if local is None or local[0] != "function":
            return []
        ids.add(local[1])
    functions = [program.functions[f] for f in sorted(ids) if f in program.functions]
    if len(functions) != len(ids):
        return []
    if isinstance(call.func, ast.Attribute) and not _through_class(program, frame.expr(call.func.value)):
        for function in list(functions):
            if function.cls is not None:
                functions.extend(program.functions[f] for f in _overrides(program, function))
    return functions


def _through_class(program: Program, receiver: Value) -> bool:
    """True when a method is read from a class of the analysed code, not from an instance
    (``Base.__init__(self, ...)``): the call runs that very function, never a subclass's
    override. (A generated schema module calling its base's ``__init__`` from each of its
    hundreds of classes met every override at every call: 80 s for one file.)"""
    refs = [program.resolve(t[1:]) for t in receiver.types if t.startswith("=")]  # a class another module defines
    if len(refs) != len(receiver.types) or not (refs or receiver.functions):
        return False
    return receiver.functions <= program.classes.keys() and all(ref is not None and ref[0] == "class" for ref in refs)


def _overrides(program: Program, function: FunctionInfo) -> list[str]:
    """The ids of the methods that override ``function`` in the subclasses of its class
    (computed again only when the analysis has loaded more classes)."""
    count, known = program.overrides.get(function.id, (-1, []))
    if count != len(program.classes):
        assert function.cls is not None
        known = []
        for class_id in sorted(program.classes):
            override = program.method(class_id, function.name)
            if override != function.id and override in program.functions and function.cls.id in program.class_mro(class_id):
                known.append(override)
        program.overrides[function.id] = (len(program.classes), known)
    return known


def _opaque(function: FunctionInfo, awaited: bool) -> bool:
    """True for a function whose body does not say what a call of it returns: decorated (but
    for ``staticmethod``/``classmethod``), or a coroutine function not awaited."""
    node = function.node
    if isinstance(node, ast.AsyncFunctionDef) and not awaited:
        return True
    return any(not (isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")) for d in function.decorators)


def _plain(constant: object) -> bool:
    """True for a constant whose truth is Python's own (not an object with ``__bool__``)."""
    return constant is None or isinstance(constant, (bool, int, float, str, bytes))


def _checked(frame: Frame) -> dict[int, frozenset[str]]:
    """Parameter index -> the kinds its variable, still holding the argument, is checked for."""
    assert frame.function is not None
    assigned = frame.function.names()[0]
    out: dict[int, frozenset[str]] = {}
    for index, param in enumerate(frame.function.params):
        value = frame.env.get(param.arg)
        if value is None:
            continue
        if param.arg not in assigned and not value.all_labels() and not value.functions and not value.items:
            # Never assigned, yet holding no label: a comparison with constants narrowed it to
            # one of them (``return x == "/home"``).
            out[index] = frozenset({"*"})
            continue
        own = [label for label in value.labels.values()
               if label.channel == "param" and label.param == index and not label.access]
        if own and not value.items:
            kinds = frozenset.intersection(*(label.cleaned for label in own))
            if kinds:
                out[index] = kinds
    return out


def _meet(checks: Checks, truth: bool, found: dict[int, frozenset[str]]) -> None:
    """Meets one return's facts with those of the returns of the same truth seen before."""
    if truth not in checks:
        checks[truth] = dict(found)
        return
    before = checks[truth]
    checks[truth] = {i: _both(kinds, found[i]) for i, kinds in before.items() if i in found and _both(kinds, found[i])}


def _both(first: frozenset[str], second: frozenset[str]) -> frozenset[str]:
    """The kinds both sets check (``"*"``: every kind)."""
    if "*" in first:
        return second
    return first if "*" in second else first & second


def _passed(frame: Frame, function: FunctionInfo, call: ast.Call) -> dict[int, str]:
    """Parameter index -> the plain variable (or a variable's attribute, ``subject``) a call
    passes there (a method called on an object gets its instance first)."""
    offset = 1 if function.bound and isinstance(call.func, ast.Attribute) else 0
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return {}
    node = function.node
    positional = [*node.args.posonlyargs, *node.args.args]
    out: dict[int, str] = {}
    for i, arg in enumerate(call.args):
        if i + offset < len(positional) and subject(frame, arg):
            out[i + offset] = subject(frame, arg)
    index_of = {param.arg: i for i, param in enumerate(function.params)}
    for keyword in call.keywords:
        if keyword.arg in index_of and subject(frame, keyword.value):
            out[index_of[keyword.arg]] = subject(frame, keyword.value)
    return out


def subject(frame: Frame, expr: ast.expr | None) -> str:
    """The variable a check speaks of: ``x`` for ``x``, ``"x.attr"`` for an attribute of a
    variable that does not stand for a call (``parts.netloc`` of ``parts = urlparse(x)`` is a
    projection of ``x``, which ``conditions._projection`` reads), which ``Statements.narrow``
    narrows; the key of an access path (``request.args["next"]``: ``checked_paths.key``);
    empty for anything else."""
    if isinstance(expr, ast.Name):
        return expr.id
    if (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and isinstance(expr.ctx, ast.Load)
            and expr.value.id not in frame.conditions):
        return f"{expr.value.id}.{expr.attr}"
    return checked_paths.key(frame, expr) if expr is not None else ""
