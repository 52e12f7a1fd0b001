"""A parsed source file and the structural lookups the analysis needs.

Every walk here is iterative (an explicit stack or queue), so a deeply nested expression
such as ``a+a+...+a`` with thousands of terms cannot exhaust the interpreter's stack; nothing
here raises the recursion limit.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .walks import child_nodes, extend_children, walk

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
ScopeNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef | ast.Module

# The line terminators of Python's tokenizer; str.splitlines() knows more (\x0c, \u2028...).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class ParseError(Exception):
    """The source could not be parsed into a syntax tree; the message says why."""


@dataclass(frozen=True, kw_only=True)
class SourceTree:
    """A module's syntax tree with parent links, import aliases and a line index.

    Attributes:
        module: The parsed module.
        lines: The source lines as Python's tokenizer numbers them (index 0 is line 1).
        parents: Each node's parent node (the module has none).
        imports: Local name bound by an import -> the qualified name it stands for, e.g.
            ``{"sp": "subprocess", "run": "subprocess.run"}``.
        by_line: Line number -> nodes whose ``lineno`` is that line, in walk order.
        memo: Facts other modules derive from the whole tree once (e.g. the module-level
            bindings by name), keyed by the deriving module; not part of equality.
    """

    module: ast.Module
    lines: tuple[str, ...]
    parents: Mapping[ast.AST, ast.AST]
    imports: Mapping[str, str]
    by_line: Mapping[int, tuple[ast.AST, ...]]
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def parse(cls, source: str) -> SourceTree:
        """Parses ``source`` and builds the lookups.

        Args:
            source: The decoded text of a Python file (a leading BOM is ignored).

        Returns:
            The parsed tree.

        Raises:
            ParseError: the text is not Python any supported version accepts (the host's
                parser first, then the version-independent one: ``parser.parse_module``), or
                nests too deeply for the parser to build a tree.
        """
        from . import parser

        text = source.removeprefix("\ufeff")
        try:
            module = parser.parse_module(text).module
        except parser.ParseError as exc:
            raise ParseError(str(exc)) from None
        return cls.of(module, text)

    @classmethod
    def of(cls, module: ast.Module, text: str) -> SourceTree:
        """Builds the lookups for an already parsed module and its text (one pass over the
        nodes in ``ast.walk``'s order)."""
        parents: dict[ast.AST, ast.AST] = {}
        by_line: dict[int, list[ast.AST]] = {}
        imports: dict[str, str] = {}
        todo: list[ast.AST] = [module]
        for node in todo:  # a queue: the loop reads what it appends
            start = len(todo)
            extend_children(node, todo)
            for child in todo[start:]:
                parents[child] = node
            lineno = getattr(node, "lineno", None)
            if lineno is not None:
                by_line.setdefault(lineno, []).append(node)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        imports[alias.asname] = alias.name
                    else:
                        head = alias.name.split(".")[0]
                        imports[head] = head
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return cls(
            module=module,
            lines=tuple(_LINE_BREAK.split(text)),
            parents=parents,
            imports=imports,
            by_line={line: tuple(nodes) for line, nodes in by_line.items()},
        )

    def parent(self, node: ast.AST) -> ast.AST | None:
        """Returns the node's parent, or None for the module (read-only)."""
        return self.parents.get(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        """Yields the node's parent, grandparent and so on up to the module."""
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def scope_of(self, node: ast.AST) -> ScopeNode:
        """Returns the innermost function, lambda, class or module that contains ``node``.

        Default values and decorators belong to the enclosing scope, as in Python.
        """
        child = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if child in ancestor.body:
                    return ancestor
            elif isinstance(ancestor, ast.Lambda):
                if child is ancestor.body:
                    return ancestor
            elif isinstance(ancestor, ast.ClassDef):
                if child in ancestor.body:
                    return ancestor
            elif isinstance(ancestor, ast.Module):
                return ancestor
            child = ancestor
        return self.module

    def function_of(self, node: ast.AST) -> FunctionNode | None:
        """Returns the innermost ``def`` whose body contains ``node``, or None at module level."""
        scope = self.scope_of(node)
        while not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            scope = self.scope_of(scope)
        return scope if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else None

    def enclosing_class(self, function: FunctionNode) -> ast.ClassDef | None:
        """Returns the class whose body defines ``function`` directly, or None."""
        parent = self.parents.get(function)
        return parent if isinstance(parent, ast.ClassDef) else None

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """Returns the innermost statement containing ``node`` (``node`` itself if a statement)."""
        if isinstance(node, ast.stmt):
            return node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, ast.stmt):
                return ancestor
        return None

    def qualname(self, expr: ast.AST) -> str | None:
        """Returns the dotted name an expression stands for, with import aliases resolved.

        ``sp.run`` after ``import subprocess as sp`` is ``"subprocess.run"``; ``run`` after
        ``from subprocess import run`` is too; an unimported ``request.args`` stays as written.

        Returns:
            The dotted name, or None when the expression is not a name or attribute chain.
        """
        parts: list[str] = []
        current = expr
        while isinstance(current, ast.Attribute):
            parts.append(current.attr)
            current = current.value
        if not isinstance(current, ast.Name):
            return None
        parts.append(self.imports.get(current.id, current.id))
        return ".".join(reversed(parts))

    def segment(self, node: ast.AST, limit: int = 70) -> str:
        """Returns a node's source text for rationales.

        Args:
            node: A node of this tree.
            limit: Maximum length; longer text ends in ``...``.

        Returns:
            The text with its lines joined and whitespace collapsed (the node's type name for a
            node without a position).
        """
        lineno = getattr(node, "lineno", None)
        end = getattr(node, "end_lineno", None)
        if lineno is None or end is None or lineno > len(self.lines):
            return type(node).__name__
        start_col = _char_col(self.lines[lineno - 1], node.col_offset)
        if lineno == end:
            text = self.lines[lineno - 1][start_col:_char_col(self.lines[end - 1], node.end_col_offset)]
        else:
            pieces = [self.lines[lineno - 1][start_col:]]
            pieces.extend(self.lines[lineno:end - 1])
            pieces.append(self.lines[end - 1][:_char_col(self.lines[end - 1], node.end_col_offset)])
            text = " ".join(piece.strip() for piece in pieces)
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def locate(self, line: int, col: int, kinds: tuple[type[ast.AST], ...]) -> Iterator[ast.AST]:
        """Yields the nodes of ``kinds`` a detector's position may mean, best guess first.

        First the nodes starting exactly at (``line``, ``col``), innermost first (``a.b(x).c()``
        starts three calls at one column; which one a rule means depends on the rule, so the
        caller tries them in turn); then the other nodes starting on ``line``, nearest column
        first; then, searched only if the caller asks for more, the nodes spanning ``line``,
        innermost first (a detector may report the line of a keyword inside a multi-line call).

        Args:
            line: 1-based line as the parser numbers it.
            col: 0-based character column (converted here to the parser's UTF-8 byte offset).
            kinds: Node types that can carry the finding.

        Yields:
            The nodes, possibly none.
        """
        byte_col = col
        if 0 < line <= len(self.lines):
            byte_col = len(self.lines[line - 1][:col].encode("utf-8"))
        starting = [n for n in self.by_line.get(line, ()) if isinstance(n, kinds)]
        yield from sorted((n for n in starting if n.col_offset == byte_col), key=_span_end)
        yield from sorted((n for n in starting if n.col_offset != byte_col), key=lambda n: (abs(n.col_offset - byte_col), n.col_offset))
        yield from sorted(
            (node for node in walk(self.module)
             if isinstance(node, kinds) and getattr(node, "lineno", line) < line <= (getattr(node, "end_lineno", None) or 0)),
            key=lambda n: (-n.lineno, -n.col_offset),
        )

    def module_function(self, name: str) -> FunctionNode | None:
        """Returns the last module-level ``def name`` (the one later calls see), or None."""
        found = None
        for stmt in self.module.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                found = stmt
        return found


def _span_end(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "end_lineno", None) or 0, getattr(node, "end_col_offset", None) or 0)


def _char_col(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def walk_scope(root: ast.AST) -> Iterator[ast.AST]:
    """Yields ``root``'s descendants that belong to its scope, iteratively.

    Nested functions, lambdas and classes are yielded themselves but not entered, so the
    assignments found are the ones that bind names in ``root``'s own scope.
    """
    stack = child_nodes(root)[::-1]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(child_nodes(node)[::-1])


def words(identifier: str) -> tuple[str, ...]:
    """Splits an identifier or dotted name into lower-case words.

    ``"userPasswordHash"``, ``"user_password_hash"`` and ``"user.password.hash"`` all give
    ``("user", "password", "hash")``.
    """
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", identifier)
    return tuple(part for part in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if part)
