"""Sharing function summaries between the analyses of one worker process, without letting a
file's result depend on which files that worker analysed before it.

A summary computed in one analysis (one ``Program``) is worth reusing in the next: the
functions of an import graph are called from many files. But a summary is a function of the
code alone only when its computation did not depend on the analysis around it. It does when it:

- called a function whose summary was being computed around it (a recursive cycle entered
  above it: it took that function's summary of the round before);
- read a summary made before it started inside a cycle (which depends on where that cycle was
  entered), or a summary made for some calls only (``Program.specialised``);
- applied a function of the analysed file (``summaries.root_dependent``), or was cut by the
  call-depth limit, or was computed while a cycle's later rounds ran.

Such a computation is *dependent* (``Program.dependent``) and kept for its analysis only.
Every other complete one is *closed*: it is shared, and with it the summaries it made inside
(the members of the cycles it contains, which depend on it having entered them), so that
adopting it leaves the analysis as computing it would have (``adopt``). Sharing the summaries
of cycles this way, not only of functions outside any cycle, is what makes the cycles of a
large code base (Django's query compiler) computed once per worker instead of once per file.

An analysis adopts a shared summary only where computing it afresh would give the same: none of
the functions whose summaries it read (``Dependencies.functions``) is being computed there, was
made there inside a cycle, or has a summary for some calls only; the analysis is not in a
cycle's later rounds; and the call chain stays within ``summaries.MAX_CALL_DEPTH``. This is the
usual condition for reusing a memoised result (its inputs are the same), with the inputs made
explicit; tests analyse files in every order and compare.

Adopting does not repeat two things computing does: it spends none of the work budget (an
analysis that adopts may finish where computing would have stopped at ``engine.WORK_UNITS``,
and says so when it does not), and it loads the modules the summary's computation loaded in
the order of their names, which decides only which modules a program past
``program.MAX_MODULES`` leaves out (noted in its report).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .definitions import FunctionInfo
from .dependencies import Dependencies
from .facts import Summary

if TYPE_CHECKING:
    from .program import Program


@dataclass(frozen=True)
class Shared:
    """A closed summary and what its computation left in the analysis.

    Attributes:
        summary: The function's summary.
        deps: What it depends on, flattened (``functions`` are the summaries it read).
        height: How many calls deeper than the function its computation went.
        members: ``(function id, summary, dependencies, made inside a cycle)`` of each summary
            its computation made, in the order made (empty when none was made inside a cycle:
            those are shared on their own).
        specialised: ``(key, entry, volatile)`` of the ``Program.specialised`` entries its
            computation made, in order (``made_specialised``).
        reentered: Functions its computation left marked as called recursively.
        unstable: Whether it was itself made inside a cycle.
    """

    summary: Summary
    deps: Dependencies
    height: int
    members: tuple[tuple[str, Summary, Dependencies, bool], ...] = ()
    specialised: tuple[tuple[tuple[object, ...], tuple[Summary, Dependencies], bool], ...] = ()
    reentered: frozenset[str] = frozenset()
    unstable: bool = False


_SHARED: dict[tuple[str, ...], Shared] = {}
MAX_SHARED = 50_000
"""Shared summaries kept per process (cleared when full), keyed by the analysis scope (the files
it may read, at their hashes, and the models), the function and its module's hash."""


def started(program: Program) -> None:
    """Notes that the computation of the summary on top of ``program.stack`` starts now."""
    program.serial += 1
    program.started.append(program.serial)


def made(program: Program, key: object) -> None:
    """Notes that the summary (or specialised entry) under ``key`` is made now."""
    program.serial += 1
    program.born[key] = program.serial


def made_specialised(program: Program, key: tuple[object, ...]) -> None:
    """Notes that the ``Program.specialised`` entry under ``key`` (its function's id first) is
    made now. Made inside a cycle or dependent (which the marks of its function's id show, or
    earlier computations of the same function: then it is only taken for one), it is read as
    a summary made inside a cycle is (``read_made``), and a shared summary that read its
    function is not adopted where it exists (``adopt``)."""
    fid = str(key[0])
    if fid in program.unstable or fid in program.dependent:
        program.specialised_volatile.add(key)
        program.specialised_functions.add(fid)
    made(program, key)


def depends_from(program: Program, index: int) -> None:
    """Marks the computations at ``program.stack[index:]`` dependent (module docstring)."""
    program.dependent.update(program.stack[index:])


