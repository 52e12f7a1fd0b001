"""Making untrusted text safe to show: on a terminal, in Markdown, in HTML.

File names, snippets, messages and model answers come from the scanned repository or a model,
so they may hold characters a terminal or a viewer acts on instead of showing: ``ESC ]0;...``
retitles the window, ``ESC [2J`` clears the screen, a C1 ``CSI`` (U+009B) does the same on
some terminals, a carriage return overwrites the line, and the Unicode bidi controls reorder
what is shown ("Trojan Source", CVE-2021-42574). ``printable`` replaces each such character by
a visible escape in Python's notation, so the text is still read (and searched) as what it is:

- C0 controls U+0000-U+001F (except the ones the caller keeps, newline and tab by default),
  DEL U+007F and C1 controls U+0080-U+009F (Unicode category Cc): ``\\x1b``, ``\\x9b``;
- format characters (category Cf): the bidi embeddings, overrides and isolates
  U+202A-U+202E and U+2066-U+2069, the marks U+200E, U+200F and U+061C, zero-width
  characters (U+200B-U+200D, U+2060, U+FEFF), the soft hyphen, tag characters: ``\\u202e``,
  ``\\U000e0041``;
- the line and paragraph separators U+2028 and U+2029 (categories Zl, Zp);
- lone surrogates (category Cs: a file name that is not UTF-8): ``\\udcff``.

A backslash is left as it is (a snippet's ``"\\d"`` stays readable), so an escape shown is
either one of these or a backslash the text itself held. JSON keeps the exact text:
``json_text`` writes the same characters as JSON escapes (``findings.json``, SARIF, the CLI's
JSON output), so the data decodes unchanged and ``cat`` shows no raw control character.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["json_text", "printable"]

_ESCAPED = re.compile(
    "[\x00-\x1f\x7f-\x9f"  # C0, DEL, C1 (Cc)
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"  # format characters (Cf)...
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"  # ...bidi, zero-width
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"  # tag characters
    "\u2028\u2029"  # line and paragraph separators (Zl, Zp)
    "\ud800-\udfff]"  # lone surrogates (Cs)
)
"""The characters escaped: the code points of Unicode 15.1's categories Cc, Cf, Zl, Zp and Cs, written out (not read
from ``unicodedata``) so that equal reports give equal bytes under any Python."""


def _python_escape(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _json_escape(code: int) -> str:
    if code < 0x10000:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)  # JSON has no \\U: a UTF-16 surrogate pair
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"


def _escape(text: str, escape: Callable[[int], str], keep: str) -> str:
    def one(match: re.Match[str]) -> str:
        char = match.group()
        return char if char in keep else escape(ord(char))

    return _ESCAPED.sub(one, text)


def printable(text: str, *, keep: str = "\n\t") -> str:
    """Returns ``text`` with every character a display could act on replaced by a visible
    escape (see the module docstring for which, and how they are written).

    Pure and idempotent on its own output; text without such characters comes back unchanged.

    Args:
        text: Untrusted text (a path, a snippet, a message, a model's answer).
        keep: Control characters that are left as they are where they belong: newline and tab
            by default; ``""`` for text that must stay on one line (a file name in a list).

    Returns:
        The text, safe to write to a terminal or into Markdown or HTML (after their own
        escaping of markup).
    """
    return _escape(text, _python_escape, keep)


def json_text(document: str) -> str:
    """Returns a JSON document (e.g. ``json.dumps(..., ensure_ascii=False)``) with the same
    characters ``printable`` escapes written as JSON ``\\uXXXX`` escapes.

    Outside strings a JSON document holds no such character, so the result is valid JSON that
    decodes to exactly the same data, and safe to print on a terminal.

    Args:
        document: A JSON text.

    Returns:
        The same JSON, with those characters escaped; newline and tab are kept (between
        tokens they are JSON whitespace, and inside a string ``json.dumps`` already escaped
        them).
    """
    return _escape(document, _json_escape, "\n\t")
