"""Marks of a blocked-text check on a value's labels: ``".." not in x`` protects ``x`` only
where the text would do harm from (joined after a folder's ``/``), so the check leaves a mark
(``"<kind>@<after>"``) that a string built with the value turns into safety for the kind where
it is so placed (``placed_after``), and that any other operation drops (``unmarked``).

A call that normalises a path (``os.path.realpath``: a guard's ``normalised_by``) leaves another
mark, ``NORMALISED``, on its result's labels, which the calls a containment guard looks
``through`` keep (``str(p)``, ``Path(p)``) and every other operation drops: a containment check
of a variable (``p.startswith(base)``) proves something only of a path whose every label
carries it, whatever was assigned, appended or rebound on the way (``conditions._unwrap``).
What a function of the analysed code returns keeps none of its caller's marks but those it
makes itself (``substitution.substitute``): it may have decoded the text again.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .catalog_index import indexed
from .values import Label, Value, label_items, labels_of

if TYPE_CHECKING:
    from .model_records import Catalog

NORMALISED = "@@normalised"
"""The mark of a path a normalising call returned (``..`` and symlinks collapsed), on each of
its labels; a mark, not a sanitiser: no sink kind is cleaned by it."""


def placed_after(value: Value, text: str, whole: str | None = None, following: str | None = None) -> Value:
    """Returns ``value`` as placed in a string right after the constant ``text``.

    A check that a value holds none of a kind's blocked text protects it only where that text
    would do harm from: ``".." not in x`` protects ``x`` joined after a folder's ``/``, a check
    for ``'`` protects it inside a ``'...'`` literal. Such a check cleans a label for
    ``"<kind>@<after>"`` (``"<kind>@<after>@inside"`` when ``after`` must open a literal)
    (``conditions._absent``); placed here, the label becomes safe for the kind itself. A
    ``"<kind>@<after>@last"`` mark (``"../" not in x``: at most the folder's parent, as the
    last part) becomes ``"<kind>@@last:<after>"`` where no ``after`` follows the value, a mark
    that holds while nothing with ``after`` is added after it and that only sinks needing a
    file honour (``Label.safe_for``).

    Args:
        value: The value placed; only a value that starts with its own data counts (one with a
            constant before its labels, ``"." + x``, is another text).
        text: The constant text right before it (``""``: none).
        whole: All the constant text before it in the string being built, or None when some
            part before it is not constant (an ``@inside`` mark then never applies): the
            value is inside a literal when ``whole`` holds an odd number of ``after``.
        following: All the text after it in the string being built when that is constant
            (``""``: nothing), or None when something not constant follows.
    """
    if not value.tainted() or not any("@" in c for _, label in label_items(value) for c in label.cleaned):
        return value
    starts_own = bool(text) and not value.prefix

    def placed(label: Label) -> Label:
        for cleaned in label.cleaned:
            kind, at, rest = cleaned.partition("@")
            after, _, flag = rest.partition("@")
            if at and not after and flag.startswith("last:"):
                if following is None or flag[5:] in following:
                    label = label._replace(cleaned=label.cleaned - {cleaned})
                continue
            if not at or not after or not starts_own or not text.endswith(after):
                continue
            if flag == "inside" and (whole is None or whole.count(after) % 2 == 0):
                continue
            by = label.sanitisers[-1] if label.sanitisers else "a check"
            if flag == "last":
                if following is not None and after not in following:
                    label = label.clean({f"{kind}@@last:{after}"}, by)
                continue
            label = label.clean({kind}, by)
        return label

    items = {k: placed_after(v, text, whole, following) for k, v in value.items.items()} if value.items else value.items
    return replace(value, labels=labels_of(placed(label) for label in value.labels.values()), items=items)


def unmarked(value: Value, placed: bool = False) -> Value:
    """Returns ``value`` without the ``"<kind>@..."`` marks of a blocked-text check: what a
    string built from it, or a call's result, holds is another text, which may hold the blocked
    text again (``unquote("..%2f")``, ``x + "."``). With ``placed`` (a string just built, whose
    parts went through ``placed_after``), the ``"<kind>@@last:..."`` marks stay."""
    def dropped(cleaned: str) -> bool:
        return "@" in cleaned and not (placed and "@@last:" in cleaned)

    if not any(dropped(cleaned) for _, label in label_items(value) for cleaned in label.cleaned):
        return value

    def strip(label: Label) -> Label:
        marks = frozenset(c for c in label.cleaned if dropped(c))
        return label._replace(cleaned=label.cleaned - marks) if marks else label

    items = {k: unmarked(v, placed) for k, v in value.items.items()} if value.items else value.items
    return replace(value, labels=labels_of(strip(label) for label in value.labels.values()), items=items)


def is_normalised(value: Value | None) -> bool:
    """True when ``value`` carries taint and every label of it (and of its items) carries the
    ``NORMALISED`` mark."""
    labels = [label for _, label in label_items(value)] if value is not None else []
    return bool(labels) and all(NORMALISED in label.cleaned for label in labels)


def normalising_calls(catalog: Catalog) -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """The guards' calls that normalise a path (``normalised_by``), those of them that normalise
    only an absolute one (``absolute_only``), those that keep a path as it is (``through``),
    and the last names of all (to ask a method call only when it may be one). Indexed once for
    the catalog in use (``catalog_index``)."""
    return indexed(catalog, _normalising_calls)


def _normalising_calls(catalog: Catalog) -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    guards = [guard for found in catalog.guards.values() for guard in found if guard.normalised_by]
    by, absolute_only, through = (frozenset(n for g in guards for n in getattr(g, f))
                                  for f in ("normalised_by", "absolute_only", "through"))
    return by, absolute_only, through, frozenset(n.rpartition(".")[2] for n in by | through)




def is_absolute(value: Value) -> bool:
    """True when every run gives a text starting with ``/`` (its constant or constant start)."""
    start = value.const if value.is_const and isinstance(value.const, str) else value.prefix
    return bool(start) and start.startswith("/")


def normalisation(catalog: Catalog, names: set[str], inputs: list[Value], result: Value) -> Value:
    """``result``, what a library call of one of ``names`` (qualified names and method keys)
    returned, marked ``NORMALISED`` when the call normalises a path (one that normalises only
    an absolute path, when its first input, ``inputs[0]``, is known to be one), or when it is a
    call the containment guards look through (``str(p)``, ``Path(p)``) and every tainted input
    of it (``inputs``: receiver or arguments, in order) is normalised; else ``result`` as it is.
    A marked path is absolute: a base put before it (``Path(base, p)``) leaves it as it is."""
    normalising, absolute_only, through, _ = normalising_calls(catalog)
    found = names & normalising
    if found and found <= absolute_only and not (inputs and is_absolute(inputs[0])):
        return result
    if not found:
        tainted = [value for value in inputs if value.tainted()]
        if not names & through or not tainted or not all(map(is_normalised, tainted)):
            return result
    if not result.tainted():
        return result

    def mark(label: Label) -> Label:
        return label if NORMALISED in label.cleaned else label._replace(cleaned=label.cleaned | {NORMALISED})

    def marked(value: Value) -> Value:
        items = {k: marked(v) for k, v in value.items.items()} if value.items else value.items
        return replace(value, labels=labels_of(mark(label) for label in value.labels.values()), items=items)

    return marked(result)
