"""Which parser reads a scanned file: the host's ``ast.parse`` first, tree-sitter for newer syntax.

The host's parser is exact (it is CPython) and the fastest for everything it accepts, so it
always runs first. Only when it raises ``SyntaxError`` does ``tsconvert`` try, because the file
may use syntax newer than the running interpreter (f-strings of PEP 701, type parameters of
PEP 695/696, ``except A, B:`` of PEP 758, t-strings of PEP 750); it returns the tree CPython
3.14 would give, in the host's node classes. A file neither accepts is a ``ParseError`` the
scanner reports as a diagnostic, never a crash.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Literal

from fleetledger.analysis import tsconvert, type_comments

__all__ = ["ParseError", "ParsedModule", "parse_module"]

# CPython's messages for input nested beyond its limits (tokenizer, parser, AST builder).
_TOO_DEEP = re.compile(r"too many nested|too many levels|too complex|recursion|stack overflow", re.IGNORECASE)


class ParseError(ValueError):
    """The file is not Python that the host or tree-sitter can parse; report it and skip the file.

    Attributes:
        lineno: The line the message names, or None (for "nesting too deep").
    """

    def __init__(self, message: str, *, lineno: int | None = None) -> None:
        super().__init__(message)
        self.lineno = lineno

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (str(self), self.lineno))


def _rebuild(message: str, lineno: int | None) -> ParseError:
    return ParseError(message, lineno=lineno)


@dataclass(frozen=True, kw_only=True)
class ParsedModule:
    """A parsed file and how it was parsed.

    Attributes:
        module: The syntax tree, in the host's ``ast`` classes (plus ``tsconvert``'s stand-ins
            for node types the host lacks, when ``parser`` is "tree-sitter").
        parser: "cpython" when the host's ``ast.parse`` read the file, "tree-sitter" when it
            refused and ``tsconvert.convert`` read it.
        host_error: Why the host refused the file (``line 3: f-string: expecting '}'``), or
            None when it did not.
    """

    module: ast.Module
    parser: Literal["cpython", "tree-sitter"]
    host_error: str | None = None


def parse_module(text: str) -> ParsedModule:
    """Parses a Python file's text with the host's parser, or with tree-sitter if it must.

    Read-only and thread-safe.

    Args:
        text: The decoded source; a leading BOM is ignored.

    Returns:
        The module and which parser produced it.

    Raises:
        ParseError: neither parser accepts the text. The message is the host's
            (``syntax error at line N: msg``), or "nesting too deep" when the host ran out of
            stack or memory or reported too many nested parentheses or levels of indentation
            (then tree-sitter is not tried: CPython 3.14 would refuse the file too).
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return ParsedModule(module=_with_type_comments(text) or ast.parse(text), parser="cpython", host_error=None)
    except SyntaxError as error:
        message = f"syntax error at line {error.lineno if error.lineno is not None else '?'}: {error.msg}"
        if _TOO_DEEP.search(error.msg or ""):
            raise ParseError(f"{message} (nesting too deep)", lineno=error.lineno) from None
        host_error = f"line {error.lineno}: {error.msg}"
        lineno = error.lineno
    except (RecursionError, MemoryError):
        raise ParseError("nesting too deep: the host parser ran out of stack or memory") from None
    except ValueError as error:  # Python 3.11: "source code string cannot contain null bytes"
        raise ParseError(f"syntax error at line 1: {error}", lineno=1) from None
    try:
        module = tsconvert.convert(text)
    except tsconvert.TreeSitterSyntaxError:
        raise ParseError(message, lineno=lineno) from None
    return ParsedModule(module=module, parser="tree-sitter", host_error=host_error)


def _with_type_comments(text: str) -> ast.Module | None:
    """The host's tree with the functions' PEP 484 type comments as annotations
    (``type_comments.annotate``), or None when the text has none, or one the host's parser
    refuses where it stands (a ``# type:`` comment on a line of its own is a syntax error with
    ``type_comments=True``): the tree is then parsed without them."""
    if not type_comments.MARKER.search(text):
        return None
    try:
        tree = ast.parse(text, type_comments=True)
    except (SyntaxError, ValueError):
        return None
    type_comments.annotate(tree)
    return tree
