"""What the other side of a comparison or a membership test is, for ``conditions``: built
from constants (an allowlist), of no outside origin (a setting, the request's own host, a
method's own configuration), a list of a few constants (the variable is then one of them), or
one that lets an empty text pass.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .values import MAX_CHOICES, Value, clean

if TYPE_CHECKING:
    from .interp import Frame

ALL_KINDS = frozenset({"*"})


def not_outside(value: Value) -> bool:
    """True for a value that holds no outside data: built from constants, or of an origin the
    engine does not see (a setting, a stored value) or the request's own URL or host. Equal to
    it, a variable holds what it holds (``urlparse(u).netloc == request.host``: this site). A
    method's own state (``self.allowed_host``) is not one: a summary holds for every object,
    also one whose attribute came from the request."""
    labels = value.all_labels()
    return constant_built(value) or bool(labels) and not value.functions and all(
        label.channel == "opaque" or label.own_url for label in labels)


def one_of(frame: Frame, name: str, allowed: Value, what: str) -> Value | None:
    """The value of a variable found in a list, tuple or set of a few constants: checked, and
    one of them (``Value.choices``); None when the container's items are not all known."""
    current = frame.env.get(name)
    items = list((allowed.items or {}).values())
    if current is None or not items or allowed.labels or not all(
            item.is_const and isinstance(item.const, (str, bytes, int)) for item in items):
        return None
    found = frozenset(item.const for item in items)
    if not 1 < len(found) <= MAX_CHOICES:
        return None
    return replace(clean(current, ALL_KINDS, what), choices=found)


def holds_empty(allowed: Value) -> bool:
    """True when ``x in allowed`` may hold for an empty ``x``: ``allowed`` is a text (a
    substring test: ``""`` is in every text), holds an empty item, or is not known item by item
    (a setting may be a text)."""
    if allowed.is_const:
        return isinstance(allowed.const, (str, bytes))
    if allowed.items is None or not constant_built(allowed):
        return True
    return any(item.is_const and not item.const for item in allowed.items.values())


def own_url_held(value: Value) -> bool:
    """True for a value holding the request's own URL or host (``Source.own_url``)."""
    return any(label.own_url for label in value.all_labels())


def constant_built(value: Value) -> bool:
    """True for a value built only from constants (no label of any origin, and not a library
    object or a function)."""
    return not value.all_labels() and not value.functions and not any(t.startswith("=") for t in value.types)
