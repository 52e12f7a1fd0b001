"""Applying a summary at a call: the callee's parameter labels replaced by what the call
passed (``substitute``), each read along its access path from the argument (``project``).

A summary speaks of its function's parameters (``Label.param``, with the members read from
each: ``self.query`` is parameter 0 at ``("query",)``); at a call, each such label becomes the
argument's own taint read along that path, with the call's step and the callee's steps and
sanitisers. It is the substitution step of summary-based (functional, Sharir and Pnueli's)
interprocedural analysis.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from .definitions import FunctionInfo
from .interp import Frame
from .marks import NORMALISED, unmarked
from .values import DERIVED, Label, Value, add_step, clean, join, taint_only, with_items


def substitute(frame: Frame, value: Value, mapping: dict[int, Value], call: object, node: ast.AST,
               _read: dict[tuple[int, tuple[str, ...]], Value] | None = None, *,
               callee: FunctionInfo | None = None) -> Value:
    """Replaces the parameter labels of a summary's value by what the call passed: each becomes
    the argument (read along the label's access path), with the call and the callee's steps
    appended and the callee's sanitisers applied. Each path is read from an argument once per
    value (its labels and items' labels often share paths: ``self.query`` of many writes).
    With ``callee`` (the function called), a parameter label of another function, which a
    nested function's closure holds (``self`` of the method defining it), stays as it is: it
    is that function's parameter, replaced where that function's summary is applied."""
    labels = list(value.labels.values())
    if not value.items and not any(label.channel == "param" for label in labels):
        return value
    kept: list[Label] = []
    parts: list[Value] = []
    for label in labels:
        if label.channel != "param" or not _of_callee(label, callee):
            kept.append(label)
            continue
        actual = mapping.get(label.param)
        if actual is None:
            continue
        _read = {} if _read is None else _read
        read = _read.get((label.param, label.access))
        if read is None:
            read = project(frame, actual, label.access, node)
            if label.access and label.access[-1] == DERIVED:
                read = taint_only(read)  # a new value computed from the argument, not the argument's object
            _read[(label.param, label.access)] = read
        # What the callee returns is its own text: the caller's blocked-text and normalised
        # marks hold of it only as the callee re-establishes them (``label.cleaned``).
        moved = add_step(unmarked(read), call, *label.steps)  # type: ignore[arg-type]
        for by in label.sanitisers or (("a check",) if label.cleaned - {NORMALISED} else ("",) if label.cleaned else ()):
            moved = clean(moved, label.cleaned, by)
        parts.append(moved)
    base = Value(labels={label.key: label for label in kept}, types=value.types, const=value.const,
                 prefix=value.prefix, suffix=value.suffix, texts=value.texts, functions=value.functions,
                 choices=value.choices)
    if value.items:
        _read = {} if _read is None else _read
        base = with_items(base, {k: substitute(frame, v, mapping, call, node, _read, callee=callee)
                                 for k, v in value.items.items()})
    if not parts:
        return base
    if not kept and not value.types and not value.items and not value.functions and len(parts) == 1:
        result = parts[0]
    else:
        result = join(base, *(taint_only(part) if value.items is not None else part for part in parts))
    # one of a few constants (a parameter found in a constant list) whatever the argument held
    return replace(result, choices=value.choices) if value.choices else result


def _of_callee(label: Label, callee: FunctionInfo | None) -> bool:
    """True when a parameter label stands for a parameter of ``callee`` (any function's, without
    one): ``made_for`` it, for a module-level function too. A callback it was passed and called
    (a nested function reading its definer's parameter: ``work(cursor)`` given to a
    transaction runner) brings the definer's labels into its summary; they are replaced where
    the definer's summary is applied, not by the runner's arguments."""
    return callee is None or made_for(label, callee)


def made_for(label: Label, function: FunctionInfo) -> bool:
    """True when a parameter label was made for a parameter of ``function``: the parameter at
    its index, in its file, at its position. A label of another function's parameter reaches a
    function through a closure (a lambda that function returned, called after its summary was
    applied): it says nothing of this function's callers."""
    if not 0 <= label.param < len(function.params) or label.path != function.module.path:
        return False
    param = function.params[label.param]
    return (label.line, label.col) == (param.lineno, param.col_offset)


def project(frame: Frame, actual: Value, access: tuple[str, ...], node: ast.AST) -> Value:
    """Reads an access path (attributes, ``"name()"`` method results) from an argument."""
    current = actual
    for member in access:
        if member == DERIVED:
            continue  # computed from the argument (a copy, a parse): read further as the argument
        if member.endswith("()"):
            current = frame.method_result(current, member[:-2], node) if current.types else frame.derive(
                current.flatten(), member, frame.site(node))
            types = _method_source(frame, current, actual, member[:-2], node)
            if types is not None:
                current = types
        else:
            current = frame.attribute(current, member, node)
    return current


def _method_source(frame: Frame, current: Value, owner: Value, method: str, node: ast.AST) -> Value | None:
    for type_name in sorted(owner.types):
        for base in frame.program.class_mro(type_name):
            source = frame.catalog.sources_type.get(base)
            if source is not None and method in source.methods:
                return join(current, frame.source_value(source.channel, f"{method}() of {source.what}", frame.site(node)))
    return None
