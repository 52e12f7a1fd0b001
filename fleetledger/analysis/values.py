"""The abstract values of the taint engine: labels (where data came from), steps (how it
travelled) and values (what the engine knows about one expression).

A ``Value`` is an over-approximation of every run-time value an expression can hold:

* ``labels``: the taint it carries, one ``Label`` per origin (a source read, a parameter of the
  function being summarised, a weak random number), each with the steps it took and the sink
  kinds it has been sanitised for on the way;
* ``types``: qualified type names it may have (``"sqlite3.Cursor"``, ``"flask.Request"``, a
  class of the analysed package as ``"<module>.<Class>"``), used to pick the library model of a
  method call;
* ``const``: its value when every run gives the same constant (``str``, ``int``, ``float``,
  ``bool``, ``None``, ``bytes``), used to fold conditions and to read keyword flags;
* ``prefix``: for strings, a constant text every value starts with (``"https://api.example/"``),
  which tells whether a URL's host is fixed;
* ``suffix``: for strings, a constant text every value ends with (``".py"``), which tells what
  kind of file a path names;
* ``texts``: for strings, constant texts every value holds somewhere (``"templates/"``), which
  tell which folder a path lies in (``texts.holds_text`` reads them with the constant, prefix
  and suffix);
* ``items``: what is known per key of a container or per attribute of an object built here
  (``{"a": x}``, ``[x, "y"]``, ``obj.attr = x``), so that reading a key that holds a constant
  does not see the taint of another key; ``labels`` then holds only the taint that could be
  under any key.

The algorithm is the classic monotone framework (Kildall 1973; Kam and Ullman 1977) with a
finite-height lattice: ``join`` is a union of labels and types, and bounds (``MAX_STEPS``,
``MAX_ITEMS``, ``MAX_LABELS``) keep every value small, so that loops reach a fixed point and no
file's cost grows faster than its size.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NamedTuple

from .texts import common_prefix, common_suffix, known_texts

Channel = Literal["http", "network", "cli", "stdin", "env", "file", "api", "random", "mac", "param"]
"""Where a label's data comes from: a web request (``http``), a network read (``network``), the
command line, standard input, the environment, a file, a caller of a public function of a
library (``api``), a weak random number generator (``random``), an HMAC the code computed
(``mac``: a marker no kind takes as outside data, for ``[[compared]]``), or, inside a summary,
a parameter of the function being summarised (``param``)."""

REMOTE: frozenset[str] = frozenset({"http", "network"})
LOCAL: frozenset[str] = frozenset({"cli", "stdin", "env", "file"})

MAX_STEPS = 12
"""Steps kept per label: the first ``MAX_STEPS // 2`` and the last ones (a trace that long is
read from both ends)."""
MAX_LABELS = 24
"""Labels kept per value; beyond it the ones of the same channel and origin line merge."""
MAX_CHOICES = 8
"""Constants a value is known to be one of, at most (more: any value)."""
MAX_ITEMS = 64
"""Keys tracked per container or object; beyond it the container is only tracked as a whole."""


class _NotConstant:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_CONSTANT"

    def __reduce__(self) -> str:
        return "NOT_CONSTANT"


NOT_CONSTANT: Any = _NotConstant()
"""The ``const`` of a value that is not one constant."""


class Step(NamedTuple):
    """One hop of a value on its way from a source to a sink (a named tuple: steps are copied
    and compared on every hop, and tuples do that in C).

    Attributes:
        path: Repository-relative path of the file the hop is in.
        line: 1-based line.
        col: 0-based UTF-8 byte column, as the parser gives it.
        what: What happened, for a person: ``"assigned to q"``, ``"passed to helper() as sql"``.
    """

    path: str
    line: int
    col: int
    what: str

    def to_json(self) -> dict[str, Any]:
        """Returns the step as JSON (read-only)."""
        return {"path": self.path, "line": self.line, "col": self.col, "what": self.what}


class Label(NamedTuple):
    """One origin of tainted data and the road it took (a named tuple, for the same reason as
    ``Step``).

    Attributes:
        channel: Where the data comes from (see ``Channel``).
        what: The source for a person: ``"flask.request.args (Flask request data)"``.
        path: File of the source.
        line: Line of the source.
        col: Byte column of the source.
        param: For ``channel == "param"``: the index of the summarised function's parameter.
        access: For ``channel == "param"``: the attribute and method path read from that
            parameter (``("GET",)`` for ``request.GET``, ``("json()",)`` for ``request.json()``),
            resolved against the argument's type when the summary is applied.
        cleaned: Sink kinds the data has been sanitised or validated for on the way.
        sanitisers: What sanitised or validated it, for a person, in order.
        steps: The hops so far (bounded by ``MAX_STEPS``).
        own_url: The data is the request's own URL, path or host (``Source.own_url``).
    """

    channel: str
    what: str
    path: str
    line: int
    col: int
    param: int = -1
    access: tuple[str, ...] = ()
    cleaned: frozenset[str] = frozenset()
    sanitisers: tuple[str, ...] = ()
    steps: tuple[Step, ...] = ()
    own_url: bool = False

    @property
    def key(self) -> tuple[Any, ...]:
        """What makes two labels the same origin for the same sinks (steps aside)."""
        return self[:8]

    def then(self, *more: Step) -> Label:
        """Returns the label with more steps (the middle of a long road is dropped). Labels of
        unknown origin carry no road: no trace of theirs is ever shown."""
        if self.channel == "opaque":
            return self
        steps = self.steps
        for step in more:
            if not steps or steps[-1] != step:
                steps = steps + (step,)
        if steps is self.steps:
            return self
        if len(steps) > MAX_STEPS:
            half = MAX_STEPS // 2
            steps = steps[:half] + steps[len(steps) - half:]
        # ``self._replace(steps=steps)``, built directly: the engine makes labels by the
        # hundred thousand, and ``_replace`` goes through a dict of every field.
        return tuple.__new__(Label, (*self[:_STEPS], steps, *self[_STEPS + 1:]))

    def with_access(self, access: tuple[str, ...]) -> Label:
        """Returns the label with another access path (``_replace``, built directly as in ``then``)."""
        return tuple.__new__(Label, (*self[:_ACCESS], access, *self[_ACCESS + 1:]))

    def clean(self, kinds: Iterable[str], by: str) -> Label:
        """Returns the label sanitised for ``kinds`` (``"*"``: every kind) by ``by`` (``""``: marked, by nothing to name)."""
        kinds = frozenset(kinds)
        if kinds <= self.cleaned and (not by or by in self.sanitisers):
            return self
        return self._replace(cleaned=self.cleaned | kinds, sanitisers=(self.sanitisers + (by,))[-4:] if by else self.sanitisers)

    def safe_for(self, kind: str, needs_file: bool = False) -> bool:
        """True when the data was sanitised for sinks of ``kind`` (or, still as it was checked,
        is one whole inert literal of it: ``"<kind>@@whole"``, ``conditions._literal``; or, for
        a sink that ``needs_file``, can name at most a folder as the last part of a path:
        ``"<kind>@@last:<sep>"``, ``placed_after``)."""
        if kind in self.cleaned or "*" in self.cleaned or f"{kind}@@whole" in self.cleaned:
            return True
        return needs_file and any(c.startswith(f"{kind}@@last:") for c in self.cleaned)

    def to_json(self) -> dict[str, Any]:
        """Returns the source part of a trace as JSON (read-only)."""
        return {"channel": self.channel, "what": self.what, "path": self.path, "line": self.line, "col": self.col,
                **({"own_url": True} if self.own_url else {})}


OWN_SITE = {"cleaned": frozenset({"redirect"}), "sanitisers": ("the request's own absolute URL (this site's scheme and host)",)}
"""The fields of a label read from the request's own absolute URL (``Source.own_site``)."""
_STEPS = Label._fields.index("steps")
_ACCESS = Label._fields.index("access")


