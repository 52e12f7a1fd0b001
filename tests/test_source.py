"""Decoding, line numbering, columns and parsing as CPython does them (fleetledger.jobs.scan.source)."""

from __future__ import annotations

import ast
import codecs
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetledger.jobs.scan import source

NEWER = sys.version_info >= (3, 12)


# --- decode_source ---------------------------------------------------------------------------


def test_plain_utf8_decodes_without_warnings() -> None:
    decoded = source.decode_source("x = 'café'\n".encode())
    assert (decoded.text, decoded.encoding, decoded.warnings) == ("x = 'café'\n", "utf-8", ())


def test_a1a_bad_utf8_byte_is_replaced_and_its_line_named() -> None:
    decoded = source.decode_source(b"# header\n# bad: \xc2.\nimport os\nos.system(input())\n")
    assert decoded.text == "# header\n# bad: \ufffd.\nimport os\nos.system(input())\n"
    assert decoded.warnings == ("line 2 is not valid UTF-8",)


def test_bad_byte_on_line_1_is_decoded_leniently_not_refused() -> None:
    # tokenize.detect_encoding alone refuses a first line that is not UTF-8.
    decoded = source.decode_source(b"x = '\xff'\r\ny = 1\r\n")
    assert decoded.text == "x = '\ufffd'\r\ny = 1\r\n"
    assert decoded.warnings == ("line 1 is not valid UTF-8",)


def test_bad_lines_are_counted_across_lone_cr_endings() -> None:
    decoded = source.decode_source(b"a = 1\rb = '\xff'\rc = 2\r")
    assert decoded.warnings == ("line 2 is not valid UTF-8",)


def test_many_bad_lines_give_ten_warnings_and_a_summary() -> None:
    decoded = source.decode_source(b"# \xff\n" * 25)
    assert decoded.warnings[:2] == ("line 1 is not valid UTF-8", "line 2 is not valid UTF-8")
    assert decoded.warnings[10:] == ("15 more lines are not valid UTF-8",)
    assert len(decoded.warnings) == 11


def test_a2_latin1_cookie_is_honoured() -> None:
    data = '# -*- coding: latin-1 -*-\ngreeting = "café"\neval(input())\n'.encode("latin-1")
    decoded = source.decode_source(data)
    assert decoded.encoding == "iso-8859-1"
    assert 'greeting = "café"' in decoded.text
    assert decoded.warnings == ()


def test_cookie_on_line_2_is_honoured() -> None:
    data = "#!/usr/bin/env python\n# coding: cp1252\nx = '€'\n".encode("cp1252")
    assert "x = '€'" in source.decode_source(data).text


def test_bytes_the_declared_encoding_lacks_are_named_with_that_encoding() -> None:
    decoded = source.decode_source(b"# coding: cp1252\nx = '\x81'\n")  # 0x81 is unassigned in cp1252
    assert decoded.warnings == ("line 2 is not valid cp1252",)


def test_utf8_bom_is_stripped() -> None:
    decoded = source.decode_source(codecs.BOM_UTF8 + b"import os\r\n")
    assert (decoded.text, decoded.encoding) == ("import os\r\n", "utf-8-sig")


@pytest.mark.parametrize(
    "data",
    [
        codecs.BOM_UTF16_LE + "x = 1\n".encode("utf-16-le"),
        codecs.BOM_UTF16_BE + "x = 1\n".encode("utf-16-be"),
        codecs.BOM_UTF32_LE + "x = 1\n".encode("utf-32-le"),
        codecs.BOM_UTF32_BE + "x = 1\n".encode("utf-32-be"),
    ],
    ids=["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"],
)
def test_wide_encodings_with_a_bom_are_undecodable(data: bytes) -> None:
    with pytest.raises(source.UndecodableSourceError, match="^UTF-(16|32) byte order mark"):
        source.decode_source(data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"# coding: foobar\nx = 1\n", "unknown encoding: foobar"),
        (codecs.BOM_UTF8 + b"# coding: latin-1\nx = 1\n", "encoding problem"),
        (b"# coding: utf-16\nx = 1\n", "not an ASCII-compatible text encoding"),
        (b"# coding: rot13\nx = 1\n", "not an ASCII-compatible text encoding"),
        (b"# coding: idna\nx = '\xff'\n", "line 2 is not valid idna"),
    ],
)
def test_cookies_cpython_refuses_make_the_file_undecodable(data: bytes, message: str) -> None:
    with pytest.raises(source.UndecodableSourceError, match=message):
        source.decode_source(data)
    with pytest.raises(SyntaxError):
        ast.parse(data)  # CPython refuses them too


# --- lines and columns -----------------------------------------------------------------------


