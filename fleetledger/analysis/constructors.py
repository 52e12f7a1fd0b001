"""Objects of the analysed code's classes: ``Class(...)`` evaluated through ``__init__``'s summary
(or a dataclass's generated one), and the library objects ``__init__`` stores on the instance,
which the class's other methods read from ``self`` as objects of those types.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .facts import Site, passed_to
from .interp import Frame
from .passed_types import passed_types
from .substitution import substitute
from .summaries import apply_defaults, bind_arguments, carries_data, resink, root_dependent, summary
from .values import Value, join, taint_only, with_items

if TYPE_CHECKING:
    from .program import Program


def construct(frame: Frame, class_id: str, args: list[Value], kwargs: dict[str, Value], star: list[Value],
              node: ast.Call, site: Site) -> Value:
    """Evaluates ``Class(...)`` for a class of the analysed code: a new object of that type
    whose attributes are what ``__init__`` stores from the arguments."""
    program = frame.program
    obj = Value(types=frozenset({class_id}), items={})
    alone = False
    if not carries_data(program, [*args, *kwargs.values(), *star]):
        if program.classes[class_id].module.path != program.root:
            # As for a function (``apply``): what ``__init__`` stores of what it reads itself
            # is kept; its sinks are left to its own module's analysis.
            alone = True
        else:
            root_dependent(program)
    init = program.method(class_id, "__init__")
    if alone and init is None:
        return obj
    fields = _dataclass_fields(frame, class_id) if init is None else None
    if fields is not None:
        # A dataclass's generated __init__ stores each argument in the field of its name or place.
        stored = {"." + name: value for name, value in zip(fields, args)}
        stored.update({"." + name: value for name, value in kwargs.items() if name in fields})
        return with_items(obj, stored) if stored else obj
    if init is None:
        library = [b for b in program.class_mro(class_id)[1:] if b not in program.classes]
        for base in library:
            result = frame.call_library(base, None, args, kwargs, star, node)
            if result is not None:
                return join(obj, taint_only(result))
        return obj
    function = program.functions[init]
    found = summary(program, function, frame.depth + 1)
    mapping = bind_arguments(function, [obj, *args], kwargs, star)
    apply_defaults(frame, function, mapping)
    call = passed_to(site, program.classes[class_id].name)
    for hit in found.sinks if not alone else ():
        resink(frame, hit, mapping, call, node, callee=function)
    stored = {"." + attr: substitute(frame, value, mapping, call, node, callee=function)
              for (index, attr), value in found.writes.items() if index == 0}
    return with_items(obj, stored) if stored else obj


def stored_types(frame: Frame, class_id: str, attr: str) -> frozenset[str]:
    """The types ``__init__`` (its own or inherited) stores in an instance's attribute, from its
    summary's writes to its first parameter, without their data (a caller's arguments are not
    this method's). For a class without ``__init__`` (its objects are made by its subclasses'),
    what the ``__init__`` of its subclasses in its module stores there (``MAX_SUBCLASSES`` of
    them: a base class's method reads the ``self.agent`` each HTTP client subclass makes); the
    same for an attribute the class's own ``__init__`` stores nothing typed in (``self.opener =
    None``, a placeholder its subclasses' constructors fill: ``self.opener = tarfile.open``).
    What ``__init__`` stores from a parameter as it is has the types the class's constructions
    in its module pass there (``_passed``). Empty while that ``__init__`` is being summarised (a
    read of ``self.x`` inside it)."""
    program = frame.program
    init = program.method(class_id, "__init__")
    if init is not None:
        own = _stored(frame, init).get(attr, frozenset()) or _passed(frame, class_id, init, attr)
        if own or init in program.in_progress:
            return own
    found: frozenset[str] = frozenset()  # a base made only through its subclasses' constructors, or
    for sub in _subclasses(program, class_id):  # one whose constructor leaves a placeholder (``= None``)
        found |= _stored(frame, program.classes[sub].methods["__init__"]).get(attr, frozenset())
    return found


MAX_SUBCLASSES = 8
"""Subclasses whose ``__init__`` stores a base class's method sees, at most."""


def _subclasses(program: Program, class_id: str) -> tuple[str, ...]:
    """The subclasses of a class of the analysed code among its module's classes that define
    ``__init__`` (at most ``MAX_SUBCLASSES``). The module's classes are indexed by base once per
    count of its classes, one walk of the bases of each class defining ``__init__`` (a module of
    thousands of classes, each the subclass of the one before, costs one pass)."""
    info = program.classes.get(class_id)
    if info is None:
        return ()
    module = info.module
    known = program.subclasses.get(module.path)
    if known is None or known[0] != len(module.classes):
        index: dict[str, list[str]] = {}
        for sub, sub_info in module.classes.items():
            if "__init__" in sub_info.methods:
                for base in program.class_mro(sub)[1:]:
                    if len(index.setdefault(base, [])) < MAX_SUBCLASSES:
                        index[base].append(sub)
        known = program.subclasses[module.path] = (len(module.classes), {b: tuple(s) for b, s in index.items()})
    return known[1].get(class_id, ())


def _stored(frame: Frame, init: str) -> dict[str, frozenset[str]]:
    """The types an ``__init__`` (a function id) stores on its instance: ``{attribute: types}``."""
    program = frame.program
    if init in program.in_progress or init not in program.functions:
        return {}
    found = summary(program, program.functions[init], frame.depth + 1)
    return {attr: frozenset(value.types) for (index, attr), value in found.writes.items()
            if index == 0 and value.types}


def _passed(frame: Frame, class_id: str, init: str, attr: str) -> frozenset[str]:
    """For an attribute ``__init__`` stores from its own parameters as they are (``self.logger
    = logger``): the types its module's constructions of the class pass there
    (``passed_types``)."""
    program = frame.program
    function = program.functions.get(init)
    if function is None or init in program.in_progress:
        return frozenset()
    stored = summary(program, function, frame.depth + 1).writes.get((0, attr))
    params = sorted({label.param for label in stored.labels.values()
                     if label.channel == "param" and not label.access and label.param > 0}) if stored is not None else []
    return passed_types(frame, class_id, function, params) if params else frozenset()


def _dataclass_fields(frame: Frame, class_id: str) -> list[str] | None:
    """The fields of a class decorated with ``dataclasses.dataclass`` (annotated names of its
    body, in order), or None for any other class."""
    info = frame.program.classes[class_id]
    decorated = False
    for decorator in info.node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        value = frame.expr(target)
        decorated = decorated or any(t in ("=dataclasses.dataclass", "=attr.s", "=attrs.define") for t in value.types)
    if not decorated:
        return None
    return [s.target.id for s in info.node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
