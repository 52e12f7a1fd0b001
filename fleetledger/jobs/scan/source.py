"""Python source as CPython's tokenizer and parser see it: text, line numbers, columns, tree.

Scanners that decode or number lines their own way report findings on the wrong line (or
crash). This module does each step the way CPython does, so every position the scan reports
is the parser's:

* **Decoding**: a UTF-8 byte order mark, else a PEP 263 coding cookie on line 1 or 2
  (``tokenize.detect_encoding``), else UTF-8. Where the bytes are not valid in that encoding the
  line is decoded leniently (``errors="replace"``) and a warning names the line; CPython itself
  accepts some such bytes (in comments) and rejects others, and the scan prefers reading the
  rest of the file to skipping it.
* **Lines**: the parser ends a line at ``\\n``, ``\\r\\n`` or a lone ``\\r`` and nowhere else;
  ``str.splitlines()`` also splits at ``\\x0c``, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028`` and
  ``\\u2029`` and so drifts.
* **Columns**: ``ast`` ``col_offset`` counts UTF-8 bytes into the line, not characters.
* **Parsing**: ``ast.parse`` with its failures turned into one-line reasons (``"nesting too
  deep"``, ``"needs a newer Python"``, ``"syntax error at line N: msg"``).
"""

from __future__ import annotations

import ast
import codecs
import io
import re
import sys
import tokenize
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_BREAK_BYTES = re.compile(rb"(\r\n|\r|\n)")

# Byte order marks of encodings the tokenizer cannot read (UTF-32 first: its LE mark starts
# with UTF-16's).
_WIDE_BOMS = (
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
)
_ASCII_PROBE = "\r\n\t #-=az09"

# Individual bad lines named in warnings before the rest are summarised in one.
_MAX_LINE_WARNINGS = 10

_NEWER_SYNTAX_LINE = (
    (re.compile(r"^[ \t\f]*type[ \t\f]+\w+[ \t\f]*[\[=]"), "a PEP 695 type alias"),
    (re.compile(r"^[ \t\f]*(?:async[ \t\f]+)?def[ \t\f]+\w+[ \t\f]*\["), "a PEP 695 generic function"),
    (re.compile(r"^[ \t\f]*class[ \t\f]+\w+[ \t\f]*\["), "a PEP 695 generic class"),
)
_FSTRING_OPENING = re.compile(r"(?i)(?<!\w)(?:rf|fr|f)(['\"])(?!\1\1)")
_TOO_DEEP_MESSAGES = ("too many nested parentheses", "too many levels of indentation")


class UndecodableSourceError(ValueError):
    """The bytes cannot be read as Python source in any way CPython would (a UTF-16 file, an
    unknown or non-ASCII-compatible coding cookie); the message says which."""


class UnparsableSourceError(ValueError):
    """The text does not parse; the message is the one-line skip reason.

    Attributes:
        notes: Extra facts for the report, e.g. which line uses syntax of a newer Python.
    """

    def __init__(self, reason: str, *, notes: tuple[str, ...] = ()) -> None:
        super().__init__(reason)
        self.notes = notes


@dataclass(frozen=True, kw_only=True)
class DecodedSource:
    """A source file's text as the tokenizer decodes it.

    Attributes:
        text: The decoded text, without a byte order mark; line endings are kept as in the file.
        encoding: The encoding used, as ``tokenize.detect_encoding`` names it (``"utf-8"``,
            ``"utf-8-sig"`` with a byte order mark, ``"iso-8859-1"`` for a Latin-1 cookie...).
        warnings: One per line that was not valid in that encoding (``"line 2 is not valid
            UTF-8"``; after ten, one summary of the rest).
    """

    text: str
    encoding: str
    warnings: tuple[str, ...] = ()