@dataclass(frozen=True, slots=True)
class Value:
    """What the engine knows about an expression's value (see the module doc).

    Attributes:
        labels: Taint not attributed to a known key, keyed by ``Label.key``.
        types: Qualified type names the value may have.
        const: The constant value, or ``NOT_CONSTANT``.
        prefix: A constant text every string value starts with, or None.
        suffix: A constant text every string value ends with, or None.
        texts: Constant texts every string value holds (at most ``texts.MAX_TEXTS``).
        items: Known keys (``str``/``int`` for containers, ``".name"`` for attributes) and
            their values, or None when nothing is known per key.
        functions: Functions and classes of the analysed code the value may be (their ids),
            so that a call through a variable is resolved.
        choices: The constants the value is one of, when it is one of a few (at most
            ``MAX_CHOICES``: ``"git" if x else "hg"``, a variable found in a constant list);
            empty when not known, or when it is one constant (``const``).
    """

    labels: Mapping[tuple[Any, ...], Label] = field(default_factory=dict)
    types: frozenset[str] = frozenset()
    const: Any = NOT_CONSTANT
    prefix: str | None = None
    suffix: str | None = None
    texts: frozenset[str] = frozenset()
    items: Mapping[Any, Value] | None = None
    functions: frozenset[str] = frozenset()
    choices: frozenset[Any] = frozenset()

    def __hash__(self) -> int:  # values are compared, never hashed; keep dataclass eq
        return id(self)

    @property
    def is_const(self) -> bool:
        """True when the value is one known constant."""
        return self.const is not NOT_CONSTANT

    def all_labels(self) -> list[Label]:
        """Returns every label, the items' included, without duplicates (read-only)."""
        if not self.items:
            return list(self.labels.values())
        merged = dict(self.labels)
        for item in self.items.values():
            for key, label in label_items(item):
                merged.setdefault(key, label)
        return list(merged.values())

    def tainted(self) -> bool:
        """True when some label reaches this value (each shared item visited once)."""
        if self.labels:
            return True
        seen: set[int] = set()
        stack = list((self.items or {}).values())
        while stack:
            item = stack.pop()
            if id(item) in seen:
                continue
            seen.add(id(item))
            if item.labels:
                return True
            stack.extend((item.items or {}).values())
        return False

    def flatten(self) -> Value:
        """Returns the value with its items folded into its labels (nothing known per key)."""
        if self.items is None:
            return self
        return Value(labels=labels_of(self.all_labels()), types=self.types, functions=self.functions)

    def get(self, key: Any) -> Value | None:
        """Returns the known value under ``key`` joined with the taint of unknown keys (not a
        parameter's own label: it stands for the caller's whole object, and what was stored
        under ``key`` here replaces what the caller had there), or None when nothing is known."""
        if self.items is None or key not in self.items:
            return None
        held = {k: label for k, label in self.labels.items() if label.channel != "param" or label.access}
        return join(self.items[key], Value(labels=held)) if held else self.items[key]


