"""The two records every kind of model entry depends on: the vulnerability kinds (``Kind``) and
the conditions on a call's arguments (``Condition``). Re-exported by ``model_records``, which
holds the rest of the records and the ``Catalog``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Kind:
    """A vulnerability class a sink belongs to.

    Attributes:
        name: Short name, e.g. ``"sql"``.
        cwe: The CWE number.
        title: A title for reports, e.g. ``"SQL injection"``.
        channels: Label channels that make a flow a finding of this kind (``"random"`` for
            weak randomness; the outside-data channels for injections).
        blocked_by: ``(text, after, flag)``: a value without ``text`` cannot do this kind's
            harm when placed in a string right after a text ending with ``after`` (``".."``
            after a folder's ``/``); with flag ``"inside"``, only when that ``after`` opens a
            literal (an odd number of them before: a quote inside that quote); with ``"last"``,
            it can at most name a folder when nothing holding ``after`` follows it (``"../"``:
            ``..`` alone, the folder's parent), harmless for sinks that need a file
            (``Sink.needs_file``). A check that the value holds no ``text`` makes it safe
            where it is so placed (``marks.placed_after``).
        literal_quotes: Quotes that delimit a literal in this kind's language: a value checked
            to be one whole literal in such a quote, with none inside (``x.startswith("'") and
            x.endswith("'") and "'" not in x[1:-1]``), is inert as the whole input of a sink of
            this kind (``eval`` of a string literal only makes a string).
        checks_make_safe: False for a kind that outside data does however it was checked or
            transformed (a trust boundary: the session then holds what the client chose, if
            only digits); only a value built from constants is safe for it.
    """

    name: str
    cwe: int
    title: str
    channels: frozenset[str]
    blocked_by: tuple[tuple[str, str, str], ...] = ()
    literal_quotes: frozenset[str] = frozenset()
    checks_make_safe: bool = True


@dataclass(frozen=True, kw_only=True)
class Condition:
    """A condition on a call's arguments, read from the constants the engine knows.

    Attributes:
        keywords: Keyword name -> constant it must equal (``{"shell": True}``), one of a
            list of constants, or a table naming a test of a container argument:
            ``{ contains = ["none"] }`` (a list or tuple holding one of them), ``{ has =
            { verify_signature = false } }`` (a dict holding that key with that value), or a
            test of a string argument: ``{ endswith = [".py"] }`` (every value ends with one
            of them: its constant, or its constant ``suffix``), ``{ has_text = ["w", "a"] }``
            (every value holds one of them: its constant, or the texts the engine knows it
            holds, ``Value.texts``), or both in one table; a keyword that is not passed takes
            the value in ``defaults``.
        defaults: Keyword name -> the value the library uses when it is not passed.
        positions: Keyword name -> the position the same parameter has when passed
            positionally.
    """

    keywords: Mapping[str, Any] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    positions: Mapping[str, int] = field(default_factory=dict)