def read_made(program: Program, key: object) -> None:
    """Notes a read of a summary made inside a cycle (or for some calls only), under ``key``:
    the computations that started after it was made depend on it; those it was made inside
    do not (it is theirs)."""
    born = program.born.get(key, 0)
    depends_from(program, bisect.bisect_right(program.started, born))


def adopt(program: Program, function: FunctionInfo, depth: int, max_depth: int) -> Summary | None:
    """Returns the function's shared summary, installed in ``program`` as computing it at
    ``depth`` (calls deeper than ``max_depth`` are not followed) would have left it, or None
    when there is none or computing it there could give another (module docstring)."""
    key = program.shared_key(function)
    shared = _SHARED.get(key) if key is not None else None
    if shared is None or function.module.path == program.root:
        # The file being analysed computes its own functions' summaries afresh: what a
        # summary finds inside its function is reported only while it is computed.
        return None
    reads = shared.deps.functions
    if (depth + shared.height > max_depth or program.iterating and shared.unstable
            or not (reads.isdisjoint(program.in_progress) and reads.isdisjoint(program.unstable)
                    and reads.isdisjoint(program.specialised_functions))):
        return None
    for fid, summary, deps, unstable in shared.members:
        _install(program, fid, summary, deps, unstable)
    for entry_key, entry, volatile in shared.specialised:
        program.specialised[entry_key] = entry
        if volatile:
            program.specialised_volatile.add(entry_key)
            program.specialised_functions.add(str(entry_key[0]))
        made(program, entry_key)
    program.reentered.update(shared.reentered)
    _install(program, function.id, shared.summary, shared.deps, shared.unstable)
    if shared.unstable:
        program.unstable.update(program.stack)
    program.deepest = max(program.deepest, depth + shared.height)
    program.depend(shared.deps)
    # The modules its computation loaded are loaded here too, as computing it would have: the
    # classes its result names are then known to this analysis (their methods resolve).
    for name, path in sorted(shared.deps.names.items()):
        if path is not None:
            program.find_module(name)
    return shared.summary


def _install(program: Program, fid: str, summary: Summary, deps: Dependencies, unstable: bool) -> None:
    program.summaries[fid] = summary
    program.summary_deps[fid] = deps
    program.made.append(fid)
    made(program, fid)
    if unstable:
        program.unstable.add(fid)


def offer(program: Program, function: FunctionInfo, result: Summary, deps: Dependencies, height: int, *,
          since: int, specialised_since: int, reentered_before: frozenset[str]) -> None:
    """Shares a summary just computed, if its computation was closed and complete.

    Args:
        program: The analysis that computed it.
        function: The function.
        result: Its summary; ``deps`` what the computation depended on.
        height: How many calls deeper than the function its computation went.
        since: ``len(program.made)`` when its last round started: the summaries made after
            are its members.
        specialised_since: ``len(program.specialised)`` then.
        reentered_before: ``program.reentered`` when it started.
    """
    key = program.shared_key(function)
    if key is None or not result.complete or function.id in program.dependent:
        return
    unstable = function.id in program.unstable
    members: tuple[tuple[str, Summary, Dependencies, bool], ...] = ()
    specialised: tuple[tuple[tuple[object, ...], tuple[Summary, Dependencies], bool], ...] = ()
    if unstable:
        members = tuple((fid, program.summaries[fid], _flat(program, program.summary_deps[fid]), fid in program.unstable)
                        for fid in program.made[since:] if fid != function.id and fid in program.summaries)
        specialised = tuple((k, (v[0], _flat(program, v[1])), k in program.specialised_volatile)
                            for k, v in list(program.specialised.items())[specialised_since:])
    if len(_SHARED) >= MAX_SHARED:
        _SHARED.clear()
    _SHARED[key] = Shared(summary=result, deps=_flat(program, deps), height=height, members=members,
                          specialised=specialised, reentered=frozenset(program.reentered - reentered_before),
                          unstable=unstable)


def _flat(program: Program, deps: Dependencies) -> Dependencies:
    """``deps`` flattened, once per analysis: the members of a cycle are members of the shared
    summary of each function above it that is shared, up to ``summaries.MAX_CALL_DEPTH`` of
    them."""
    if not deps.parts:
        return deps
    known = program.flat_deps.get(id(deps))
    if known is None or known[0] is not deps:
        known = program.flat_deps[id(deps)] = (deps, deps.flattened())
    return known[1]
