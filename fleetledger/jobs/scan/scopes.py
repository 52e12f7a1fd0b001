"""The scope of a flagged node: the qualified name of the function or class whose body holds it."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Mapping
from dataclasses import replace

from .shapes import Candidate

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
MODULE = "<module>"
"""The scope of code at a module's top level."""


def at(tree: ast.Module, wanted: set[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """Maps node positions ``(lineno, col_offset)`` to the qualified name of their scope.

    The scope of a node is the innermost function or class whose *body* holds it (decorators,
    defaults and base classes belong to the outer scope); a def or class node is in its own
    scope. Walks the tree iteratively (a tree deep enough to overflow a recursive walk is still
    walked), and only into statements whose lines (from their first decorator's) hold a wanted
    line: a file's few flagged lines cost a walk down to them, not over the whole file.
    """
    found: dict[tuple[int, int], str] = {}
    lines = sorted({line for line, _ in wanted})
    stack: list[tuple[ast.AST, str]] = [(tree, "")] if wanted else []
    while stack:
        node, scope = stack.pop()
        if isinstance(node, ast.stmt) and not _holds_a_line(node, lines):
            continue
        inner = scope
        if isinstance(node, _SCOPES):
            inner = f"{scope}.{node.name}" if scope else node.name
        position = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        if position in wanted:
            found.setdefault(position, inner or MODULE)
        for field, value in ast.iter_fields(node):
            child_scope = inner if field == "body" else scope
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    stack.append((child, child_scope))
    return found


def _holds_a_line(statement: ast.stmt, lines: list[int]) -> bool:
    """True when one of ``lines`` (sorted) lies within the statement, its decorators included."""
    if statement.end_lineno is None:
        return True
    first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
    at_or_after = bisect.bisect_left(lines, first)
    return at_or_after < len(lines) and lines[at_or_after] <= statement.end_lineno


def with_scope(candidate: Candidate, tree: ast.Module, relpath: str, path_lines: Mapping[str, list[str]]) -> Candidate:
    """Returns the candidate with the scope of the node at its position when it is one of
    ``relpath`` that came without one (the engine's weak random numbers), else unchanged.

    Args:
        candidate: A candidate of the file's analysis.
        tree: The file's syntax tree.
        relpath: The file's repository-relative path.
        path_lines: Path -> lines (columns are converted from characters to UTF-8 bytes).
    """
    if candidate.scope or candidate.path != relpath:
        return candidate
    lines = path_lines.get(relpath, [])
    text = lines[candidate.line - 1] if 0 < candidate.line <= len(lines) else ""
    position = (candidate.line, len(text[:candidate.col].encode("utf-8")))
    return replace(candidate, scope=at(tree, {position}).get(position, MODULE))
