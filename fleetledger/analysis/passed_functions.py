"""Which functions a call gives a function that the function calls: passed as an argument it
calls by name (``run(os.system, cmd)`` where ``run(f, x)`` calls ``f(x)``), or held by the
instance a method is called on in an attribute the method calls (``Runner(os.system).go(cmd)``
where ``__init__`` stores ``self.action`` and ``go`` calls ``self.action(x)``). The summary made
with those functions bound (``summaries.specialised``) holds what the function does through
them.
"""

from __future__ import annotations

from .definitions import FunctionInfo
from .values import Value


def key(value: Value) -> tuple[object, ...]:
    """A hashable identity of what ``called`` found for one parameter (its functions, and the
    instance's attributes holding functions), for keeping a summary per functions passed."""
    return (tuple(sorted(value.types)), tuple(sorted(value.functions)),
            tuple(sorted((k, key(v)) for k, v in (value.items or {}).items())))


def called(function: FunctionInfo, mapping: dict[int, Value]) -> dict[int, Value]:
    """The arguments that are functions (of the code, or library ones) passed to parameters
    the function calls by name, and for a method the functions its instance holds in the
    attributes it calls (``self.action(x)`` of an object made with ``Runner(os.system)``):
    parameter index -> those functions (the instance's as its items)."""
    names = function.called_parameters()
    out: dict[int, Value] = {}
    for index, value in mapping.items():
        refs = _refs(value) if index < len(function.params) and function.params[index].arg in names else None
        if refs is not None:
            out[index] = refs
    held = (mapping[0].items or {}) if function.bound and 0 in mapping else {}
    attributes = {f".{name}": _refs(held[f".{name}"]) for name in function.self_calls() if f".{name}" in held}
    if any(attributes.values()):
        out[0] = Value(items={attr: refs for attr, refs in attributes.items() if refs is not None})
    return out


def _refs(value: Value) -> Value | None:
    """The functions (of the code, or library ones) ``value`` may be, or None."""
    refs = frozenset(t for t in value.types if t.startswith(("=", "bound:")))
    return Value(types=refs, functions=value.functions) if refs or value.functions else None
