"""Indexes derived from the library models, built once for the catalog in use.

Several parts of the engine read the models through an index of their own (the method names a
typed sink model names, the calls that normalise a path, the names a library defines); each is
a pure function of the catalog, built on first use and kept until another catalog is asked
for (the shipped one, or a test's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # pragma: no cover - typing only
    from .catalog import Catalog

T = TypeVar("T")
_KEPT: dict[Callable[..., Any], tuple[Catalog, Any]] = {}


def indexed(catalog: Catalog, build: Callable[[Catalog], T]) -> T:
    """Returns ``build(catalog)``, built once for this catalog (one catalog at a time per
    ``build``: asking with another builds it again, for that one)."""
    known = _KEPT.get(build)
    if known is None or known[0] is not catalog:
        known = _KEPT[build] = (catalog, build(catalog))
    return known[1]  # type: ignore[no-any-return]
