"""Where a flagged node sits: test code and dead code.

Test code is a test module by pytest's discovery conventions (``test_*.py``, ``*_test.py``,
``conftest.py``) or under a ``tests``/``test``/``testing`` directory, and pytest fixtures.
Dead code is code under a constant-false condition (``if False:``, ``if 0:``, ``while False:``,
``if typing.TYPE_CHECKING:``) or after an unconditional ``return``/``raise`` in the same block.
"""

from __future__ import annotations

import ast

from .tree import SourceTree

_TEST_DIRS = frozenset({"tests", "test", "testing"})


def is_test_path(path: str) -> bool:
    """Tells whether a repository-relative path names a test file.

    Args:
        path: Forward-slash path relative to the scanned root.

    Returns:
        True for files under a ``tests``/``test``/``testing`` directory and for
        ``test_*.py``, ``*_test.py`` and ``conftest.py``.
    """
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    if any(part in _TEST_DIRS for part in parts[:-1]):
        return True
    return name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")


def test_context(tree: SourceTree, node: ast.AST, path: str) -> str | None:
    """Says why a node is test code, or returns None when it is not.

    Args:
        tree: The parsed file.
        node: The flagged node.
        path: The file's repository-relative path.

    Returns:
        A reason such as ``"the file tests/test_math.py is a test file"``, or None.
    """
    if is_test_path(path):
        return f"the file {path} is a test file"
    # Outside test files, pytest collects nothing by name (``test_*`` functions and ``Test*``
    # classes count only in test modules), so a name says nothing there: only pytest's own
    # fixture decorator marks test code.
    for ancestor in [node, *tree.ancestors(node)]:
        if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any((tree.qualname(d.func if isinstance(d, ast.Call) else d) or "") in _FIXTURES for d in ancestor.decorator_list):
                return f"it is inside the pytest fixture {ancestor.name}()"
    return None


_FIXTURES = frozenset({"pytest.fixture", "pytest_asyncio.fixture"})


def dead_code(tree: SourceTree, node: ast.AST) -> str | None:
    """Says why a node can never run, or returns None when it may.

    Args:
        tree: The parsed file.
        node: The flagged node.

    Returns:
        A reason such as ``"it is under `if False:` (line 12)"``, or None.
    """
    child: ast.AST = node
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, (ast.If, ast.While)) and any(child is s for s in ancestor.body):
            if _constant_false(tree, ancestor.test):
                return f"it is under `{'if' if isinstance(ancestor, ast.If) else 'while'} {tree.segment(ancestor.test, 30)}:` (line {ancestor.lineno})"
        if isinstance(ancestor, ast.If) and any(child is s for s in ancestor.orelse):
            if isinstance(ancestor.test, ast.Constant) and ancestor.test.value:
                return f"it is in the else branch of `if {tree.segment(ancestor.test, 30)}:` (line {ancestor.lineno})"
        if isinstance(child, ast.stmt):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(ancestor, field, None)
                if isinstance(block, list) and any(child is s for s in block):
                    index = next(i for i, s in enumerate(block) if s is child)
                    prior = next((s for s in block[:index] if exits([s], tree)), None)
                    if prior is not None:
                        return f"it follows an unconditional `{tree.segment(prior, 30)}` (line {prior.lineno})"
        child = ancestor
    return None


def exits(body: list[ast.stmt], tree: SourceTree) -> bool:
    """Tells whether a block always leaves the enclosing flow: its last statement is
    ``return``, ``raise``, ``continue`` or ``break`` (a call that never returns is the library
    models' business, not this syntactic check's)."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


def _constant_false(tree: SourceTree, test: ast.expr) -> bool:
    if isinstance(test, ast.Constant):
        return not test.value
    return (tree.qualname(test) or "") in ("typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING")
