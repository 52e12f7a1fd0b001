"""Loops, the loop half of the abstract interpreter's statements (``interp.Frame``): a loop runs
its body until the environment at its head is stable (at most ``LOOP_ROUNDS`` rounds): the same
after a round (``same_env``), or changed only in names its body does not read before assigning
them (``exposed_reads``, ``same_on``).

A name the body assigns at its top level before it reads it anywhere (``line = lines[i].strip()``,
then ``line`` used) never carries a value from one iteration into the next: whatever the head
holds for it, the body computes it again from the names it does read. When, after a round, the
head's state changed only in such names, another round would compute exactly what this one
did, so it is not run. This is the classic live-variable rule (a variable not live at the loop
head cannot change what the loop does; Aho, Lam, Sethi and Ullman, *Compilers*, 2nd ed., 9.2.5),
computed here conservatively from the syntax alone:

* only a top-level ``x = ...``, ``x: T = ...`` or ``x += ...`` (also ``a, b = ...``) defines a
  name; a name bound anywhere else (in a branch, a ``with``, a ``try``, an ``except ... as``, a
  walrus, a nested loop's target) stays exposed;
* every name loaded anywhere in a statement, nested functions, classes, lambdas and
  comprehensions included, counts as read when the statement starts, unless an earlier
  top-level statement defined it; ``del x`` and ``x += ...`` count as reads.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Iterable
from typing import Any

from .interp_statements import join_envs
from .quantified import kept_by_loop
from .values import Value
from .walks import walk

LOOP_ROUNDS = 3

_CACHE: weakref.WeakKeyDictionary[ast.AST, frozenset[str]] = weakref.WeakKeyDictionary()


def exposed_reads(loop: ast.For | ast.AsyncFor | ast.While) -> frozenset[str]:
    """The names the body of ``loop`` may read before assigning them in the same iteration.

    For a ``for`` loop the target's names are assigned before the body (from the same element
    every round) and the target's other loads (``for self.x in ...``) are reads; for a
    ``while`` loop every name its test loads is read. Computed once per loop node (cached
    weakly by node).

    Args:
        loop: The loop statement.

    Returns:
        A set of names; over-approximated (a name is left out only when it is certainly assigned
        first), never under.
    """
    cached = _CACHE.get(loop)
    if cached is not None:
        return cached
    if isinstance(loop, ast.While):
        reads, defined = set(_loads(loop.test)), set()
    else:
        reads, defined = set(_loads(loop.target)), set(_defined(loop.target))
    for statement in loop.body:
        reads.update(name for name in _loads(statement) if name not in defined)
        defined.update(_top_level_definitions(statement))
    found = frozenset(reads)
    _CACHE[loop] = found
    return found


def _loads(node: ast.AST) -> Iterable[str]:
    for inner in walk(node):
        if isinstance(inner, ast.Name) and not isinstance(inner.ctx, ast.Store):
            yield inner.id
        elif isinstance(inner, ast.AugAssign) and isinstance(inner.target, ast.Name):
            yield inner.target.id  # ``x += 1`` reads x (its target is a store)


def _stores(body: list[ast.stmt]) -> set[str]:
    """The names a loop body binds anywhere (``x = ...``, ``x += 1``, a loop target, a walrus)."""
    return {inner.id for statement in body for inner in walk(statement)
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store)}


def _top_level_definitions(statement: ast.stmt) -> Iterable[str]:
    if isinstance(statement, ast.Assign):
        for target in statement.targets:
            yield from _defined(target)
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and isinstance(statement.target, ast.Name):
        if not isinstance(statement, ast.AnnAssign) or statement.value is not None:
            yield statement.target.id


def _defined(target: ast.expr) -> Iterable[str]:
    """Names a plain assignment target binds for certain: a name, or a tuple or list of names
    (starred included); a target holding anything else (``a[i]``, ``self.x``) binds none."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        parts = [element.value if isinstance(element, ast.Starred) else element for element in target.elts]
        if all(isinstance(part, ast.Name) for part in parts):
            yield from (part.id for part in parts if isinstance(part, ast.Name))


def same_on(a: dict[str, Value], b: dict[str, Value], names: frozenset[str]) -> bool:
    """True when ``a`` and ``b`` hold equal values (traces included) for each of ``names``."""
    return all(a.get(name) is b.get(name) or a.get(name) == b.get(name) for name in names)


def same_env(a: dict[str, Value], b: dict[str, Value]) -> bool:
    """True when ``a`` and ``b`` bind the same names to values with the same taint origins, types,
    functions, constants and item keys: a loop whose head state is the same after a round is
    stable (traces may differ; the shorter is kept)."""
    if a.keys() != b.keys():
        return False
    for name, value in a.items():
        other = b[name]
        if value is other:
            continue
        if value.labels.keys() != other.labels.keys() or value.types != other.types or value.functions != other.functions:
            return False
        if value.is_const != other.is_const or value.is_const and value.const != other.const:
            return False  # a loop that steps a state through constants is not stable yet
        if (value.items is None) != (other.items is None):
            return False
        if value.items is not None and other.items is not None and value.items.keys() != other.items.keys():
            return False
    return True


class Loops:
    """``for`` and ``while`` loops, mixed into ``interp.Frame``."""

    def loop_for(self, node: ast.For | ast.AsyncFor) -> None:
        iterable = self.expr(node.iter)
        element = self.element(iterable, node.iter)
        self.loop(lambda: self.assign(node.target, element, node.iter), node.body, node.orelse,
                  reads=exposed_reads(node))
        every = kept_by_loop(node)
        if every is not None and self.alive:
            self.refine(every, True)

    def loop_while(self, node: ast.While) -> None:
        truth = self.truth(node.test)
        if truth is False:
            self.block(node.orelse)
            return

        def enter() -> None:
            self.refine(node.test, True)
        # Endless only where the test stays true: ``while n < 3`` is true on entry (n = 0), not
        # once the body has counted n up (a test reading a name the body binds may turn false).
        endless = truth is True and set(_loads(node.test)).isdisjoint(_stores(node.body))
        self.loop(enter, node.body, node.orelse, endless=endless, reads=exposed_reads(node))

    def loop(self, enter: Any, body: list[ast.stmt], orelse: list[ast.stmt], *, endless: bool = False,
             reads: frozenset[str] | None = None) -> None:
        """Runs a loop body until the environment is stable; the loop may run zero times. With
        ``reads`` (``loop_reads.exposed_reads``), a round after which only names outside it
        changed is the last: the next would compute the same (not for an endless loop, whose
        exits alone, not its head, are what follows it)."""
        entry = dict(self.env)
        exits: list[dict[str, Value]] = []
        state = entry
        for _ in range(LOOP_ROUNDS):
            self.env, self.alive = dict(state), True
            self.loops.append(([], []))
            enter()
            self.block(body)
            breaks, continues = self.loops.pop()
            exits.extend(breaks)
            ends = [self.env] if self.alive else []
            ends.extend(continues)
            new_state = join_envs(state, *ends) if ends else state
            if same_env(new_state, state):
                break
            if reads is not None and not endless and same_on(new_state, state, reads):
                state = new_state
                break
            state = new_state
        self.env, self.alive = state, True
        if endless:
            self.alive = bool(exits)
            self.env = join_envs(*exits) if exits else state
            return
        self.block(orelse)
        for env in exits:
            self.merge(env, True)
