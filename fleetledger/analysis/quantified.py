"""What ``any(...)`` and ``all(...)`` of a generator prove, by Python's semantics of the two
builtins: ``any(P(e) for e in xs)`` is true when ``P`` holds for some element and false when it
fails for every one; ``all(P(e) for e in xs)`` is true when ``P`` holds for every element and
false when it fails for some.

* For every element (``all(c.isalnum() for c in name)`` found true, or ``any(c in "/\\\\" for c
  in name)`` found false): what ``P`` proves of the element is proven of the iterated variable,
  whose characters or items are those elements (an empty one has none, and is safe too).
  A text absent from every part of ``x.split(sep)`` is absent from ``x`` where it shares no
  character with ``sep`` (``_absent_from_whole``).
* For some element (``any(url.startswith(p) for p in PREFIXES)`` or ``any(urlparse(u).hostname
  == h for h in HOSTS)`` found true): what ``P`` proves of the other variables holds, the
  element standing for any item of the iterated collection (a list of constants: their common
  start, any of them).

Only a generator with one ``for`` over a plain name (or a split text, above) and no ``if`` is read; other forms prove
nothing (``conditions``). The set forms of the same character check (``set(x) <= ALLOWED``,
``set(x).issubset(ALLOWED)``, ``not set(x) - ALLOWED``) are read by ``subset``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import patterns
from .values import Value, join
from .walks import walk

if TYPE_CHECKING:
    from .interp import Frame

Prover = Callable[["Frame", ast.expr, bool], list[Any]]
"""``conditions.proven``: the proofs of a test found of a truth."""


def proofs(frame: Frame, test: ast.Call, truth: bool, proven: Prover) -> list[Any] | None:
    """The proofs of ``any(...)``/``all(...)`` of a generator found ``truth``.

    Args:
        frame: The frame the test is evaluated in.
        test: The call.
        truth: The truth the call is found to have.
        proven: ``conditions.proven``, applied to the generator's element test.

    Returns:
        ``conditions.Proof`` tuples, or None when ``test`` is not such a call of the builtins.
    """
    func = test.func
    if not (isinstance(func, ast.Name) and func.id in ("any", "all") and len(test.args) == 1 and not test.keywords):
        return None
    generator = test.args[0]
    if not (isinstance(generator, ast.GeneratorExp) and len(generator.generators) == 1):
        return None
    loop = generator.generators[0]
    if loop.ifs or loop.is_async or not isinstance(loop.target, ast.Name):
        return None
    if "=" + func.id not in frame.expr(func).types:
        return None  # a function of the code's own named so
    universal = (func.id == "all") == truth
    name = loop.target.id
    iterable = frame.expr(loop.iter)
    saved = frame.env.get(name)
    frame.env[name] = _element(frame, iterable, loop.iter)
    try:
        found = proven(frame, generator.elt, truth)
    finally:
        if saved is None:
            frame.env.pop(name, None)
        else:
            frame.env[name] = saved
    if universal:
        if not isinstance(loop.iter, ast.Name):
            whole = _absent_from_whole(frame, loop.iter, generator.elt, name, truth)
            return proven(frame, whole, True) if whole is not None else []
        what = f"the check of every element {ast.unparse(test)[:60]}"
        members = _members(frame, generator.elt, name, truth)
        if members is not None:  # every character one of these: safe as far as they are
            kinds = patterns.alphabet_kinds(members, frozenset({"*"}), frozenset(frame.catalog.kinds))
            return [(loop.iter.id, kinds, what, None)] if kinds else []
        return [(loop.iter.id, kinds, what, None) for variable, kinds, _, _ in found if variable == name and kinds]
    return [proof for proof in found if proof[0] != name]


def kept_by_loop(loop: ast.For | ast.AsyncFor) -> ast.Call | None:
    """For a loop whose whole body is ``if P(x): raise ...`` (or ``return``), with no ``break``
    or ``continue`` (which could skip the exit) and no ``else``: once it has ended normally, no
    element met ``P``, as ``all(not P(x) for x in xs)`` found true says (``for part in
    path.split("/"): if ".." in part: raise``). The
    test to read after the loop, or None for any other loop (one over anything but a name or a
    name split by constants: reading the test evaluates the iterable again, which must have no
    effect)."""
    if loop.orelse or not isinstance(loop.target, ast.Name) or len(loop.body) != 1 or isinstance(loop, ast.AsyncFor):
        return None
    check, iterated = loop.body[0], loop.iter
    if not (isinstance(check, ast.If) and not check.orelse and isinstance(check.body[-1], (ast.Raise, ast.Return))
            and not any(isinstance(node, (ast.Break, ast.Continue)) for node in walk(check))):
        return None
    if (isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr == "split"
            and all(isinstance(arg, ast.Constant) for arg in iterated.args) and not iterated.keywords):
        iterated_name = iterated.func.value
    else:
        iterated_name = iterated
    if not isinstance(iterated_name, ast.Name):
        return None
    every = ast.GeneratorExp(ast.UnaryOp(ast.Not(), check.test), [ast.comprehension(loop.target, iterated, [], 0)])
    return ast.fix_missing_locations(ast.copy_location(ast.Call(ast.Name("all", ast.Load()), [every], []), loop))


def _absent_from_whole(frame: Frame, iterated: ast.expr, test: ast.expr, name: str, truth: bool) -> ast.Compare | None:
    """For a text absent from every part of ``x.split(sep)`` (``any(".." in p for p in
    x.split("/"))`` found false): the test ``".." not in x``, which then holds too, since an
    occurrence in ``x`` lies within one part when the text shares no character with ``sep``;
    None for any other shape (a split with no or a computed separator, or a limit)."""
    if not (isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr == "split"
            and isinstance(iterated.func.value, ast.Name) and len(iterated.args) == 1 and not iterated.keywords):
        return None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _absent_from_whole(frame, iterated, test.operand, name, not truth)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.In, ast.NotIn))
            and isinstance(test.comparators[0], ast.Name) and test.comparators[0].id == name):
        return None
    separator, text = frame.expr(iterated.args[0]), frame.expr(test.left)
    if isinstance(test.ops[0], ast.In) is truth or not all(v.is_const and isinstance(v.const, str) and v.const for v in (separator, text)):
        return None
    if set(separator.const) & set(text.const):
        return None
    return ast.fix_missing_locations(ast.copy_location(ast.Compare(test.left, [ast.NotIn()], [iterated.func.value]), test))


def subset(frame: Frame, test: ast.expr, truth: bool) -> list[Any] | None:
    """What a test that a text's characters are a subset of an allowlist proves, in Python's
    set semantics: ``set(x) <= ALLOWED`` (``<`` too) or ``set(x).issubset(ALLOWED)`` found
    true, ``set(x) - ALLOWED`` found empty (false): every character of ``x`` is one of
    ``ALLOWED``'s (a text, or a container of one-character texts); None for another test.

    Args:
        frame: The frame the test is evaluated in.
        test: The test.
        truth: The truth it is found to have.
    """
    checked: ast.expr | None = None
    allowed: ast.expr | None = None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.LtE, ast.Lt)) and truth:
        checked, allowed = test.left, test.comparators[0]
    elif (isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "issubset"
          and len(test.args) == 1 and not test.keywords and truth):
        checked, allowed = test.func.value, test.args[0]
    elif isinstance(test, ast.BinOp) and isinstance(test.op, ast.Sub) and not truth:
        checked, allowed = test.left, test.right
    if not (isinstance(checked, ast.Call) and isinstance(checked.func, ast.Name) and checked.func.id in ("set", "frozenset")
            and len(checked.args) == 1 and isinstance(checked.args[0], ast.Name) and not checked.keywords):
        return None
    if "=" + checked.func.id not in frame.expr(checked.func).types:
        return None  # a function of the code's own named so
    assert allowed is not None
    members = _characters(frame.expr(allowed))
    kinds = patterns.alphabet_kinds(members, frozenset({"*"}), frozenset(frame.catalog.kinds)) if members else frozenset()
    return [(checked.args[0].id, kinds, f"the check that every character is allowed {ast.unparse(test)[:60]}", None)] if (
        kinds) else []


def _characters(allowed: Value) -> frozenset[str] | None:
    """The characters an allowlist holds: a text's, or a container's one-character texts."""
    if allowed.is_const and isinstance(allowed.const, str):
        return frozenset(allowed.const)
    items = list((allowed.items or {}).values())
    if items and all(item.is_const and isinstance(item.const, str) and len(item.const) == 1 for item in items):
        return frozenset(item.const for item in items)
    return None


def _members(frame: Frame, test: ast.expr, name: str, truth: bool) -> frozenset[str] | None:
    """For ``c in ALLOWED`` found true (or ``c not in ALLOWED`` found false) of the loop's own
    variable: the characters ``ALLOWED`` holds (a text, or a list of one-character texts);
    None for another test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _members(frame, test.operand, name, not truth)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)
            and test.left.id == name and isinstance(test.ops[0], (ast.In, ast.NotIn))):
        return None
    if truth is not isinstance(test.ops[0], ast.In):
        return frozenset()  # every character outside a set: any other character may be there
    return _characters(frame.expr(test.comparators[0])) or frozenset()


def _element(frame: Frame, iterable: Value, node: ast.expr) -> Value:
    """An element of ``iterable``: any of the items of a list or tuple known by position (their
    constants' common start kept), else what iterating it gives."""
    items = iterable.items
    if items and all(isinstance(key, int) for key in items):
        return join(*items.values())
    return frame.element(iterable, node)
