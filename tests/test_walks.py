"""``analysis.walks`` gives ``ast.walk``'s and ``ast.iter_child_nodes``' nodes in their order
(every analysis that walks a tree relies on it), without recursion."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fleetledger.analysis.walks import child_nodes, walk

TESTS = Path(__file__).parent
SAMPLES = sorted((TESTS / "data" / "taint").glob("*.py"))[:40] + [Path(ast.__file__)]


def _tree(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_bytes(), type_comments=True)
    except SyntaxError:  # newer syntax than this interpreter's: not this test's subject
        return None


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_walk_and_child_nodes_match_the_ast_module(path: Path) -> None:
    tree = _tree(path)
    if tree is None:
        pytest.skip("syntax newer than this interpreter")
    assert [id(n) for n in walk(tree)] == [id(n) for n in ast.walk(tree)]
    for node in ast.walk(tree):
        assert child_nodes(node) == list(ast.iter_child_nodes(node))


def test_nodes_built_without_their_optional_fields() -> None:
    """A node made in code may lack fields (``ast.arguments()`` before 3.13 has none set):
    both skip what is missing, as ``ast.iter_fields`` does."""
    call = ast.Call(func=ast.Name(id="f", ctx=ast.Load()))  # no args, no keywords
    function = ast.Lambda(args=ast.arguments(), body=call)
    assert [type(n) for n in walk(function)] == [type(n) for n in ast.walk(function)]
    assert child_nodes(call) == list(ast.iter_child_nodes(call))


def test_a_deeply_nested_expression_is_walked_without_recursion() -> None:
    expression: ast.expr = ast.Name(id="a", ctx=ast.Load())
    for _ in range(20_000):  # deeper than the interpreter's recursion limit (built, not parsed)
        expression = ast.BinOp(left=expression, op=ast.Add(), right=ast.Name(id="a", ctx=ast.Load()))
    assert sum(1 for _ in walk(expression)) == sum(1 for _ in ast.walk(expression)) == 80_002