EMPTY = Value()
"""A value with no taint, type or constant: what an unknown constant-free expression holds."""


def constant(value: Any) -> Value:
    """Returns the value of a constant (``prefix`` and ``suffix`` set for strings)."""
    text = value if isinstance(value, str) else None
    return Value(const=value, prefix=text, suffix=text,
                 types=frozenset({type(value).__name__}) if value is not None else frozenset())


def typed(*types: str) -> Value:
    """Returns an untainted value of the given types."""
    return Value(types=frozenset(types))


def of_labels(labels: Iterable[Label], *, types: Iterable[str] = ()) -> Value:
    """Returns a value carrying ``labels``."""
    return Value(labels=labels_of(labels), types=frozenset(types))


def labels_of(labels: Iterable[Label]) -> dict[tuple[Any, ...], Label]:
    out: dict[tuple[Any, ...], Label] = {}
    for label in labels:
        old = out.get(label.key)
        if old is None or len(label.steps) < len(old.steps):
            out[label.key] = label
    if len(out) > MAX_LABELS:
        out = dict(sorted(out.items(), key=lambda kv: _order(kv[1]))[:MAX_LABELS])
    return out


def _order(label: Label) -> tuple[Any, ...]:
    rank = 0 if label.channel in REMOTE else 1 if label.channel != "param" else 2
    return (rank, len(label.steps), label.path, label.line, label.col, label.what, label.param, label.access)


