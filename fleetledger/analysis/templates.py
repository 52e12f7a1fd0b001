"""Where a Django or Jinja2 template writes a variable without escaping it.

Both engines escape ``{{ variable }}`` in HTML templates (Django always, Flask's Jinja2 for
``.html``/``.htm``/``.xml``/``.xhtml``), except where the template says not to: the ``safe`` (or
``safeseq``) filter, or an ``{% autoescape off %}`` (Django) / ``{% autoescape false %}``
(Jinja2) block. ``unescaped`` lists those places with the context variable each one reads, so
that the taint engine can treat a value a view passes under that name as reaching an HTML sink.
A loop variable (``{% for post in posts %}{{ post.body|safe }}``) reads the sequence it loops
over. The reading is lexical (the two engines' tag syntax), bounded by the text's length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TAG = re.compile(r"\{%-?\s*(.*?)\s*-?%\}|\{\{-?\s*(.*?)\s*-?\}\}", re.DOTALL)
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_FOR = re.compile(r"for\s+([A-Za-z_][A-Za-z_0-9]*(?:\s*,\s*[A-Za-z_][A-Za-z_0-9]*)*)\s+in\s+([A-Za-z_][A-Za-z_0-9]*)")
_UNSAFE_FILTERS = frozenset({"safe", "safeseq"})
_ESCAPING_FILTERS = frozenset({"escape", "e", "force_escape", "urlencode", "striptags", "length", "count"})
MAX_TEMPLATE_CHARS = 1_000_000


@dataclass(frozen=True, kw_only=True)
class Unescaped:
    """A place a template writes a context variable without escaping it.

    Attributes:
        variable: The context variable it reads (a loop variable's sequence, for a loop).
        line: 1-based line in the template.
        how: Why it is not escaped (``"the safe filter"``, ``"an autoescape off block"``).
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
    out: list[Unescaped] = []
    autoescape_off = 0
    aliases: dict[str, str] = {}
    for match in _TAG.finditer(text):
        statement, expression = match.group(1), match.group(2)
        if statement is not None:
            words = statement.split()
            if words[:1] == ["autoescape"]:
                autoescape_off += 1 if words[1:2] and words[1].lower() in ("off", "false") else 0
            elif words[:1] == ["endautoescape"] and autoescape_off:
                autoescape_off -= 1
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
        line = text.count("\n", 0, match.start()) + 1
        if filters & _UNSAFE_FILTERS:
            out.append(Unescaped(variable=variable, line=line, how="the safe filter"))
        elif autoescape_off and not filters & _ESCAPING_FILTERS:
            out.append(Unescaped(variable=variable, line=line, how="an autoescape off block"))
    return out
