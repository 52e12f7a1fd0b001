"""Source text as the rewrites see it: spans of syntax nodes, edits, inserted imports, and
unified diffs made and applied without losing the file's line endings.

The parser's columns count UTF-8 bytes; every span here is a character offset into the
decoded text, so a file with non-ASCII text is edited where its nodes are. Line endings are
kept as they are (a CRLF file stays CRLF; inserted lines take the file's first line ending).
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """The text's lines as Python's parser counts them, each with its ending (``\n``, ``\r\n``
    or ``\r``). ``str.splitlines`` also breaks at form feeds, ``\x85``, ``\u2028``..., which
    the parser does not, so a line number after one would name the wrong line."""
    return _LINE.findall(text)


class DiffDoesNotApply(ValueError):
    """A diff's context is not in the text it is applied to (the file changed since the patch
    was made); nothing was changed."""


@dataclass(frozen=True, kw_only=True)
class Edit:
    """Replace ``text[start:end]`` with ``new`` (character offsets into the decoded text)."""

    start: int
    end: int
    new: str


class Source:
    """A decoded Python file with its syntax tree and character offsets of its lines.

    Args:
        text: The decoded file text.

    Raises:
        SyntaxError: the text does not parse.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.tree = ast.parse(text)
        self.lines = split_lines(text)
        self._starts = [0]
        for line in self.lines:
            self._starts.append(self._starts[-1] + len(line))
        first = self.lines[0] if self.lines else "\n"
        self.newline = "\r\n" if first.endswith("\r\n") else "\r" if first.endswith("\r") else "\n"

    def offset(self, lineno: int, byte_col: int) -> int:
        """Returns the character offset of a parser position (1-based line, UTF-8 byte column)."""
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        return self._starts[lineno - 1] + len(line.encode("utf-8")[:byte_col].decode("utf-8", "ignore"))

    def char_offset(self, lineno: int, char_col: int) -> int:
        """Returns the offset of a 1-based line and 0-based character column."""
        return self._starts[lineno - 1] + char_col

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Returns ``(start, end)`` character offsets of a node with positions."""
        return (self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                self.offset(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        """Returns the node's source text."""
        start, end = self.span(node)
        return self.text[start:end]

    def indent_of(self, lineno: int) -> str:
        """Returns the leading whitespace of a line."""
        line = self.lines[lineno - 1]
        return line[:len(line) - len(line.lstrip(" \t"))]

    def line_start(self, lineno: int) -> int:
        """Returns the offset where a 1-based line begins."""
        return self._starts[lineno - 1]

    def imports(self) -> set[str]:
        """Returns the modules the file imports at any level (``import a.b`` gives ``a.b`` and
        ``a``; ``from a.b import c`` gives ``a.b``, ``a`` and ``a.b.c``)."""
        found: set[str] = set()
        for node in ast.walk(self.tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                parts = name.split(".")
                found.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
        return found

    def bound_import(self, module: str) -> bool:
        """True when a top-level ``import module`` (without ``as``) binds the name the rewrite
        writes (``import defusedxml.ElementTree`` for ``defusedxml.ElementTree.parse``)."""
        for node in self.tree.body:
            if isinstance(node, ast.Import) and any(a.name == module and a.asname is None for a in node.names):
                return True
        return False

    def import_edit(self, module: str) -> Edit | None:
        """Returns the edit that adds ``import module`` after the file's last top-level import
        (after its docstring and ``__future__`` imports when it has none), or None when the file
        imports it already."""
        if self.bound_import(module):
            return None
        body = self.tree.body
        last = None
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                last = node
            elif last is not None:
                break
        if last is None:
            index = 1 if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                and isinstance(body[0].value.value, str) else 0  # type: ignore[attr-defined]
            after = body[index - 1].end_lineno if index else 0  # type: ignore[union-attr]
        else:
            after = last.end_lineno or last.lineno
        at = self._starts[after] if after < len(self._starts) else len(self.text)
        prefix = "" if at == 0 or self.text[at - 1] in "\r\n" else self.newline
        return Edit(start=at, end=at, new=f"{prefix}import {module}{self.newline}")

    def apply(self, edits: list[Edit]) -> str:
        """Returns the text with non-overlapping ``edits`` applied.

        Raises:
            ValueError: two edits overlap.
        """
        out = self.text
        last = None
        for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
            if last is not None and edit.end > last.start and not (edit.start == edit.end == last.start):
                raise ValueError(f"overlapping edits at {edit.start}..{edit.end} and {last.start}..{last.end}")
            out = out[:edit.start] + edit.new + out[edit.end:]
            last = edit
        return out


def unified_diff(path: str, before: str, after: str) -> str:
    """Returns a unified diff (``a/PATH`` -> ``b/PATH``, 3 lines of context) of two texts; each
    line keeps its own ending, so a CRLF file's diff carries its CRs."""
    lines = difflib.unified_diff(split_lines(before), split_lines(after),
                                 fromfile=f"a/{path}", tofile=f"b/{path}", n=3)
    out = []
    for line in lines:
        if not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_diff(before: str, diff: str) -> str:
    """Applies a unified diff made by ``unified_diff`` to a text; each hunk must find its old
    lines exactly, at its line number or, when lines above it moved, at the nearest place
    (as ``patch`` does, without fuzz).

    Args:
        before: The text to change.
        diff: One file's unified diff.

    Returns:
        The changed text.

    Raises:
        DiffDoesNotApply: a hunk's old lines are not in the text (the file changed).
    """
    lines = split_lines(before)
    hunks: list[tuple[int, list[str], list[str]]] = []
    current: tuple[int, list[str], list[str]] | None = None
    raw = diff.split("\n")
    for n, line in enumerate(raw):
        if line.startswith("---") or line.startswith("+++"):
            if current is None:
                continue
        match = _HUNK.match(line)
        if match:
            current = (int(match.group(1)), [], [])
            hunks.append(current)
            continue
        if current is None or (not line and n == len(raw) - 1):
            continue
        if line.startswith("\\"):  # "\ No newline at end of file": the previous line has no ending
            for side in ((current[1], current[2]) if raw[n - 1][:1] == " " else
                         (current[1],) if raw[n - 1][:1] == "-" else (current[2],)):
                if side:
                    side[-1] = side[-1][:-1]
            continue
        tag, body = line[:1], line[1:] + "\n"
        if tag in (" ", "-"):
            current[1].append(body)
        if tag in (" ", "+"):
            current[2].append(body)
    shift = 0
    for start, old, new in hunks:
        want = max(0, start - 1 + shift) if old else start + shift
        at = _find(lines, old, want)
        if at is None:
            raise DiffDoesNotApply(f"hunk at line {start} does not match the file (it changed since the patch was made)")
        lines[at:at + len(old)] = new
        shift += len(new) - len(old) + (at - want)
    return "".join(lines)


def _find(lines: list[str], old: list[str], want: int) -> int | None:
    """The index nearest ``want`` where ``old`` lines stand (``\\r`` before a line's end kept)."""
    if not old:
        return min(want, len(lines))
    for distance in range(len(lines) + 1):
        for at in (want - distance, want + distance):
            if 0 <= at <= len(lines) - len(old) and all(_same(lines[at + k], old[k]) for k in range(len(old))):
                return at
    return None


def _same(have: str, want: str) -> bool:
    """A diff line (always ``\\n``-terminated here, or bare) against the text's line."""
    if have == want:
        return True
    return want.endswith("\n") and have.endswith("\n") and have[:-1] == want[:-1]


def other_files(diff: str, path: str) -> list[str]:
    """The file names a diff's headers give other than ``path`` (a header may end in a tab and
    a timestamp, as ``diff -u`` writes them)."""
    return sorted({name for name in header_paths(diff) if path not in (name, name.split("\t")[0].rstrip())})


def header_paths(diff: str) -> list[str]:
    """The file names a diff's headers give (``--- a/PATH``, ``+++ b/PATH``, ``diff --git a/X
    b/Y``), the ``a/``/``b/`` prefix left off; lines inside a hunk (as many as its header
    counts) are not headers."""
    names: list[str] = []
    left = 0  # body lines of the current hunk still to come (old and new counted apart)
    right = 0
    for line in diff.split("\n"):
        match = _HUNK.match(line)
        if match:
            left = int(match.group(2) or 1)
            right = int(match.group(4) or 1)
            continue
        if left > 0 or right > 0:
            tag = line[:1]
            left -= tag in (" ", "-")
            right -= tag in (" ", "+")
            continue
        if line.startswith(("--- ", "+++ ")):
            name = line[4:].rstrip("\r")
            names.append(name[2:] if name.startswith(("a/", "b/")) else name)
        elif line.startswith("diff --git "):
            names += [n[2:] if n.startswith(("a/", "b/")) else n for n in line[11:].split()]
    return names


def canonical_diff(path: str, before: str, diff: str) -> str:
    """Returns the diff as ``unified_diff`` writes it for ``path``: what applying ``diff`` to
    ``before`` changes, and nothing else, under headers naming ``path`` only. A diff written by
    someone else (a model) is exported and applied in this form, so the file it names and the
    change it carries are the ones validated.

    Raises:
        ValueError: a header names another file (or ``/dev/null``), or the diff has no hunk.
        DiffDoesNotApply: its hunks are not in ``before``.
    """
    others = other_files(diff, path)
    if others:
        raise ValueError(f"the diff names another file than {path}: {', '.join(others)[:200]}")
    if not any(_HUNK.match(line) for line in diff.split("\n")):
        raise ValueError("the diff has no hunk")
    return unified_diff(path, before, apply_diff(before, diff))