def label_items(value: Value) -> Iterable[tuple[tuple[Any, ...], Label]]:
    """Every label of ``value`` and its items, each shared item visited once (a value built
    from itself, ``a = [a, a]``, shares its items: walking it as a tree doubles per level)."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield from current.labels.items()
        stack.extend(reversed(list((current.items or {}).values())))


MAX_ITEM_NODES = 64
"""Values an item may nest (counted as a tree) before it is stored folded into its labels."""


def bounded(value: Value) -> Value:
    """Returns ``value`` fit to be stored as an item: folded into its labels when its items
    nest more than ``MAX_ITEM_NODES`` values counted as a tree, so that the functions that walk
    items (``add_step``, ``clean``, ``join``) stay linear however often a value is built from
    itself. Counting stops at the bound: O(MAX_ITEM_NODES)."""
    if not value.items:
        return value
    count, stack = 0, list(value.items.values())
    while stack:
        item = stack.pop()
        count += 1
        if count > MAX_ITEM_NODES:
            return value.flatten()
        stack.extend((item.items or {}).values())
    return value


def join(*values: Value) -> Value:
    """Returns the least value at least as large as each of ``values`` (the lattice join).

    Labels and types are united; a constant, prefix or suffix survives only where all agree; items are
    joined key by key where every value knows its keys, else folded into the labels.
    """
    values = tuple(v for v in values if v is not EMPTY)
    if not values:
        return EMPTY
    if len(values) == 1:
        return values[0]
    first = values[0]
    if all(v is first for v in values[1:]):
        return first
    labels: dict[tuple[Any, ...], Label] = {}
    for v in values:
        for key, label in v.labels.items():
            old = labels.get(key)
            if old is None or len(label.steps) < len(old.steps):
                labels[key] = label
    const = first.const
    prefix = first.prefix
    suffix = first.suffix
    for v in values[1:]:
        if const is not NOT_CONSTANT and not (v.const is not NOT_CONSTANT and type(v.const) is type(const) and v.const == const):
            const = NOT_CONSTANT
        prefix = common_prefix(prefix, v.prefix)
        suffix = common_suffix(suffix, v.suffix)
    texts: frozenset[str] = frozenset()
    if first.texts or first.prefix or first.suffix:
        others = [known_texts(v) for v in values[1:]]
        texts = frozenset(t for t in known_texts(first) if all(any(t in known for known in held) for held in others))
    items = _join_items(values)
    if items is None and any(v.items for v in values):
        for v in values:
            for item in (v.items or {}).values():
                for key, label in label_items(item):
                    labels.setdefault(key, label)
    if len(labels) > MAX_LABELS:
        labels = dict(sorted(labels.items(), key=lambda kv: _order(kv[1]))[:MAX_LABELS])
    return Value(labels=labels, types=frozenset().union(*(v.types for v in values)), const=const, prefix=prefix,
                 suffix=suffix, texts=texts, items=items, functions=frozenset().union(*(v.functions for v in values)),
                 choices=_choices(values) if const is NOT_CONSTANT else frozenset())


def _choices(values: tuple[Value, ...]) -> frozenset[Any]:
    """The constants a join of ``values`` is one of: each value a constant of a hashable kind
    (a text, a number) or one of a few; else nothing is known."""
    out: set[Any] = set()
    for v in values:
        if v.is_const and isinstance(v.const, (str, bytes, int, float)):
            out.add(v.const)
        elif v.choices:
            out |= v.choices
        else:
            return frozenset()
        if len(out) > MAX_CHOICES:
            return frozenset()
    return frozenset(out) if len(out) > 1 else frozenset()


def _join_items(values: tuple[Value, ...]) -> dict[Any, Value] | None:
    """Joins items key by key when every value tracks items; else None (fold them)."""
    if any(v.items is None for v in values):
        return None
    keys: dict[Any, None] = {}
    for v in values:
        keys.update(dict.fromkeys(v.items or {}))
    if len(keys) > MAX_ITEMS:
        return None
    out: dict[Any, Value] = {}
    for key in keys:
        parts = [v.items[key] for v in values if v.items and key in v.items]  # type: ignore[index]
        out[key] = join(*parts)
    return out


# The item under which a container keeps the keys stored by a computed key (``d[k] = v``), named
# with a NUL so that no ordinary key meets it.
UNKNOWN_KEYS = "\x00keys"
# The item under which a list or set keeps what was added to it where the engine does not
# follow its positions (``HOOKS.append(fn)`` from a registering decorator): not a text key, so
# iterating the container gives its items, not keys.
ADDED_ITEMS = -1
def with_items(value: Value, updates: Mapping[Any, Value]) -> Value:
    """Returns ``value`` with the given keys set (other keys kept); a container that would
    track more than ``MAX_ITEMS`` keys is folded into its labels instead."""
    items = dict(value.items or {})
    items.update({key: bounded(item) for key, item in updates.items()})
    if len(items) > MAX_ITEMS:
        return join(value.flatten(), *(v.flatten() for v in updates.values()))
    return replace(value, items=items, const=NOT_CONSTANT, prefix=None, suffix=None, texts=frozenset(), choices=frozenset())


def add_step(value: Value, *steps: Step) -> Value:
    """Returns ``value`` with ``steps`` appended to every label (items included)."""
    if not steps or not value.tainted():
        return value
    labels = {key: label.then(*steps) for key, label in value.labels.items()}
    items = {k: add_step(v, *steps) for k, v in value.items.items()} if value.items else value.items
    return _with_taint(value, labels, items)


def clean(value: Value, kinds: Iterable[str], by: str) -> Value:
    """Returns ``value`` with every label sanitised for ``kinds`` by ``by``."""
    if not value.tainted():
        return value
    kinds = frozenset(kinds)
    labels = labels_of(label.clean(kinds, by) for label in value.labels.values())
    items = {k: clean(v, kinds, by) for k, v in value.items.items()} if value.items else value.items
    return _with_taint(value, labels, items)


def _with_taint(value: Value, labels: Mapping[tuple[Any, ...], Label], items: Mapping[Any, Value] | None) -> Value:
    """``replace(value, labels=labels, items=items)``, built directly: ``dataclasses.replace``
    reads the fields' definitions on every call, and the engine makes values by the hundred
    thousand."""
    return Value(labels, value.types, value.const, value.prefix, value.suffix, value.texts, items, value.functions,
                 value.choices)


assert tuple(Value.__dataclass_fields__) == ("labels", "types", "const", "prefix", "suffix", "texts", "items",
                                             "functions", "choices"), "a new field of Value: add it to _with_taint"


def without_parameters(value: Value) -> Value:
    """Returns ``value`` without the labels of a function's parameters (items folded when it
    had any): what a module-level name may keep of a value a function stores there, since a
    parameter label means something only inside its own function."""
    labels = value.all_labels()
    if not any(label.channel == "param" for label in labels):
        return value
    return Value(labels=labels_of(label for label in labels if label.channel != "param"), types=value.types,
                 functions=value.functions)


DERIVED = "()"
"""The access member of a parameter's label whose value a call computed from the parameter
(``ast.parse(text)``, ``urlparse(url)``): a new object made from the caller's data, not the
object the caller passed, so what is read from it further is that data too (``caller_state``).
Where the summary is applied, the member reads the argument as it is (``substitution.project``):
the members after it are read from that, as from a copy (``deepcopy(x).find(...)``)."""


def computed_from(value: Value) -> Value:
    """Returns ``value`` (the taint of a call's arguments, flowing into its result) with each
    parameter label marked ``DERIVED`` once."""
    if not any(label.channel == "param" and DERIVED not in label.access for label in value.labels.values()):
        return value
    return replace(value, labels=labels_of(
        label.with_access(label.access + (DERIVED,)) if label.channel == "param" and DERIVED not in label.access
        else label for label in value.labels.values()))


def caller_state(label: Label) -> tuple[str, ...]:
    """The members of a parameter's label read from the object the caller passed: those
    before ``DERIVED`` (what follows is read from a value computed from the caller's data)."""
    return label.access[:label.access.index(DERIVED)] if DERIVED in label.access else label.access


def taint_only(value: Value) -> Value:
    """Returns a value with ``value``'s taint and nothing else (a derived value of unknown
    type: the result of an operation the models do not describe)."""
    if value.items is None and not value.types and not value.is_const and value.prefix is None and not value.functions:
        return value
    return Value(labels=labels_of(value.all_labels()))
