"""The scope of a flagged node (``jobs.scan.scopes.at``), which walks only into the statements
that hold a wanted line: the same answers as a walk over every node."""

from __future__ import annotations

import ast
import random
from pathlib import Path

from fleetledger.analysis import parser
from fleetledger.jobs.scan import scopes

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _every_node(tree: ast.Module) -> dict[tuple[int, int], str]:
    """The scope of every node's position, from a recursive walk over the whole tree (the
    definition ``scopes.at`` must keep: the innermost def or class whose body holds it)."""
    found: dict[tuple[int, int], str] = {}

    def walk(node: ast.AST, scope: str) -> None:
        inner = f"{scope}.{node.name}" if isinstance(node, _SCOPES) and scope else node.name if isinstance(node, _SCOPES) else scope
        found.setdefault((getattr(node, "lineno", 0), getattr(node, "col_offset", 0)), inner or scopes.MODULE)
        for field, value in ast.iter_fields(node):
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    walk(child, inner if field == "body" else scope)

    walk(tree, "")
    return found


SAMPLE = '''
import functools

@functools.lru_cache(
    maxsize=2,
)
def cached(x):
    class Inner(
        object,
    ):
        @staticmethod
        def method(y=lambda z: z):
            return [w for w in y()]
    return Inner

x = cached(1)
'''


def test_scopes_match_a_walk_over_every_node() -> None:
    rng = random.Random(3)
    sources = [SAMPLE, *(p.read_text() for p in sorted(Path(scopes.__file__).parent.glob("*.py"))[:12])]
    for text in sources:
        tree = parser.parse_module(text).module
        expected = _every_node(tree)
        positions = sorted(p for p in expected if p != (0, 0))
        for size in (1, 3, 20):
            wanted = set(rng.sample(positions, min(size, len(positions))))
            assert scopes.at(tree, wanted) == {p: expected[p] for p in wanted}
        decorators = {(d.lineno, d.col_offset) for node in ast.walk(tree) for d in getattr(node, "decorator_list", ())}
        assert scopes.at(tree, decorators) == {p: expected[p] for p in decorators}