def test_a3b_split_lines_ignores_form_feed_and_unicode_separators() -> None:
    text = "import os\n\x0c\n# note\u2028more\nos.system(cmd)\n"
    call = ast.parse(text).body[1]
    assert call.lineno == 4
    assert source.line_text(text, 4) == "os.system(cmd)"
    assert text.splitlines()[5] == "os.system(cmd)"  # what the naive split would say: line 6


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("a\nb\n", ["a", "b", ""]),
        ("a\r\nb", ["a", "b"]),
        ("a\rb\r", ["a", "b", ""]),
        ("a\r\r\nb", ["a", "", "b"]),
        ("a\x0cb\x1cc\x85d\u2029e", ["a\x0cb\x1cc\x85d\u2029e"]),
        ("", [""]),
    ],
)
def test_split_lines(text: str, lines: list[str]) -> None:
    assert source.split_lines(text) == lines


def test_line_text_outside_the_text_is_an_index_error() -> None:
    with pytest.raises(IndexError, match="line 3 is outside 1..2"):
        source.line_text("a\nb", 3)


_STATEMENTS = [
    "x = 1",
    "y = 'é'",
    "s = '\x0c\x1c\x1d\x1e\x85\u2028\u2029'",
    "# note\u2028more\x0c",
    "\x0c",
    "  ",
    "if True: z = 2",
    "t = '\\r\\n'",
]


@settings(derandomize=True, database=None, deadline=None, max_examples=200)
@given(
    st.lists(
        st.tuples(st.sampled_from(_STATEMENTS), st.sampled_from(["\n", "\r\n", "\r"])),
        min_size=1,
        max_size=30,
    )
)
def test_split_lines_agrees_with_the_parser(pairs: list[tuple[str, str]]) -> None:
    text = "".join(statement + ending for statement, ending in pairs)
    lines = source.split_lines(text)
    assert lines[: len(pairs)] == [statement for statement, _ in pairs]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.stmt):
            assert lines[node.lineno - 1] == pairs[node.lineno - 1][0]


def test_d4_col_offset_bytes_become_characters() -> None:
    line = 'x = "ééé"; eval(y)'
    call = ast.parse(line).body[1].value
    assert call.col_offset == 14
    assert source.char_column(line, call.col_offset) == 11


@pytest.mark.parametrize(("col_offset", "column"), [(0, 0), (5, 5), (6, 5), (7, 6), (99, 8)])
def test_char_column_inside_or_past_a_character(col_offset: int, column: int) -> None:
    assert source.char_column('x = "éé"', col_offset) == column


@pytest.mark.parametrize(
    ("text", "offset", "position"),
    [("ab", 1, (1, 1)), ("a\r\nb\x00", 4, (2, 1)), ("a\rb\nc\x0cd", 6, (3, 2)), ("\n\n", 2, (3, 0))],
)
def test_position_of_offset(text: str, offset: int, position: tuple[int, int]) -> None:
    assert source.position_of_offset(text, offset) == position


# --- parse_source ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["[" * 1000 + "]" * 1000, "-" * 10000 + "1", "x" + ".a" * 20000],
    ids=["brackets-1000", "unary-10000", "attribute-20000"],
)
def test_parser_nesting_limits_become_nesting_too_deep(text: str) -> None:
    limit = sys.getrecursionlimit()
    with pytest.raises(source.UnparsableSourceError, match="^nesting too deep$"):
        source.parse_source(text)
    assert sys.getrecursionlimit() == limit


def test_syntax_error_reason_names_line_and_message() -> None:
    with pytest.raises(source.UnparsableSourceError) as caught:
        source.parse_source("x = 1\nprint 'hello'\n")
    assert str(caught.value) == (
        "syntax error at line 2: Missing parentheses in call to 'print'. Did you mean print(...)?"
    )


@pytest.mark.parametrize(
    ("line", "construct"),
    [
        ("type Command = str", "a PEP 695 type alias"),
        ("type Pair[T] = tuple[T, T]", "a PEP 695 type alias"),
        ("def first[T](items: list[T]) -> T: ...", "a PEP 695 generic function"),
        ("async def first[T](items: list[T]) -> T: ...", "a PEP 695 generic function"),
        ("class Box[T]: ...", "a PEP 695 generic class"),
        ('x = f"{d["k"]}"', "a PEP 701 f-string"),
        ("x = f'{\"\\n\".join(y)}'", "a PEP 701 f-string"),
    ],
)
def test_newer_syntax_needs_a_newer_python(line: str, construct: str) -> None:
    text = f"d = {{}}\n{line}\n"
    if NEWER:
        assert isinstance(source.parse_source(text), ast.Module)
        return
    with pytest.raises(source.UnparsableSourceError) as caught:
        source.parse_source(text)
    assert str(caught.value) == "needs a newer Python"
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert caught.value.notes == (
        f"line 2 uses {construct}, which needs Python 3.12 or newer (running {running})",
    )


@pytest.mark.parametrize(
    "text",
    [
        "type = 3\ntype x\n",
        "def f[](): pass\n" if NEWER else "def f(:\n",
        "x = f'{}'\n",
        "x = f'{{a}'\n",
    ],
)
def test_broken_code_is_not_mistaken_for_newer_syntax(text: str) -> None:
    with pytest.raises(source.UnparsableSourceError, match="^syntax error at line"):
        source.parse_source(text)
