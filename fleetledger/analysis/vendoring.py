"""Vendored copies of libraries: a package that ships a library inside itself.

pip ships ``requests`` as ``pip._vendor.requests``, setuptools its dependencies under
``setuptools._vendor``: the copy is the library, and the library's models apply to it
(``vendored_name``, which ``Expressions.library_name`` asks for every name it binds).
"""

from __future__ import annotations

import builtins
import sys
from typing import TYPE_CHECKING

from .catalog_index import indexed
from .dependencies import Dependencies

if TYPE_CHECKING:
    from .model_records import Catalog
    from .program import Program


def vendored_name(program: Program, qualified: str) -> str:
    """The library name a name of a vendored copy stands for, else ``qualified``.

    A package vendors a library when it ships a copy of it inside itself (pip's
    ``pip._vendor.requests``, setuptools' ``setuptools._vendor``): ``from pip._vendor import
    requests`` is the library ``requests``, whose models (what ``Session.get`` returns, where
    its response's headers come from) apply; the copy's own code, which the engine cannot
    follow down to the network, is not read for them. Only names some model knows are
    mapped: any other function of the copy (``requests.utils.quote``) stays the analysed
    code's, and is read as such.

    A package or module of the analysed code is a copy of a third-party library the models
    describe when it is nested in another package, bears the library's name, and binds at
    least half of the names the models know directly under the library (in its body, or as a
    package's submodules): a single-module library is vendored as one file
    (``pypiserver/bottle.py``). A package of an application that only shares a library's name
    (``app.requests``; ``app.yaml``, a wrapper with a ``load`` of its own) is its own code,
    and a standard library module's name never makes a copy (``pkg.subprocess``).

    Args:
        program: The analysis (its plan of modules, its models; it caches each package's answer).
        qualified: A dotted name as imports bind it (``pip._vendor.requests.Session``).

    Returns:
        The name from the library's top on (``requests.Session``) when the models know it,
        else ``qualified``.
    """
    parts = qualified.split(".")
    if len(parts) < 2 or parts[0] not in program.tops:
        return qualified
    for cut in range(1, len(parts)):
        if library_members(program.catalog, parts[cut]) and program.catalog.knows(".".join(parts[cut:])) \
                and _is_copy(program, ".".join(parts[:cut + 1]), parts[cut]):
            return ".".join(parts[cut:])
    return qualified


def _is_copy(program: Program, package: str, library: str) -> bool:
    path = program.by_name.get(package)
    if path is None:
        program.depend(Dependencies(names={package: path}))  # a module added later may be one
        return False
    known = program.copies.get(package)
    if known is not None:
        program.depend(known[1])
        return known[0]
    with program.tracking() as deps:
        module = program.find_module(package)
        if module is None:
            found = False
        elif module.path in program.running:
            return False  # its own body, importing its submodules: not decided yet
        else:
            program.run(module)
            members = library_members(program.catalog, library)
            present = sum(1 for m in members if m in module.globals or module.is_package and f"{package}.{m}" in program.by_name)
            found = 2 * present >= len(members)
    program.copies[package] = (found, deps)
    return found


def library_members(catalog: Catalog, top: str) -> frozenset[str]:
    """The names directly under the third-party library ``top`` that some model names
    (``requests`` -> ``get``, ``Session``, ``sessions`` ...); empty for a name that is no such
    library's (a standard library module, a builtin, ``myapp``). Indexed once for the catalog
    in use (``catalog_index``)."""
    return indexed(catalog, _library_members).get(top, frozenset())


def _library_members(catalog: Catalog) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for name in catalog.names:
        first, dot, rest = name.partition(".")
        if dot and "." not in rest and first not in sys.stdlib_module_names and not hasattr(builtins, first):
            out.setdefault(first, set()).add(rest)
    return {name: frozenset(members) for name, members in out.items()}


