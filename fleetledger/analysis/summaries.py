"""Function summaries: computing them, and applying them at a call.

A summary (``facts.Summary``) describes a function in terms of its parameters: the function is
interpreted once with each parameter bound to a ``param`` label; whatever those labels reach
(the return value, a sink, an attribute of a parameter) is what the function does with its
arguments. At a call, ``apply`` substitutes the call's arguments for the labels: an argument
carrying outside data that the summary shows reaching a sink becomes a flow at that sink, with
the caller's steps, the call, and the callee's steps in its trace; a sanitiser applied inside
the callee cleans the argument's labels for the kinds it covers.

A parameter label records the attributes and methods read from it (``request.GET`` is
parameter 0 with access ``("GET",)``); when applied, the access path is resolved against the
argument's value, so a typed request object passed to a helper yields its sources there.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from . import deferred_calls, entries, iterators, mutations, passed_functions, predicates, summary_sharing
from .budget import BudgetExceeded
from .definitions import FunctionInfo
from .dependencies import Dependencies
from .argv import program_part
from .facts import Site, SinkHit, Summary, passed_to, step
from .interp import Frame
from .interp_expressions import callable_part
from .substitution import substitute
from .switch_values import at_call
from .values import ADDED_ITEMS, UNKNOWN_KEYS, EMPTY, Label, Value, add_step, join, of_labels, taint_only, with_items

if TYPE_CHECKING:
    from .program import Program

MAX_CALL_DEPTH = 32
"""Summaries computed inside summaries at most this deep (deeper calls use taint in, taint out)."""
MAX_ROUNDS = 2
"""Rounds of computing a recursive cycle's summaries towards their fixed point."""


def summary(program: Program, function: FunctionInfo, depth: int = 0) -> Summary:
    """Returns the function's summary, computing it on first use.

    A function whose summary is being computed (a recursive call) gets the summary of the
    round before, incomplete (none in the first round); the head of such a cycle is computed
    again until its summary stops changing (at most ``MAX_ROUNDS`` rounds, Kleene iteration
    towards the least fixed point), so what a cycle's functions reach does not depend on which
    one the analysis entered first. A function cut short by the work budget gets an incomplete
    summary and a note. A summary another analysis of the process computed is adopted where
    computing it here would give the same (``summary_sharing``).
    """
    known = program.summaries.get(function.id)
    program.deepest = max(program.deepest, depth)
    if known is not None:
        deps = program.summary_deps.get(function.id)
        if deps is not None:
            program.depend(deps)
        if function.id in program.unstable:
            # Made inside a cycle, it depends on where the cycle was entered: so does every
            # summary that uses it (unless made inside it: ``summary_sharing.read_made``).
            program.unstable.update(program.stack)
            summary_sharing.read_made(program, function.id)
        return known
    shared = summary_sharing.adopt(program, function, depth, MAX_CALL_DEPTH)
    if shared is not None:
        return shared
    if depth > MAX_CALL_DEPTH:
        program.note(f"{function.module.path}: {function.qualname}() not followed: the call chain to it is deeper "
                     f"than {MAX_CALL_DEPTH} calls (its arguments' data is assumed to reach its result; its sinks are not checked)")
    if function.id in program.in_progress or depth > MAX_CALL_DEPTH:
        # A recursive call (or one too deep): every summary being computed from the cycle's
        # head up depends on where the computation started, so none of them is shared alone;
        # those above the head depend on the analysis (the head's summary of the round before).
        # The call takes that summary (none in the first round).
        stack = program.stack
        start = stack.index(function.id) if function.id in stack else 0
        program.unstable.update(stack[start:])
        summary_sharing.depends_from(program, start + 1 if function.id in stack else 0)
        if function.id in program.in_progress:
            program.reentered.add(function.id)
        return program.provisional.get(function.id) or Summary(returns=EMPTY, complete=False)
    nested = program.iterating > 0
    reentered_before = frozenset(program.reentered)
    outer, program.deepest = program.deepest, depth
    for round_number in range(1, MAX_ROUNDS + 1):
        made = len(program.made)
        specialised_made = len(program.specialised)
        program.dependent.discard(function.id)
        program.iterating += round_number > 1
        try:
            result, deps = compute(program, function, depth)
        finally:
            program.iterating -= round_number > 1
        if function.id not in program.reentered:
            break
        # The head of a cycle: what its recursive calls took (the round before) may miss what
        # it does. Compute it again with this round's summary, and every summary of the cycle
        # made meanwhile, until nothing changes (a fixed point) or the rounds run out.
        program.reentered.discard(function.id)
        previous = program.provisional.get(function.id)
        if nested or round_number == MAX_ROUNDS or not _adds(result) or previous is not None and _shape(
                previous) == _shape(result):
            # A cycle met while another head's rounds run is not iterated itself (it is
            # computed again in each of those rounds: nesting must not multiply the cost); a
            # summary that adds nothing to what a recursive call assumed (the arguments' data
            # in the result) needs no other round.
            break
        program.provisional[function.id] = replace(result, complete=False)
        for fid in program.made[made:]:
            if fid in program.unstable:
                program.summaries.pop(fid, None)
        del program.made[made:]
    height, program.deepest = program.deepest - depth, max(outer, program.deepest)
    program.provisional.pop(function.id, None)
    program.summaries[function.id] = result
    program.summary_deps[function.id] = deps
    program.made.append(function.id)
    summary_sharing.made(program, function.id)
    if nested and function.id in program.unstable:
        program.dependent.add(function.id)  # its cycle was not iterated: it is this analysis's
    summary_sharing.offer(program, function, result, deps, height, since=made, specialised_since=specialised_made,
                          reentered_before=reentered_before)
    program.dependent.discard(function.id)
    return result


