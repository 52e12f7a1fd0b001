"""Where a Django or Jinja2 template writes a variable without escaping it, or where escaping
does not protect it.

Both engines escape ``{{ variable }}`` in HTML templates (Django always, Flask's Jinja2 for
``.html``/``.htm``/``.xml``/``.xhtml``), except where the template says not to: the ``safe`` (or
``safeseq``) filter, or an ``{% autoescape off %}`` (Django) / ``{% autoescape false %}``
(Jinja2) block (an ``on``/``true`` block inside it turns escaping back on). HTML escaping
(``& < > ' "``) protects a value only where HTML text or a quoted HTML attribute holds it, so two
more places count as unescaped (OWASP XSS Prevention Cheat Sheet, rules 3 and 3.1):

* script code: a variable inside a ``<script>`` element of a JavaScript type that is not inside
  a single- or double-quoted string literal of the script (bare code, a template literal, a
  comment) runs as code (``var page = {{ page }};`` with ``1;alert(1)``);
* an event-handler attribute (``onclick="..."``): the browser decodes the HTML escaping before
  it runs the attribute as JavaScript, so even a quoted literal there does not hold the value.

There, only filters that encode for JavaScript (Django's ``escapejs``, Jinja2's ``tojson``) or
give a number or a URL-encoded word protect the value.

``unescaped`` lists those places with the context variable each one reads, so that the taint
engine can treat a value a view passes under that name as reaching an HTML sink. A loop variable
(``{% for post in posts %}{{ post.body|safe }}``) reads the sequence it loops over. The reading
is lexical (the two engines' tag syntax, HTML's ``<script>`` and ``on*=`` attributes, and
JavaScript's string, template-literal and comment syntax; a regular-expression literal is read
as code), in time linear in the text's length.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_TAG = re.compile(r"\{%-?\s*(.*?)\s*-?%\}|\{\{-?\s*(.*?)\s*-?\}\}", re.DOTALL)
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_FOR = re.compile(r"for\s+([A-Za-z_][A-Za-z_0-9]*(?:\s*,\s*[A-Za-z_][A-Za-z_0-9]*)*)\s+in\s+([A-Za-z_][A-Za-z_0-9]*)")
_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)(?:</script\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_SCRIPT_TYPE = re.compile(r"""\btype\s*=\s*["']?([^"'\s>]*)""", re.IGNORECASE)
_JS_TYPES = frozenset({"", "text/javascript", "application/javascript", "application/x-javascript", "module",
                       "text/ecmascript", "application/ecmascript", "text/jscript", "text/babel"})
_HANDLER = re.compile(r"""(?<=\s)on[a-z]+\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)""", re.IGNORECASE)
_UNSAFE_FILTERS = frozenset({"safe", "safeseq"})
_ESCAPING_FILTERS = frozenset({"escape", "e", "force_escape", "urlencode", "striptags", "length", "count"})
_JS_SAFE_FILTERS = frozenset({"escapejs", "tojson", "json_script", "urlencode", "length", "count", "int", "float",
                              "wordcount"})
MAX_TEMPLATE_CHARS = 1_000_000
SCRIPT_CODE = "a <script> block, outside a quoted string: HTML escaping does not protect script code"
EVENT_HANDLER = "an event-handler attribute: the browser decodes HTML escaping before it runs the attribute"


@dataclass(frozen=True, kw_only=True)
class Unescaped:
    """A place a template writes a context variable without escaping it (or where its escaping
    does not protect it).

    Attributes:
        variable: The context variable it reads (a loop variable's sequence, for a loop).
        line: 1-based line in the template.
        how: Why it is not escaped (``"the safe filter"``, ``"an autoescape off block"``,
            ``SCRIPT_CODE``, ``EVENT_HANDLER``).
    """

    variable: str
    line: int
    how: str


def unescaped(text: str) -> list[Unescaped]:
    """Lists the unescaped variable writes of a template.

    Args:
        text: The template's text (only its first ``MAX_TEMPLATE_CHARS`` characters are read).

    Returns:
        The places, in order.
    """
    text = text[:MAX_TEMPLATE_CHARS]
    code_at = _script_code(text)
    handlers = [m.span(1) for m in _HANDLER.finditer(text)]  # in order, disjoint
    handler_starts = [start for start, _ in handlers]
    out: list[Unescaped] = []
    autoescape: list[bool] = []  # innermost last: True where an ``off`` block is open
    aliases: dict[str, str] = {}
    line, counted = 1, 0  # the line of offset ``counted``
    for match in _TAG.finditer(text):
        statement, expression = match.group(1), match.group(2)
        if statement is not None:
            words = statement.split()
            if words[:1] == ["autoescape"]:
                autoescape.append(bool(words[1:2]) and words[1].lower() in ("off", "false"))
            elif words[:1] == ["endautoescape"] and autoescape:
                autoescape.pop()
            loop = _FOR.match(statement)
            if loop:
                for name in loop.group(1).split(","):
                    aliases[name.strip()] = aliases.get(loop.group(2), loop.group(2))
            continue
        parts = [part.strip() for part in (expression or "").split("|")]
        head = _NAME.match(parts[0]) if parts else None
        if head is None:
            continue
        filters = {(_NAME.match(part) or re.match("", "")).group(0) for part in parts[1:]}
        variable = aliases.get(head.group(0), head.group(0))
        line, counted = line + text.count("\n", counted, match.start()), match.start()
        how = None
        if filters & _UNSAFE_FILTERS:
            how = "the safe filter"
        elif autoescape and autoescape[-1] and not filters & _ESCAPING_FILTERS:
            how = "an autoescape off block"
        elif not filters & _JS_SAFE_FILTERS:
            if match.start() in code_at:
                how = SCRIPT_CODE
            elif _inside(handlers, handler_starts, match.start()):
                how = EVENT_HANDLER
        if how is not None:
            out.append(Unescaped(variable=variable, line=line, how=how))
    return out


def _inside(spans: list[tuple[int, int]], starts: list[int], offset: int) -> bool:
    """Whether ``offset`` is in one of ``spans`` (disjoint, in order; ``starts`` their starts)."""
    at = bisect.bisect_right(starts, offset) - 1
    return at >= 0 and offset < spans[at][1]


def _script_code(text: str) -> set[int]:
    """The offsets of the template tags (``{{`` ...) that stand in script code: inside a
    ``<script>`` element of a JavaScript type and not inside a single- or double-quoted string
    literal. One pass over each script (a template tag is read as one opaque token)."""
    found: set[int] = set()
    for script in _SCRIPT.finditer(text):
        kind = _SCRIPT_TYPE.search(script.group(1))
        if kind is not None and kind.group(1).lower() not in _JS_TYPES:
            continue  # a data block (application/json, text/template): not run as code
        i, end, mode = script.start(2), script.end(2), "code"
        while i < end:
            char = text[i]
            if char == "{" and text[i + 1:i + 2] in ("{", "%", "#"):
                close = text.find({"{": "}}", "%": "%}", "#": "#}"}[text[i + 1]], i + 2, end)
                if text[i + 1] == "{" and mode not in ("'", '"'):
                    found.add(i)
                i = end if close < 0 else close + 2
                continue
            if mode == "code":
                if char in "'\"`":
                    mode = char
                elif text.startswith("//", i) or text.startswith("/*", i):
                    mode, i = text[i:i + 2], i + 1
            elif mode in ("'", '"', "`"):
                if char == "\\":
                    i += 1
                elif char == mode or (char == "\n" and mode != "`"):
                    mode = "code"
            elif mode == "//" and char == "\n" or mode == "/*" and text.startswith("*/", i):
                i += 1 if mode == "/*" else 0
                mode = "code"
            i += 1
    return found
