"""What a call that deletes characters leaves out of a value, and the sinks that absence makes it
safe for: ``s.replace("'", "&apos;")`` and ``re.sub(r"[^\\w -]+", "", s)``.

A sink kind may be blocked by the absence of some text (``[[kind]] blocked_by``: a path part with
no ``..`` cannot climb out of the folder it is joined after; an SQL literal with no quote cannot
end early), and a text made only of letters, digits, ``_`` and ``-`` is safe for every kind
(``patterns.alphabet_kinds``). Deleting a character is as good as checking its absence, and
deleting every character outside a class (a negated class matched by ``re.sub``) leaves only that
class and the replacement's characters: the idiom code uses to make a name safe for a file
system, a shell or a query (not for a URL: letters alone still name a host). A normalised path
(``marks.NORMALISED``: absolute, its ``..`` collapsed) with its leading ``/`` stripped
(``posixpath.normpath("/" + p).lstrip("/")``) is relative and holds no ``..`` part: it stays
inside the folder it is joined to, as the absence of ``..`` and of a leading ``/`` proves. Only
the deleting call is read, never the names around it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .conditions import blocked_kinds
from .marks import is_normalised
from .model_records import UNTYPED
from .patterns import HOST_KINDS, alphabet_kinds, deleted_class, negated_class
from .values import Value, clean

if TYPE_CHECKING:
    from .interp import Frame

_CASE_OR_LAYOUT = 2 | 64
"""``re.IGNORECASE`` (a negated class then also leaves the other case of its letters) and
``re.VERBOSE`` (which changes what the pattern's text means)."""


def cleaned(frame: Frame, callee: Value, receiver: Value | None, method: str | None, args: list[Value],
            kwargs: dict[str, Value], result: Value) -> Value:
    """Returns the value of a call, cleaned for the sink kinds what it deleted makes it safe for.

    Args:
        frame: Where the call is evaluated.
        callee: The called value (``re.sub`` is recognised by its library name).
        receiver: The object a method is called on (a compiled pattern's ``sub``), or None.
        method: The method name called on a receiver (``replace``), or None.
        args, kwargs: The call's argument values.
        result: The call's value as the models give it.

    Returns:
        ``result``, cleaned when it carries outside data and the call deletes characters.
    """
    if not result.tainted():
        return result
    if method in ("lstrip", "strip") and receiver is not None and _strips_root(args, kwargs) and is_normalised(receiver):
        kinds = frozenset(mark.partition("@")[0] for mark in blocked_kinds(frame.catalog, ".."))
        return clean(result, kinds, f"{method}('/') of a normalised absolute path") if kinds else result
    if method == "replace" and not kwargs:
        removed = removed_character(args)
        kinds = blocked_kinds(frame.catalog, removed) if removed else frozenset()
        return clean(result, kinds, f"replace({removed!r}, ...)") if kinds else result
    compiled = (receiver.items or {}) if method == "sub" and receiver is not None else {}
    if ".pattern" in compiled:  # ``re.compile(pattern, flags).sub(repl, string, count=0)``
        parts = _sub_parts([compiled[".pattern"], *args], kwargs, compiled.get(".flags"))
    elif any(t.endswith(".sub") for t in callee.types) and "re.sub" in frame.program.library_refs(callee.types):
        parts = _sub_parts(args, kwargs, args[4] if len(args) > 4 else kwargs.get("flags"))
    else:
        return result
    if parts is None:
        return result
    pattern, repl = parts
    kept, deleted = negated_class(pattern), deleted_class(pattern)
    if kept is not None:
        kept = kept | frozenset(repl)
        every = frozenset(frame.catalog.kinds) - HOST_KINDS  # (letters alone still name a host)
        kinds = alphabet_kinds(kept, every, every).union(*(
            blocked_kinds(frame.catalog, c) for c in _blocking(frame) if c not in kept))
        return clean(result, kinds, "re.sub() of every character outside a class") if kinds else result
    if deleted is not None and not deleted & frozenset(repl):
        # What a class's deleted characters block: the kinds' ``blocked_by`` texts, and what the
        # models' sanitisers of ``replace()`` of those characters clean (line breaks: log, header).
        kinds = frozenset().union(*(blocked_kinds(frame.catalog, c) for c in deleted), *(
            sanitiser.kinds for sanitiser in frame.catalog.sanitisers.get(f"{UNTYPED}.replace", ())
            if sanitiser.args_contain and set(sanitiser.args_contain) <= deleted))
        return clean(result, kinds, "re.sub() of every character of a class") if kinds else result
    return result


def _strips_root(args: list[Value], kwargs: dict[str, Value]) -> bool:
    """True for ``lstrip(chars)`` / ``strip(chars)`` whose constant ``chars`` holds ``/``."""
    return not kwargs and len(args) == 1 and args[0].is_const and isinstance(args[0].const, str) and "/" in args[0].const


def removed_character(args: list[Value]) -> str | None:
    """The one character ``str.replace(old, new)`` leaves nowhere in its result: ``old`` when
    it is a single character that ``new`` does not hold (a longer ``old`` can form again where
    the pieces meet: ``"....//".replace("../", "")`` is ``"../"``), else None."""
    if len(args) != 2:
        return None
    old, new = args
    if not (old.is_const and new.is_const and isinstance(old.const, str) and isinstance(new.const, str)):
        return None
    return old.const if len(old.const) == 1 and old.const not in new.const else None


def _sub_parts(args: list[Value], kwargs: dict[str, Value], flags: Value | None) -> tuple[str, str] | None:
    """The pattern and the replacement of ``re.sub(pattern, repl, string, count=0, flags=0)``
    as text (bytes read as Latin-1, one character per byte): both constant, the replacement
    with no group reference; None otherwise, with a ``count`` (some are left), or with flags
    that may hold ``re.IGNORECASE`` or ``re.VERBOSE``."""
    pattern = args[0] if args else kwargs.get("pattern")
    repl = args[1] if len(args) > 1 else kwargs.get("repl")
    if len(args) > 3 or "count" in kwargs or pattern is None or repl is None or not (pattern.is_const and repl.is_const):
        return None
    texts = [value.const.decode("latin-1") if isinstance(value.const, bytes) else value.const for value in (pattern, repl)]
    if not all(isinstance(text, str) for text in texts) or type(pattern.const) is not type(repl.const):
        return None
    if "\\" in texts[1] or flags is not None and not (
            flags.is_const and isinstance(flags.const, int) and not flags.const & _CASE_OR_LAYOUT):
        return None
    return texts[0], texts[1]


def _blocking(frame: Frame) -> frozenset[str]:
    """The characters of the texts whose absence blocks some sink kind (``[[kind]] blocked_by``)."""
    return frozenset(c for kind in frame.catalog.kinds.values() for text, _, _ in kind.blocked_by for c in text)