def specialised(program: Program, function: FunctionInfo, callables: dict[int, Value], depth: int) -> Summary:
    """Returns the function's summary for calls that pass it these functions, which it calls
    (``run(os.system, cmd)`` where ``run(f, x)`` calls ``f(x)``): computed with those
    parameters bound to the functions as well as to their labels, so what the function does
    through them (a sink, a function of the code) is in the summary. Kept for this analysis,
    per function and functions passed.

    Args:
        program: The analysis.
        function: The function called.
        callables: Parameter index -> the functions passed there (``passed_functions.called``).
        depth: Summaries being computed below this one.

    Returns:
        The summary; the plain one (``summary``) for a recursive call.
    """
    if function.id in program.in_progress:
        return summary(program, function, depth)
    key = (function.id, tuple(sorted((i, passed_functions.key(v)) for i, v in callables.items())))
    return program.specialised_summary(key, lambda: compute(program, function, depth, callables))


def compute(program: Program, function: FunctionInfo, depth: int, callables: dict[int, Value] | None = None, *,
             bound: dict[int, Value] | None = None) -> tuple[Summary, Dependencies]:
    """Returns ``(summary, what it depends on)``, not kept (callers keep it): interprets the
    function with its parameters bound to parameter labels (and, for the ``callables``, to the
    functions passed there as well; the ``bound`` ones to their value instead). Raises
    ``BudgetExceeded`` when the work budget runs out (a note says which function)."""
    program.in_progress.add(function.id)
    program.stack.append(function.id)
    summary_sharing.started(program)
    with program.tracking() as deps:
        deps.functions.add(function.id)
        try:
            program.depend(function.module.deps)
            env = entries.parameter_values(program, function)
            for index, passed in (callables or {}).items():
                name = function.params[index].arg  # (an instance's held functions: as its only known items)
                env[name] = replace(join(env[name], passed), items=passed.items) if passed.items else join(env[name], passed)
            for index, value in (bound or {}).items():
                env[function.params[index].arg] = value
            frame = Frame(program, function.module, function, env, summarising=True, depth=depth)
            complete = True
            try:
                if isinstance(function.node, ast.Lambda):
                    frame.returned.append(frame.expr(function.node.body))
                    predicates.record_return(frame, function.node.body, frame.returned[-1])
                else:
                    frame.block(function.node.body)
                    if frame.alive and not function.generator:
                        frame.returned.append(Value(const=None))
                        predicates.record_return(frame, None, frame.returned[-1])
                    frame.sink_returns()
            except BudgetExceeded:
                complete = False
                program.note(f"{function.module.path}: {function.qualname}() not analysed to the end (work budget used up)")
                raise
            except RecursionError:
                complete = False
                program.note(f"{function.module.path}: {function.qualname}() not analysed to the end (it nests too deep for the engine)")
            result = Summary(returns=iterators.called(function, frame.returned, frame.yielded), sinks=list(frame.hits.values()),
                             writes=frame.writes, complete=complete, global_stores=frame.global_stores,
                             library_stores=frame.library_stores, argument_checks=frame.argument_checks,
                             deferred=tuple(frame.deferred), raises=join(*frame.raised) if frame.raised else None)
        finally:
            program.in_progress.discard(function.id)
            program.stack.pop()
            program.started.pop()
            if function.id in program.unstable:
                program.unstable.update(program.stack)
    return result, deps


