"""What each element of an iterable is, keeping the shape of elements the engine knows.

``for name, cmd in [(a, "ls"), (b, "pwd")]`` binds ``cmd`` to one of two constants, whatever
``a`` and ``b`` hold; ``for i, part in enumerate(parts)`` binds ``i`` to a position, never to
data; ``for key, value in d.items()`` binds ``key`` to one of ``d``'s keys. An element is the
join of a list's or tuple's items (each known by position), and the iterators Python's builtins
build (``enumerate``, ``zip``, ``dict.items``) are lists of their elements' shape, so that
unpacking an element takes each position's own value (the language's semantics; the element
kept whole where its shape is not known).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .values import ADDED_ITEMS, EMPTY, UNKNOWN_KEYS, Value, constant, join, taint_only, typed

if TYPE_CHECKING:
    from .definitions import FunctionInfo
    from .interp import Frame
    from .program import Program

_ENUMERATE, _ZIP = frozenset({"=enumerate"}), frozenset({"=zip"})


def held(program: Program, iterable: Value) -> Value:
    """What a loop iterates: for a name of another module of the analysed code
    (``commands.commands``), the container that module binds it to
    (``Program.module_container``); else the value itself."""
    if iterable.items is None and len(iterable.types) == 1:
        (name,) = iterable.types
        found = program.module_container(name[1:]) if name.startswith("=") else None
        if found is not None:
            return found
    return iterable


def each(iterable: Value) -> Value:
    """One element of a value of no known type: the join of its items when it is a list, tuple
    or set built in the analysed code (items keyed by position), with what it holds beyond them;
    else its data, folded."""
    items = iterable.items
    if items and all(isinstance(key, int) for key in items):
        element = join(*items.values())
        return join(element, taint_only(Value(labels=iterable.labels))) if iterable.labels else element
    return taint_only(iterable.flatten())


def built(frame: Frame, callee: Value, receiver: Value | None, method: str | None, args: list[Value],
          kwargs: dict[str, Value], star: list[Value], node: ast.AST) -> Value | None:
    """The iterator a call of ``enumerate(xs, start=0)``, ``zip(*iterables, strict=False)`` or
    ``d.items()`` (``d`` a dict built in the analysed code, its keys known) builds: a list whose
    every element is a tuple of the positions' values; the list ``C.__subclasses__()`` builds
    (``_subclasses``); None for any other call, or one whose arguments are unpacked.

    Args:
        frame: Where the call is evaluated (``Frame.element`` gives an iterable's element).
        callee: The called value (the builtins are recognised by their reference).
        receiver: The object a method is called on, or None.
        method: The method name, or None.
        args, kwargs, star: The call's argument values (``star``: unpacked ones).
        node: The call, for the steps of an element read through ``__iter__``.
    """
    if star:
        return None
    if callee.types == _ENUMERATE and len(args) in (1, 2) and set(kwargs) <= {"start"}:
        return _of(Value(items={0: typed("int"), 1: frame.element(args[0], node)}))
    if callee.types == _ZIP and args and set(kwargs) <= {"strict"}:
        return _of(Value(items={i: frame.element(arg, node) for i, arg in enumerate(args)}))
    if method == "__subclasses__" and receiver is not None and not args and not kwargs:
        return _subclasses(frame.program, receiver)
    if method == "items" and receiver is not None and not args and not kwargs:
        items = receiver.items
        if not items or receiver.types or not all(isinstance(k, str) and not k.startswith(".") for k in items):
            return None
        pairs = [Value(items={0: constant(key) if key != UNKNOWN_KEYS else taint_only(value), 1: value})
                 for key, value in items.items()]
        held = [taint_only(Value(labels=receiver.labels))] if receiver.labels else []
        return _of(join(*pairs, *held))
    return None


def _subclasses(program: Program, receiver: Value) -> Value | None:
    """What ``C.__subclasses__()`` lists, ``C`` a class of the analysed code: the classes of
    ``C``'s module whose bases name it (Python's direct subclasses), as class objects, in a
    list of unknown length; None when ``C`` is no class of the code. As ``hooks`` reads a
    hierarchy, only ``C``'s own module is read: what the analysis finds never depends on which
    other modules it happened to load."""
    classes = [program.classes[c] for c in sorted(receiver.functions) if c in program.classes]
    if not classes:
        return None
    found = sorted(other.id for cls in classes for other in cls.module.classes.values() if cls.id in other.bases)
    return _of(Value(functions=frozenset(found)) if found else EMPTY)


def _of(element: Value) -> Value:
    """A list whose every element is ``element`` (its length not known)."""
    return Value(items={ADDED_ITEMS: element})


def called(function: FunctionInfo, returned: list[Value], yielded: list[Value]) -> Value:
    """What a call of ``function`` gives, from the values its body returned and yielded.

    A generator function's call (``function.generator``, PEP 255; ``async def`` with ``yield``,
    PEP 525) is an iterator whose every element is one of the yielded values; what it returns is
    only ``StopIteration``'s value, never an element. So ``for a, b in pairs()`` unpacks each
    yielded tuple by position instead of the join of the tuples' items. A decorated generator
    keeps the yielded values as the call's value: a decorator such as ``contextlib.contextmanager``
    hands the yielded value to ``with ... as x``, and the engine does not follow what a decorator
    makes of the function. Any other function gives the join of what it returned.

    Args:
        function: The function called.
        returned: The values of its ``return`` statements (and the implicit ``None``).
        yielded: The values of its ``yield`` expressions (a ``yield from``'s element).

    Returns:
        The call's value; EMPTY when there is none (a body cut short).
    """
    if function.generator and not function.decorators:
        return _of(join(*yielded)) if yielded else _of(EMPTY)
    values = returned + yielded
    return join(*values) if values else EMPTY


def dict_keys(value: Value) -> Value | None:
    """One key of a dict built in the analysed code whose keys are all known (text constants:
    a list's keys are its indexes, an object's ``".name"``), joined with the taint of what it
    holds under keys the engine does not know and of keys stored by a computed key (``UNKNOWN_KEYS``:
    a key computed from outside data stays tainted), or None when ``value`` is not such a dict."""
    if not value.items or value.types or not all(isinstance(k, str) and not k.startswith(".") for k in value.items):
        return None
    unknown = value.items.get(UNKNOWN_KEYS)
    return join(*(constant(k) for k in value.items if k != UNKNOWN_KEYS), taint_only(Value(labels=value.labels)),
                *([taint_only(unknown)] if unknown is not None else []))
