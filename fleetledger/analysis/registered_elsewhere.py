"""Handlers registered by one module and defined in another: ``set_defaults(main=runner.main)``,
``app.add_url_rule("/x", view_func=views.index)``.

``entries.registered_as`` finds a registration only in the module that defines the function
(its summary must not depend on which other modules an analysis loaded). A function another
module registers is the framework's entry point all the same; the analysis of the registering
module makes the framework's call itself, at the registration, with what the framework passes
(``entries.handler_values``): the call is in the analysed file, so what the function's summary
says reaches its sinks is reported there (in the other file, and at the registration, where the
data enters it), as for any call into another file.

Known limit: a route's converters (``<int:id>``) are read from the defining module's own
registrations, so a parameter another module's rule declares an ``int`` is taken as text.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .definitions import FunctionInfo, ModuleInfo
from .entries import handler_values, method_calls, parameter_values, passed_functions
from .facts import site_of
from .interp import Frame
from .model_handlers import Handler
from .model_records import UNTYPED
from .receivers import receiver_value

if TYPE_CHECKING:
    from .program import Program


def registered_elsewhere(program: Program, module: ModuleInfo) -> list[tuple[FunctionInfo, Handler, ast.Call]]:
    """The plain functions of other modules of the code that a registering call of ``module``
    registers, each with its handler model and the call, in source order. Only a call on an
    object of one of the handler's ``decorator_receivers`` types counts, and only a function
    named by a name or attribute (``runner.main``, an imported ``main``, ``command.main`` with
    ``command`` a loop's variable), evaluated as ``receivers.receiver_value`` evaluates it."""
    out: list[tuple[FunctionInfo, Handler, ast.Call]] = []
    calls = method_calls(module.tree)
    for handler in program.catalog.handlers:
        for method, position, keyword in handler.registrations:
            for node in calls.get(method, ()):
                assert isinstance(node.func, ast.Attribute)
                types = {base for t in receiver_value(program, module, node.func.value).types
                         for base in program.class_mro(t)}
                if not types & set(handler.decorator_receivers) and not (not types and UNTYPED in handler.decorator_receivers):
                    continue
                for passed in passed_functions(node, position, keyword, calls):
                    if not isinstance(passed, (ast.Name, ast.Attribute)):
                        continue
                    value = receiver_value(program, module, passed)
                    for function_id in _functions(program, value.types, value.functions):
                        function = program.functions.get(function_id)
                        if (function is not None and function.module is not module and not function.bound
                                and not isinstance(function.node, ast.Lambda)):
                            out.append((function, handler, node))
    return out


def call_registered(program: Program, module: ModuleInfo, function: FunctionInfo, handler: Handler,
                    node: ast.Call) -> None:
    """Makes the framework's call of ``function`` at its registration ``node`` in ``module``,
    with the values the framework passes its parameters (its summary applied there)."""
    env = handler_values(program, function, handler, parameter_values(program, function))
    frame = Frame(program, module, None, dict(module.globals), summarising=False)
    args = [env[param.arg] for param in function.params]
    program.apply_summary(frame, function, args, {}, [], node, site_of(node, module.path, "<module>"))


def _functions(program: Program, types: frozenset[str], functions: frozenset[str]) -> list[str]:
    """The ids of the code's functions a value names: those it holds, and those its ``=``
    references resolve to (a module of the code not loaded yet: ``views.index``)."""
    found = set(functions)
    for t in types:
        if t.startswith("="):
            resolved = program.resolve(t[1:])
            if resolved is not None and resolved[0] == "function":
                found.add(resolved[1])
    return sorted(found)