def _adds(found: Summary) -> bool:
    """True when a summary says more than an incomplete empty one (a call then assumes its
    arguments' data reaches the result): a sink, a write, or anything but parameters' data in
    its result. (What it raises is left out: a cycle is not iterated again for that alone, which
    cost 2% more work on Django for exceptions the first round already carries.)"""
    return bool(found.sinks or found.writes or found.returns.types or any(
        label.channel != "param" for label in found.returns.all_labels()))


def _shape(found: Summary) -> tuple[object, ...]:
    """What a summary says, without the roads its labels took (which grow with each round of
    a cycle): the origins its result carries, the sinks each origin reaches, its writes."""
    def origins(value: Value) -> frozenset[tuple[object, ...]]:
        return frozenset(label.key for label in value.all_labels()) | frozenset(value.types)

    return (origins(found.returns), frozenset((hit.site, hit.sink.kind, hit.role, origins(hit.value)) for hit in found.sinks),
            frozenset((key, origins(value)) for key, value in found.writes.items()), found.complete,
            frozenset((name, origins(value), value.functions) for name, value in found.global_stores.items()),
            frozenset((key, origins(value)) for key, value in found.library_stores.items()),
            origins(found.raises) if found.raises is not None else None)


def bind_arguments(function: FunctionInfo, args: list[Value], kwargs: dict[str, Value],
                   star: list[Value]) -> dict[int, Value]:
    """Maps a call's arguments to the function's parameter indexes (unpacked arguments go to
    every parameter they could fill)."""
    node = function.node
    positional = [*node.args.posonlyargs, *node.args.args]
    mapping: dict[int, Value] = {}
    index_of = {param.arg: i for i, param in enumerate(function.params)}
    for i, value in enumerate(args):
        if i < len(positional):
            mapping[i] = value
        elif node.args.vararg is not None:
            vi = index_of[node.args.vararg.arg]
            mapping[vi] = join(mapping.get(vi, EMPTY), taint_only(value.flatten()))
    for name, value in kwargs.items():
        if name in index_of and function.params[index_of[name]] is not node.args.vararg:
            mapping[index_of[name]] = value
        elif node.args.kwarg is not None:
            ki = index_of[node.args.kwarg.arg]
            mapping[ki] = join(mapping.get(ki, EMPTY), Value(items={name: value}))
    if star:
        spread = join(*star)
        for i in range(len(function.params)):
            if i not in mapping:
                mapping[i] = spread
    return mapping


def carries_data(program: Program, values: list[Value]) -> bool:
    """True when some value carries outside data, a weak random number or a parameter label
    (a value of unknown origin does not count), is an object whose members are outside data
    (a framework's request: ``[[source]]`` of its type), or is a function of the analysed code
    (a callback the callee may call)."""
    if any(label.channel != "opaque" for value in values for label in value.all_labels()):
        return True
    if any(value.functions for value in values):
        return True  # a callback of the analysed code: what it reads reaches the callee's sinks
    return any(program.catalog.sources_type.get(base) is not None
               for value in values for type_name in value.types for base in program.class_mro(type_name))