def decode_source(data: bytes) -> DecodedSource:
    """Decodes a Python file's bytes as CPython's tokenizer does, leniently where they are bad.

    Args:
        data: The whole file.

    Returns:
        The text, the encoding used and a warning per line that did not decode cleanly.

    Raises:
        UndecodableSourceError: the file starts with a UTF-16 or UTF-32 byte order mark, or its
            coding cookie names an unknown encoding, a non-text or non-ASCII-compatible codec,
            or contradicts its UTF-8 byte order mark (CPython rejects all of these); or a line
            is invalid in a codec that cannot decode leniently.
    """
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            raise UndecodableSourceError(
                f"{name} byte order mark (Python reads source only in ASCII-compatible encodings)"
            )
    encoding = _declared_encoding(data)
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    body = data[len(codecs.BOM_UTF8):] if encoding == "utf-8-sig" else data
    try:
        compatible = _ASCII_PROBE.encode("ascii").decode(codec) == _ASCII_PROBE
    except (LookupError, UnicodeError):
        compatible = False
    if not compatible:
        raise UndecodableSourceError(f"encoding {encoding!r} is not an ASCII-compatible text encoding")
    try:
        return DecodedSource(text=body.decode(codec), encoding=encoding)
    except UnicodeError:
        return _decode_by_line(body, codec, encoding)


def _declared_encoding(data: bytes) -> str:
    # tokenize.detect_encoding gives up on a first or second line that is not UTF-8 even when
    # the C tokenizer would read it; show it those two lines with bad bytes replaced (the
    # cookie itself is ASCII, so this changes nothing it looks for).
    stream = io.BytesIO(data)
    head = iter([stream.readline(), stream.readline()])
    try:
        encoding, _ = tokenize.detect_encoding(
            lambda: next(head, b"").decode("utf-8", "replace").encode("utf-8")
        )
    except SyntaxError as error:
        raise UndecodableSourceError(f"bad coding cookie: {error.msg}") from error
    return encoding


