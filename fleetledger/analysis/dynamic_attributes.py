"""``obj.name`` where ``obj``'s class, of the analysed code, neither defines nor assigns ``name``
but defines ``__getattr__``: Python then calls ``type(obj).__getattr__(obj, "name")`` and the
read is what that returns (the data model, "Customizing attribute access"). A class whose hook
turns every unknown name into a call, returning a function it defines (``return lambda *args:
self._call(name, *args)``: a command runner, an RPC proxy), is followed into what it does with
the name and with the arguments of that call. A hook that forwards the read to another object
or module (``return getattr(self._wrapped, name)``, a lazy module's proxy) is not followed: the
object it reads is rarely known, and loading what it may name would take the place of modules
the analysis needs (``Program.find_module``'s limit).

Only a name the class's own methods never store on their instance (``self.name = ...``) counts:
such an attribute is found before ``__getattr__`` is asked. A ``__getattr__`` read inside its
own application (``self.missing`` in its body) is not followed again.
"""

from __future__ import annotations

import ast
import functools
from typing import TYPE_CHECKING

from .definitions import ClassInfo
from .values import Value, constant, join
from .walks import child_nodes, walk

if TYPE_CHECKING:
    from .interp import Frame

_HOOK = "__getattr__"


def looked_up(frame: Frame, owner: Value, attr: str, node: ast.AST) -> Value | None:
    """What ``owner.attr`` is through its class's ``__getattr__``: the join of the hook's
    result for each class of the code ``owner`` may be an instance of whose hook applies;
    None when none does (no such class, a name its methods store, a dunder name, or a hook
    being applied already)."""
    if attr.startswith("__"):
        return None
    program = frame.program
    found: list[Value] = []
    for type_name in sorted(owner.types):
        hook = program.method(type_name, _HOOK) if type_name in program.classes else None
        if hook is None or not _makes_function(program.functions[hook].node):
            continue
        if any(attr in _stored(program.classes[c]) for c in program.class_mro(type_name) if c in program.classes):
            continue  # found on the instance or its class before ``__getattr__`` is asked
        key = f"{_HOOK}:{hook}"
        if key in program.reading_properties:
            continue
        program.reading_properties.add(key)
        try:
            read = ast.copy_location(ast.Call(func=node, args=[], keywords=[]), node)
            found.append(frame.call_local(hook, owner, [constant(attr)], {}, [], read))
        finally:
            program.reading_properties.discard(key)
    return join(*found) if found else None


@functools.lru_cache(maxsize=256)
def _makes_function(hook: ast.AST) -> bool:
    """True when the hook returns a function it defines: a lambda, or a function defined in its
    body, named in a ``return``."""
    body = getattr(hook, "body", [])
    nested = {node.name for node in body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return) and (isinstance(node.value, ast.Lambda) or isinstance(node.value, ast.Name)
                                             and node.value.id in nested):
            return True
        stack.extend(child for child in child_nodes(node) if isinstance(child, ast.stmt))
    return False


@functools.lru_cache(maxsize=256)
def _stored(info: ClassInfo) -> frozenset[str]:
    """The attribute names the class's methods store on their instance (``self.x = ...``,
    ``self.x += ...``, the first parameter's attributes), and its body's own names."""
    names = set(info.attributes) | set(info.methods)
    for child in info.node.body:
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) or not child.args.args:
            continue
        first = child.args.args[0].arg
        names.update(n.attr for n in walk(child) if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del))
                     and isinstance(n.value, ast.Name) and n.value.id == first)
    return frozenset(names)