def root_dependent(program: Program) -> None:
    """Marks every summary being computed, and every module whose body is being interpreted,
    as depending on which file is analysed: it applied
    a function (or built an object) of that file where another file's would have been left
    opaque. Such summaries are kept for this analysis only, never shared (found on Django: a
    summary of ``BaseDatabaseWrapper.__init__`` made while its own file was analysed hid a
    flow in the SQLite backend analysed next by the same worker)."""
    program.unstable.update(program.stack)
    summary_sharing.depends_from(program, 0)
    program.root_dependent.update(program.running)


def apply(frame: Frame, function: FunctionInfo, args: list[Value], kwargs: dict[str, Value], star: list[Value],
          node: ast.Call, site: Site) -> Value:
    """Applies a function's summary at a call in ``frame``; returns the call's value.

    A call of another module's function that passes it no data the engine follows (outside
    data, a weak random number, a parameter) takes only the summary's result: the types,
    constants and outside data the callee returns (a helper returning a library connection or
    a request parameter); its sinks and writes are left to its own module's analysis.
    Summaries are shared between the analyses of one process, so each function of the import
    graph is interpreted once per worker, not once per file.

    Applying the sinks depends on which file is being analysed (``Program.root``), so a summary
    being computed when it is made for a function of the analysed file is not shared with other
    analyses (``_root_dependent``).
    """
    inputs = [*args, *kwargs.values(), *star]
    data = carries_data(frame.program, inputs)
    alone = not data and function.module.path != frame.program.root
    if not alone and not data:
        root_dependent(frame.program)
    mapping = bind_arguments(function, args, kwargs, star)
    callables = passed_functions.called(function, mapping)
    # (a class method's result is of the class it is called on, data passed or not)
    found = specialised(frame.program, function, callables, frame.depth + 1) if callables and (
        not alone or function.is_classmethod) else (at_call(frame.program, function, mapping, frame.depth + 1, compute)
                                                    or summary(frame.program, function, frame.depth + 1))
    apply_defaults(frame, function, mapping)
    call = passed_to(site, function.name)
    result = substitute(frame, found.returns, mapping, call, node, callee=function)
    if found.raises is not None:  # for the caller's handlers (``Statements.try_``)
        frame.raised.append(substitute(frame, found.raises, mapping, call, node, callee=function))
    if not result.types and not result.tainted():
        # The annotation is the author's claim: it types an object the code does not show
        # (a hook, a client), never data, which a false claim would launder through the
        # claimed class's methods.
        result = replace(result, types=entries.returned_types(frame.program, function))
    if found.deferred:  # (also alone: the callee's own outside data, at a method of what is passed)
        read_paths: dict[tuple[int, tuple[str, ...]], Value] = {}  # each path read from an argument once
        deferred_calls.apply(frame, found.deferred,
                             lambda v: substitute(frame, v, mapping, call, node, read_paths, callee=function))
    if alone:
        # Nothing the engine follows goes in, so the callee's sinks and writes add nothing its
        # own module's analysis does not report; its result still says what comes out: the
        # library types it returns (a connection, a parser), constants, and the outside data it
        # reads itself (a helper returning a request parameter).
        return result if found.complete else join(result, opaque_result(function, site))
    for hit in found.sinks:
        resink(frame, hit, mapping, call, node, callee=function)
    _write_back(frame, function, found, mapping, call, node)
    if found.global_stores and function.module is frame.module:
        _store_globals(frame, function, found, mapping, call, node)
    if not found.complete:
        everything = join(*(taint_only(v.flatten()) for v in mapping.values()))
        result = join(result, add_step(everything, step(site, f"through {function.name}() (not fully analysed)")))
    return result