def _decode_by_line(body: bytes, codec: str, encoding: str) -> DecodedSource:
    label = "UTF-8" if codec == "utf-8" else encoding
    pieces = _LINE_BREAK_BYTES.split(body)  # line, break, line, break, ..., line
    parts: list[str] = []
    bad_lines: list[int] = []
    for index in range(0, len(pieces), 2):
        try:
            parts.append(pieces[index].decode(codec))
        except UnicodeError:
            bad_lines.append(index // 2 + 1)
            try:
                parts.append(pieces[index].decode(codec, "replace"))
            except UnicodeError as error:  # a codec without lenient decoding (idna)
                raise UndecodableSourceError(f"line {bad_lines[-1]} is not valid {label}") from error
        if index + 1 < len(pieces):
            parts.append(pieces[index + 1].decode("ascii"))
    warnings = [f"line {n} is not valid {label}" for n in bad_lines[:_MAX_LINE_WARNINGS]]
    if len(bad_lines) > _MAX_LINE_WARNINGS:
        warnings.append(f"{len(bad_lines) - _MAX_LINE_WARNINGS} more lines are not valid {label}")
    return DecodedSource(text="".join(parts), encoding=encoding, warnings=tuple(warnings))


def split_lines(text: str) -> list[str]:
    """Splits text into lines exactly where Python's parser ends them.

    Args:
        text: Decoded source text.

    Returns:
        The lines without their endings; item ``n - 1`` is the parser's line ``n``. Text ending
        in a line break gives a final empty item, which no node is ever on.
    """
    return _LINE_BREAK.split(text)


def line_text(text: str, lineno: int) -> str:
    """Returns line ``lineno`` of the text as Python's parser numbers lines.

    Args:
        text: Decoded source text.
        lineno: 1-based line number, as ``ast`` ``lineno`` gives it.

    Returns:
        The line without its ending.

    Raises:
        IndexError: ``lineno`` is not a line of the text (a caller's mistake).
    """
    lines = split_lines(text)
    if not 1 <= lineno <= len(lines):
        raise IndexError(f"line {lineno} is outside 1..{len(lines)}")
    return lines[lineno - 1]


def char_column(line: str, col_offset: int) -> int:
    """Converts an ``ast`` ``col_offset`` (UTF-8 bytes into the line) to a character column.

    Args:
        line: The text of the node's line.
        col_offset: The node's ``col_offset``.

    Returns:
        The 0-based character column; an offset inside a character counts up to that character,
        an offset past the end gives the line's length.
    """
    return len(line.encode("utf-8", "surrogatepass")[:col_offset].decode("utf-8", "ignore"))


def position_of_offset(text: str, offset: int) -> tuple[int, int]:
    """Returns the parser's line and character column of a character offset into the text.

    Args:
        text: Decoded source text.
        offset: 0-based index of a character in ``text``.

    Returns:
        ``(line, column)``: 1-based line as the parser numbers it, 0-based character column.
    """
    line, start = 1, 0
    for match in _LINE_BREAK.finditer(text, 0, offset):
        line, start = line + 1, match.end()
    return line, offset - start


def parse_source(text: str) -> ast.Module:
    """Parses decoded source with the running Python's parser, turning failures into reasons.

    Warnings the parser emits (invalid escape sequences...) are left to the caller to silence.

    Args:
        text: Decoded source text (from ``decode_source``).

    Returns:
        The syntax tree.

    Raises:
        UnparsableSourceError: the text does not parse. The message is ``"nesting too deep"``
            when the parser ran out of stack or hit its nesting limits, ``"needs a newer
            Python"`` when the failing line uses syntax of a later Python than this one (with
            a note naming the line and the construct), else ``"syntax error at line N: msg"``.
    """
    try:
        return ast.parse(text)
    except (RecursionError, MemoryError) as error:
        # The 3.11 parser reports deep unary chains as MemoryError, deep trees as
        # RecursionError ("during ast construction"); neither is about this process's memory.
        raise UnparsableSourceError("nesting too deep") from error
    except SyntaxError as error:
        raise _unparsable(text, error) from error


def _unparsable(text: str, error: SyntaxError) -> UnparsableSourceError:
    message = error.msg or "invalid syntax"
    if message.startswith(_TOO_DEEP_MESSAGES):
        return UnparsableSourceError("nesting too deep")
    lines = split_lines(text)
    if error.lineno and 1 <= error.lineno <= len(lines):
        construct = _newer_syntax(lines[error.lineno - 1], message)
        if construct:
            running = f"{sys.version_info.major}.{sys.version_info.minor}"
            note = (
                f"line {error.lineno} uses {construct}, which needs Python 3.12 or newer"
                f" (running {running})"
            )
            return UnparsableSourceError("needs a newer Python", notes=(note,))
        return UnparsableSourceError(f"syntax error at line {error.lineno}: {message}")
    return UnparsableSourceError(f"syntax error: {message}")


def _newer_syntax(line: str, message: str) -> str | None:
    """Names the 3.12 construct on a line a pre-3.12 parser rejected, if it is one."""
    if sys.version_info >= (3, 12):
        return None  # These constructs parse here, so the error is a real one.
    for pattern, construct in _NEWER_SYNTAX_LINE:
        if pattern.match(line):
            return construct
    if message.startswith("f-string") and (
        "backslash" in message or "'#'" in message or _fstring_reuses_quote(line)
    ):
        return "a PEP 701 f-string"
    return None


def _fstring_reuses_quote(line: str) -> bool:
    """Tells whether a single-quoted f-string on the line uses its own quote inside ``{...}``."""
    for opening in _FSTRING_OPENING.finditer(line):
        quote, depth, index = opening.group(1), 0, opening.end()
        while index < len(line):
            char = line[index]
            if char == quote:
                if depth:
                    return True
                break
            if char == "\\" and not depth:
                index += 1
            elif char == "{" and not depth and line.startswith("{{", index):
                index += 1
            elif char == "{":
                depth += 1
            elif char == "}" and depth:
                depth -= 1
            index += 1
    return False
