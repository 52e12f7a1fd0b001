"""Converting string literals: prefixes, escape sequences decoded as CPython's decoders read
them, implicit concatenation, f-strings (PEP 701) and t-strings (PEP 750) with their
replacement fields, conversions and format specs. Part of the tree-sitter converter
(``tsconvert._Converter``).
"""

from __future__ import annotations

import ast
import re
import unicodedata
from typing import Any

from tree_sitter import Node

from .ts_nodes import _at, _from_to, _kids, _mk, Interpolation, TemplateStr

_STRING_PREFIXES = frozenset(["", "r", "u", "b", "br", "rb", "f", "fr", "rf", "t", "tr", "rt"])

# Escape sequences of str and bytes literals, as CPython's decoders read them.
_ESCAPE = re.compile(r"\\(\n|[\\'\"abfnrtv]|[0-7]{1,3}|x[0-9a-fA-F]{2}|x|u[0-9a-fA-F]{4}|u|U[0-9a-fA-F]{8}|U"
                     r"|N\{[^}]*\}|N|.)", re.S)
_FSTRING_ESCAPE = re.compile(_ESCAPE.pattern + r"|\{\{|\}\}", re.S)
_SIMPLE_ESCAPES = {"\n": "", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f",
                   "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class _Strings:
    """String conversion, mixed into ``tsconvert._Converter``."""

    def _strings(self, node: Node) -> ast.expr:
        """A string literal or an implicit concatenation, as CPython's parser folds them.

        The text between a string's quotes is read from the source, not from tree-sitter's
        ``string_content`` nodes (which a raw string's trailing backslashes can escape into
        ``string_end``); the literal parts of an f-string are the gaps between its fields.
        """
        strings = [node] if node.type == "string" else [child for child in node.children if child.type == "string"]
        if len(strings) == 1:
            kids = node.children
            head = self._token(kids[0])
            if "f" not in head and "t" not in head and "F" not in head and "T" not in head:
                return self._plain_string(node, kids[0], head)
        # The general case, after CPython's _PyPegen_concatenate_strings.
        pieces: list[Any] = []
        has_fstring = has_bytes = has_str = has_template = False
        for string in strings:
            kids = string.children
            head = self._token(kids[0])
            prefix = head.rstrip("'\"").lower()
            if "t" in prefix:
                has_template = has_fstring = True
                pieces.extend(self._fstring_pieces(string, kids, head, template=True))
            elif "f" in prefix:
                has_str = has_fstring = True
                pieces.extend(self._fstring_pieces(string, kids, head, template=False))
            else:
                constant = self._plain_string(string, kids[0], head)
                if type(constant.value) is bytes:
                    has_bytes = True
                else:
                    has_str = True
                pieces.append(constant)
        if has_bytes and (has_str or has_template):
            raise self._error(node, "cannot mix bytes and nonbytes literals")
        if has_template and has_str:
            raise self._error(node, "cannot mix t-string literals with string or bytes literals")
        if has_bytes:
            value = b"".join(piece.value for piece in pieces)
            return _at(ast.Constant, {"value": value, "kind": pieces[0].kind}, node)
        folded = []
        index = 0
        count = len(pieces)
        while index < count:
            piece = pieces[index]
            if type(piece) is ast.Constant:
                end = index + 1
                while end < count and type(pieces[end]) is ast.Constant:
                    end += 1
                if end - index > 1:
                    value = "".join(part.value for part in pieces[index:end])
                    piece = _mk(ast.Constant, {"value": value, "kind": piece.kind}, _from_to(piece, pieces[end - 1]))
                index = end
                if has_fstring and not piece.value:
                    continue
            else:
                index += 1
            folded.append(piece)
        if not has_fstring:
            return folded[0]
        return _at(TemplateStr if has_template else ast.JoinedStr, {"values": folded}, node)

    def _string_head(self, node: Node, head: str) -> tuple[str, int]:
        """The lower-case prefix of a string and the length of its quotes; checks both."""
        quote = 3 if head.endswith(('"""', "'''")) else 1
        prefix = head[:-quote].lower()
        if prefix not in _STRING_PREFIXES or not head.endswith(("'", '"')):
            raise self._error(node, f"invalid string prefix or quote {head!r}")
        return prefix, quote

    def _plain_string(self, node: Node, start: Node, head: str) -> ast.expr:
        prefix, quote = self._string_head(node, head)
        text = self._source[start.end_byte:node.end_byte - quote].decode()
        if "b" in prefix:
            value: Any = self._decode_bytes(node, text, "r" in prefix)
        elif "r" in prefix or "\\" not in text:
            value = text
        else:
            value = self._decode_str(node, text, _ESCAPE)
        return _at(ast.Constant, {"value": value, "kind": "u" if prefix == "u" else None}, node)

    def _decode_str(self, node: Node, text: str, pattern: re.Pattern[str]) -> str:
        """Decodes the escapes of a str literal (and ``{{``/``}}`` with ``_FSTRING_ESCAPE``)."""
        def replace(match: re.Match[str]) -> str:
            escape = match.group(1)
            if escape is None:
                return match.group(0)[0]
            simple = _SIMPLE_ESCAPES.get(escape)
            if simple is not None:
                return simple
            head = escape[0]
            if head in "01234567":
                return chr(int(escape, 8))
            if head in "xuU" and len(escape) > 1:
                code = int(escape[1:], 16)
                if code > 0x10FFFF:
                    raise self._error(node, f"(unicode error) illegal Unicode character \\{escape}")
                return chr(code)
            if head in "xuU":
                raise self._error(node, f"(unicode error) truncated \\{head} escape")
            if head == "N":
                if len(escape) < 3:
                    raise self._error(node, "(unicode error) malformed \\N character escape")
                try:
                    char = unicodedata.lookup(escape[2:-1])
                except KeyError:
                    raise self._error(node, f"(unicode error) unknown Unicode character name {escape[2:-1]!r}") from None
                if len(char) != 1:
                    raise self._error(node, f"(unicode error) {escape[2:-1]!r} is a named sequence")
                return char
            return "\\" + escape

        return pattern.sub(replace, text)

    def _decode_bytes(self, node: Node, text: str, raw: bool) -> bytes:
        if not text.isascii():
            raise self._error(node, "bytes can only contain ASCII literal characters")
        if raw or "\\" not in text:
            return text.encode("ascii")

        def replace(match: re.Match[str]) -> str:
            escape = match.group(1)
            simple = _SIMPLE_ESCAPES.get(escape)
            if simple is not None:
                return simple
            head = escape[0]
            if head in "01234567":
                return chr(int(escape, 8) & 0xFF)
            if head == "x":
                if len(escape) == 1:
                    raise self._error(node, "(value error) invalid \\x escape")
                return chr(int(escape[1:], 16))
            return "\\" + escape

        return _ESCAPE.sub(replace, text).encode("latin-1")

    def _literal(self, owner: Node, start: int, stop: int, begin: Any, end: Any, raw: bool) -> ast.expr | None:
        """The Constant for the literal text between two byte offsets of an f-string, if any."""
        if start >= stop:
            return None
        text = self._source[start:stop].decode()
        if raw:
            text = text.replace("{{", "{").replace("}}", "}")
        elif "\\" in text or "{" in text or "}" in text:
            text = self._decode_str(owner, text, _FSTRING_ESCAPE)
        return _mk(ast.Constant, {"value": text, "kind": None}, (begin[0] + 1, begin[1], end[0] + 1, end[1]))

    def _fstring_pieces(self, node: Node, kids: list[Node], head: str, template: bool) -> list[Any]:
        """An f-string's (or t-string's) parts: Constants for the gaps, then the fields."""
        prefix, quote = self._string_head(node, head)
        if "b" in prefix:
            raise self._error(node, f"invalid string prefix {prefix!r}")
        raw = "r" in prefix
        pieces = []
        previous = kids[0]
        for child in kids:
            if child.type == "interpolation":
                literal = self._literal(node, previous.end_byte, child.start_byte, previous.end_point,
                                        child.start_point, raw)
                if literal is not None:
                    pieces.append(literal)
                pieces.extend(self._interpolation(child, template, raw))
                previous = child
        end = node.end_point
        literal = self._literal(node, previous.end_byte, node.end_byte - quote, previous.end_point,
                                (end[0], end[1] - quote), raw)
        if literal is not None:
            pieces.append(literal)
        return pieces

    def _interpolation(self, node: Node, template: bool, raw: bool) -> list[Any]:
        """A replacement field: [FormattedValue] or, with ``=``, [Constant, FormattedValue]."""
        kids = _kids(node)
        expression = kids[1]
        if expression.type == "named_expression":
            return self._walrus_lookalike(node, kids, template, raw)
        value = self._fstring_expression(expression)
        index = 2
        debug = kids[index].type == "="
        if debug:
            index += 1
        after_expression = kids[index]
        conversion = -1
        if after_expression.type == "type_conversion":
            letter = self._token(after_expression)[1:]
            if letter not in ("s", "r", "a"):
                raise self._error(after_expression, f"f-string: invalid conversion character {letter!r}: "
                                                    "expected 's', 'r', or 'a'")
            conversion = ord(letter)
            index += 1
        spec = None
        if kids[index].type == "format_specifier":
            spec = self._format_spec(kids[index], raw)
            index += 1
        if debug and conversion == -1 and spec is None:
            conversion = ord("r")
        pieces = []
        if debug:
            text = self._expression_text(node, kids[0].end_byte, after_expression.start_byte)
            start = kids[0].end_point
            end = after_expression.start_point
            pos = (start[0] + 1, start[1], end[0] + 1, end[1])
            pieces.append(_mk(ast.Constant, {"value": text, "kind": None}, pos))
        if template:
            stop = kids[2] if debug else after_expression
            text = self._expression_text(node, kids[0].end_byte, stop.start_byte).rstrip(" \t\n\r\f\v")
            fields = {"value": value, "str": text, "conversion": conversion, "format_spec": spec}
            pieces.append(_at(Interpolation, fields, node))
        else:
            fields = {"value": value, "conversion": conversion, "format_spec": spec}
            pieces.append(_at(ast.FormattedValue, fields, node))
        return pieces

    def _walrus_lookalike(self, node: Node, kids: list[Node], template: bool, raw: bool) -> list[Any]:
        """``{x:=10}`` in an f-string: ``x`` formatted with the spec ``=10`` (not a walrus)."""
        name, walrus = _kids(kids[1])[:2]
        close = kids[-1]
        if len(kids) != 3 or b"{" in self._source[walrus.start_byte:close.start_byte]:
            raise self._error(node, "f-string: this format spec starting with '=' is not supported")
        colon = walrus.start_point
        after = (colon[0], colon[1] + 1)
        literal = self._literal(node, walrus.start_byte + 1, close.start_byte, after, close.start_point, raw)
        begin = close.start_point
        spec = _mk(ast.JoinedStr, {"values": [literal] if literal is not None else []},
                   (colon[0] + 1, colon[1], begin[0] + 1, begin[1]))
        fields: dict[str, Any] = {"value": self._name(name), "conversion": -1, "format_spec": spec}
        if template:
            fields["str"] = self._expression_text(node, kids[0].end_byte, walrus.start_byte).rstrip(" \t\n\r\f\v")
            return [_at(Interpolation, fields, node)]
        return [_at(ast.FormattedValue, fields, node)]

    def _expression_text(self, node: Node, start: int, stop: int) -> str:
        """The source between byte offsets ``start`` and ``stop`` of a replacement field, without
        comments (as CPython 3.14 keeps a debug text or an Interpolation's ``str``)."""
        raw = self._source[start:stop]
        if b"#" not in raw:
            return raw.decode()
        comments = []
        stack = [node]
        while stack:
            current = stack.pop()
            for child in current.children:
                if child.type == "comment":
                    if start <= child.start_byte < stop:
                        comments.append((child.start_byte, child.end_byte))
                elif child.child_count:
                    stack.append(child)
        parts = []
        offset = start
        for begin, end in sorted(comments):
            parts.append(self._source[offset:begin])
            offset = end
        parts.append(self._source[offset:stop])
        return b"".join(parts).decode()

    def _fstring_expression(self, node: Node) -> ast.expr:
        if node.type in ("expression_list", "pattern_list"):
            return self._bare_tuple(node)
        if node.type == "list_splat":
            raise self._error(node, "f-string: cannot use starred expression here")
        return self.expr(node)

    def _format_spec(self, node: Node, raw: bool) -> ast.expr:
        """A format spec: its literal text is what lies between the nested fields."""
        values = []
        kids = _kids(node)
        previous = kids[0]
        for child in kids[1:]:
            literal = self._literal(node, previous.end_byte, child.start_byte, previous.end_point,
                                    child.start_point, raw)
            if literal is not None:
                values.append(literal)
            values.extend(self._interpolation(child, False, raw))
            previous = child
        literal = self._literal(node, previous.end_byte, node.end_byte, previous.end_point, node.end_point, raw)
        if literal is not None:
            values.append(literal)
        return _at(ast.JoinedStr, {"values": values}, node)