def resink(frame: Frame, hit: SinkHit, mapping: dict[int, Value], call: object, node: ast.AST, *,
           callee: FunctionInfo | None = None) -> None:
    """Reports at a call what a callee's parameters carried to one of its sinks: the hit's
    value with the call's arguments substituted. For a sink of the program a vector starts
    (``subprocess.Popen(argv)`` in a helper), the program part is taken again from what the
    call passed: a helper given ``["git", "clone", "--", url]`` starts ``git``, not ``url``
    (and ``url`` after ``"--"`` is no option of git's either: ``argv.option_part``), and a
    URL it fetches is read again from the call's command (``fetchers.fetched_part``).
    ``callee`` as for ``substitute``."""
    value = substitute(frame, hit.value, mapping, call, node, callee=callee)
    if hit.sink.program or hit.sink.kind == "command":  # curl or wget given a URL the call chose
        frame.fetch_sink(hit.sink, hit.site, value, hit.role)
    if hit.sink.program:
        frame.option_sink(hit.sink, hit.site, value, hit.role)
        value = program_part(value)
    frame.sink_value(hit.sink, hit.site, value, hit.role)


def apply_defaults(frame: Frame, function: FunctionInfo, mapping: dict[int, Value]) -> None:
    """Gives parameters that the call did not pass their default values (constants mostly)."""
    node = function.node
    positional = [*node.args.posonlyargs, *node.args.args]
    defaults = node.args.defaults
    offset = len(positional) - len(defaults)
    for i, default in enumerate(defaults):
        index = offset + i
        if index not in mapping and isinstance(default, ast.Constant):
            mapping[index] = frame.expr(default)
    for param, default in zip(node.args.kwonlyargs, node.args.kw_defaults):
        index = function.params.index(param)
        if index not in mapping and isinstance(default, ast.Constant):
            mapping[index] = frame.expr(default)


def _write_back(frame: Frame, function: FunctionInfo, found: Summary, mapping: dict[int, Value], call: object,
                node: ast.Call) -> None:
    """Stores what the callee wrote into its parameters' attributes into the caller's
    variables passed for them (``obj.set(x)`` storing ``self.x``)."""
    if not found.writes:
        return
    passed: dict[int, ast.expr] = {}
    if isinstance(node.func, ast.Attribute) and function.bound:
        passed[0] = node.func.value
        offset = 1
    else:
        offset = 0
    for i, arg in enumerate(node.args):
        passed[i + offset] = arg
    for (index, attr), value in found.writes.items():
        target = passed.get(index)
        stored = substitute(frame, value, mapping, call, node, callee=function) if target is not None or (
            index in mapping and frame.summarising) else EMPTY
        if target is not None and mutations.write_back(frame, target, attr, stored):
            continue
        if index in mapping and frame.summarising:
            frame.program.budget.spend()
            # Only a parameter passed itself: what a callee stores on ``self._backend`` is the
            # backend's, not ``self``'s (a label with an access path is an attribute of it).
            params = {label.param for label in mapping[index].labels.values() if label.channel == "param" and not label.access}
            if params:
                for param in sorted(params):
                    frame.writes[(param, attr)] = join(frame.writes.get((param, attr), EMPTY), stored)


def _store_globals(frame: Frame, function: FunctionInfo, found: Summary, mapping: dict[int, Value], call: object,
                   node: ast.Call) -> None:
    """What a callee stored in a global container of its module (``REGISTRY[name] = fn``): at
    a call in the module's body (a decorator applied to a definition), the functions the call
    passed join the global's items under a key the engine does not know, so a dispatch through
    it (``REGISTRY[kind](value)``) may call them; in a summary being computed, the store is the
    caller's too (a decorator that registers through a helper)."""
    for (name, by_key), stored in found.global_stores.items():
        value = substitute(frame, stored, mapping, call, node, callee=function)
        if frame.function is not None:
            if frame.summarising:
                frame.global_stores[(name, by_key)] = join(frame.global_stores.get((name, by_key), EMPTY), value)
            continue
        part = callable_part(value)
        current = frame.env.get(name)
        if part is None or current is None or current.types:
            continue  # not a container built here (``[]`` and ``{}`` have no items yet)
        item = UNKNOWN_KEYS if by_key else ADDED_ITEMS
        frame.env[name] = with_items(current, {item: join((current.items or {}).get(item, EMPTY), part)})


def opaque_result(function: FunctionInfo, site: Site) -> Value:
    """The value of a call whose callee is not summarised: of unknown origin."""
    return of_labels([Label(channel="opaque", what=f"the result of {function.qualname}() in {function.module.path}",
                            path=site.path, line=site.line, col=site.col)])
