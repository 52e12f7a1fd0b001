"""The types an annotation names: what a parameter or a variable declared with one holds.

``conn: sqlite3.Connection``, ``client: Optional[PrismaClient] = None``,
``request: Annotated[Request, ...]``, ``"Engine"`` (a string, as PEP 563 and forward references
write it): the annotation's expression is evaluated where it is written, in the first element
of a subscript (``Optional[X]``, ``Annotated[X, ...]``; both sides of ``X | None``), and each
class or library type it names is returned. The annotation is a claim of the code's author, so
it only adds types to what the code itself gives a value, never removes any. A string that is
no expression, or one nested past the parser's limits (a hostile file's
``"-----...x"``, which makes CPython's parser raise ``MemoryError``), names nothing.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .interp import Frame
    from .program import Program
    from .values import Value


def annotation_names(frame: Frame, node: ast.expr) -> set[str]:
    """The qualified names an annotation refers to (classes of the analysed code by id, library
    names as written with import aliases resolved).

    Args:
        frame: A frame of the scope where the annotation is written (its module, for a
            parameter).
        node: The annotation expression.

    Returns:
        The names; empty for an annotation that names nothing the frame resolves.
    """
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # X | None
        return annotation_names(frame, node.left) | annotation_names(frame, node.right)
    if isinstance(node, ast.Subscript):  # Annotated[Request, ...], Optional[Request]
        node = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and node.slice.elts else node.slice
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except (SyntaxError, ValueError, MemoryError, RecursionError):  # ValueError: a NUL byte
            return set()
    value = frame.expr(node)
    names = {t[1:] for t in value.types if t.startswith("=")}
    names |= {fid for fid in value.functions if fid in frame.program.classes}
    return names


def known_types(program: Program, names: set[str]) -> frozenset[str]:
    """Of the names an annotation refers to (``annotation_names``), the types a value declared
    with it holds: the classes of the analysed code (another module's is loaded, as a call of
    it would load it) and the library types the models know (``[[type]]``, request types)."""
    out: set[str] = set()
    for name in names:
        if name in program.classes or program.catalog.bases.get(name) is not None or name in program.catalog.sources_type:
            out.add(name)
        elif "." in name and not program.catalog.knows(name):
            local = program.resolve(name)
            if local is not None and local[0] == "class":
                out.add(local[1])
    return frozenset(out)


def with_types(value: Value, declared: frozenset[str]) -> Value:
    """``value`` also of the types an annotation declares (``client: Client | None = None``): the
    value itself unchanged, its constant and items too (``PATTERN: Final = re.compile(...)``
    keeps the pattern's text)."""
    return replace(value, types=value.types | declared) if declared - value.types else value
