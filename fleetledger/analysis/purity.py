"""Which calls' results depend only on their inputs (Python's semantics for builtins and
methods of constant types, ``[[pure]]`` models for libraries): with constant arguments such a
result is built from constants, not of unknown origin.
"""

from __future__ import annotations

from .values import Value

# Types of constants: a method of one computes from its inputs only.
CONST_TYPE_NAMES = frozenset({"str", "int", "float", "bool", "bytes", "NoneType", "list", "dict", "tuple", "set"})
# Builtins whose result is a function of their arguments only (Python semantics): with
# constant arguments the result is built from constants, not of unknown origin.
PURE_BUILTINS = frozenset({"str", "repr", "ascii", "format", "int", "float", "bool", "complex", "bytes", "bytearray",
                           "list", "tuple", "dict", "set", "frozenset", "sorted", "reversed", "min", "max", "sum",
                           "len", "abs", "round", "chr", "ord", "hex", "oct", "bin", "zip", "enumerate", "map",
                           "filter", "range", "iter", "next", "any", "all", "hash", "divmod", "pow", "slice",
                           "isinstance", "issubclass", "callable", "type", "id", "getattr", "hasattr", "vars"})


def is_pure(refs: list[str], receiver: Value | None, pure: frozenset[str]) -> bool:
    """True for a call whose result depends only on its inputs: a pure builtin, a library
    function the models call pure (``[[pure]]``), or a method of a builtin constant type
    (``"x".join(...)``, ``"...".format(...)``)."""
    if refs:
        return all(r in PURE_BUILTINS or r in pure for r in refs)
    return receiver is not None and bool(receiver.types) and receiver.types <= CONST_TYPE_NAMES
