"""A library method read without being called (``match = PATTERN.match``): the value that
stands for it keeps the object it is bound to, so the call made through it later is that
method's, on that object (``Calls.call``), with the method's models (its sinks) applied.
"""

from __future__ import annotations

from .values import Value

# Its type names the method; its item ``SELF`` holds the object it is bound to.
BOUND_LIBRARY_METHOD = "method:"
SELF = ".__self__"


def bound_library_method(value: Value) -> tuple[Value, str] | None:
    """The object and the method name of a library method read without being called (made by
    ``Expressions.attribute``), or None for any other value."""
    names = [t[len(BOUND_LIBRARY_METHOD):] for t in value.types if t.startswith(BOUND_LIBRARY_METHOD)]
    owner = (value.items or {}).get(SELF)
    return (owner, names[0]) if owner is not None and len(names) == 1 else None


def library_types(types: frozenset[str]) -> set[str]:
    """The library types among a value's types (``lxml.etree.XMLParser``): dotted names that
    are no reference (``=os.path``) and no bound method (``bound:``)."""
    return {t for t in types if "." in t and not t.startswith(("=", "bound:"))}
