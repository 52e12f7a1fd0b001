"""What a condition proves about the variables it tests, on the path where it has a given truth.

``proven(frame, test, truth)`` lists the variables a branch may treat as checked:

* Python's own semantics: ``x in C`` or ``x == c`` where ``C``/``c`` are built only from
  constants (an allowlist: ``x`` then holds one of those constants), and ``isinstance(x, T)``
  for numeric and boolean ``T``; ``not``, ``and`` and ``or`` combine as logic says; ``any()``
  and ``all()`` of a generator as ``quantified`` says. ``isinstance(x, C)`` for a class of the
  analysed code or a modelled library type checks nothing, but ``x`` is then such an object
  (its taint unchanged): its method calls run ``C``'s methods.
* A text found absent (``"'" not in x``): safe for the kinds that text blocks, where the value
  is placed after the text the block needs (``[[kind]] blocked_by``).
* The library models' ``[[guard]]`` entries: predicate methods (``x.isdigit()``), predicate
  calls (``url_has_allowed_host_and_scheme(x, ...)``), regular expression matches whose
  pattern admits only word characters (``re.fullmatch(r"[a-z0-9_-]+", x)``, judged by
  ``patterns``), checks on a normalised form (``os.path.realpath(p).startswith(base)``,
  ``os.path.commonpath([base, p]) == base``), and
  comparisons of a projection (``urlparse(url).netloc == "example.com"``).
* ``x.startswith("-")`` found false: ``x`` is no option of the program it is passed to.
* ``len(x) <= N`` (``N`` a constant): ``x`` is too short for a slow pattern to matter (``lengths``).
* A call of the analysed code's own functions: what they check wherever they return a value of
  that truth (``predicates``).

Only plain variable names are narrowed; a check on an expression protects nothing else.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from . import checked_paths, compared, lengths, patterns, predicates, prefixes, quantified, relative_urls
from .annotated_types import known_types
from .marks import is_normalised
from .model_records import RECEIVER_PATTERN, UNTYPED, Catalog, Guard
from .values import Value, taint_only

if TYPE_CHECKING:
    from .interp import Frame

Proof = tuple[str, frozenset[str], str, Value | None]
"""``(variable, kinds it is safe for, what checked it, exact value or None)``."""

_NUMERIC = frozenset({"int", "float", "bool", "complex", "decimal.Decimal", "uuid.UUID", "datetime.date",
                      "datetime.datetime"})
_ALL = frozenset({"*"})


def proven(frame: Frame, test: ast.expr, truth: bool) -> list[Proof]:
    """Returns the variables ``test`` checks when it evaluates to ``truth``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return proven(frame, test.operand, not truth)
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.And) and truth or isinstance(test.op, ast.Or) and not truth:
            out: list[Proof] = []
            for value in test.values:
                out.extend(proven(frame, value, truth))
            return out + _literal(frame, test, truth) + relative_urls.relative(frame, test.values, truth, _guards_of)
        return _every_case(frame, test.values, truth)
    if isinstance(test, ast.NamedExpr):
        return proven(frame, test.value, truth)
    if isinstance(test, ast.Name) and test.id in frame.conditions:
        # ``ok = is_safe(x)`` then ``if ok:``: the name stands for the check it was assigned.
        return proven(frame, frame.conditions[test.id], truth)
    if isinstance(test, ast.Name) and not truth:
        return [(test.id, _ALL, "a test that it is empty", None)]  # an empty value carries no text
    if isinstance(test, ast.Await) and isinstance(test.value, ast.Call):
        return predicates.proofs(frame, test.value, truth, awaited=True)
    subset = quantified.subset(frame, test, truth)
    if subset is not None:
        return subset
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return _compare(frame, test, truth)
    if isinstance(test, ast.Call):
        return _call(frame, test, truth)
    if isinstance(test, ast.Attribute) and truth is False:
        return _projection(frame, test, "is empty", lets_empty=True)
    return []


def _every_case(frame: Frame, values: list[ast.expr], truth: bool) -> list[Proof]:
    """The false branch of ``a and b`` (or the true branch of ``a or b``): one of the operands
    has ``truth``, and a variable is checked only when each operand with that truth checks it,
    for the kinds they all check it for. An operand that is false only when the variable is
    empty (``x`` itself, or ``x or ...``) checks it for every kind: an empty value carries no
    text. So ``if (next or not ajax) and not is_safe_url(next): next = "/"`` leaves ``next``
    checked on both paths (Django's own ``set_language`` is written so)."""
    cases: list[dict[str, Proof]] = []
    for value in values:
        proofs = {p[0]: p for p in proven(frame, value, truth)}
        if not truth:
            for name in _empty_when_false(value):
                proofs[name] = (name, _ALL, "a test that it is not empty", None)
        if not proofs:
            return []
        cases.append(proofs)
    out: list[Proof] = []
    for name in set(cases[0]).intersection(*cases[1:]):
        kinds = _ALL
        for case in cases:
            found = case[name][1]
            kinds = found if _ALL <= kinds else kinds if _ALL <= found else kinds & found
        checks = sorted({case[name][2] for case in cases})
        if kinds:
            out.append((name, kinds, " or ".join(checks), None))
    return out


def _empty_when_false(test: ast.expr) -> set[str]:
    """The variables ``test`` being false proves empty: ``x``, ``(x := ...)``, each name of an
    ``or`` (all of its operands are then false)."""
    if isinstance(test, ast.Name):
        return {test.id}
    if isinstance(test, ast.NamedExpr):
        return {test.target.id}
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return set().union(*(_empty_when_false(v) for v in test.values))
    return set()


def _compare(frame: Frame, test: ast.Compare, truth: bool) -> list[Proof]:
    op, left, right = test.ops[0], test.left, test.comparators[0]
    if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
        return lengths.bounded(frame, test, truth)
    if isinstance(op, (ast.In, ast.NotIn)):
        holds = truth if isinstance(op, ast.In) else not truth
        if not holds:
            return _absent(frame, left, right, test)
        if isinstance(right, ast.Attribute) and right.attr == "parents":  # ``base in p.parents`` (pathlib)
            is_under = ast.Call(ast.Attribute(right.value, "is_relative_to", ast.Load()), [left], [])
            return _call(frame, ast.fix_missing_locations(ast.copy_location(is_under, test)), True)  # (p is not among them)
        allowed = frame.expr(right)
        if isinstance(left, ast.Name) and compared.constant_built(allowed):
            text = allowed.is_const and isinstance(allowed.const, (str, bytes))  # a substring test
            what = f"the allowlist check {ast.unparse(test)[:60]}"
            return [(left.id, _ALL, what, None if text else compared.one_of(frame, left.id, allowed, what)),
                    *([] if text else _held_projection(frame, left, f"is in {ast.unparse(right)[:40]}",
                                                       lets_empty=compared.holds_empty(allowed)))]
        if isinstance(left, ast.Name) and compared.not_outside(allowed):
            # One of the items of a list the code got elsewhere (a setting): ``x`` is now what
            # that list holds, of its origin.
            return [(left.id, _ALL, f"the allowlist check {ast.unparse(test)[:60]}", taint_only(allowed.flatten())),
                    *_held_projection(frame, left, f"is in {ast.unparse(right)[:40]}", lets_empty=compared.holds_empty(allowed),
                                      own=compared.own_url_held(allowed))]
        if compared.not_outside(allowed) and not (allowed.is_const and isinstance(allowed.const, (str, bytes))):
            # (in a constant text, a substring test: any part of the host passes)
            attribute = predicates.subject(frame, left) if compared.constant_built(allowed) else None
            return [*([(attribute, _ALL, f"the allowlist check {ast.unparse(test)[:60]}", None)] if attribute else []),
                    *_projection(frame, left, f"is in {ast.unparse(right)[:40]}", lets_empty=compared.holds_empty(allowed),
                                 own=compared.own_url_held(allowed))]
        return []
    if isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant) and right.value is None:
        # ``check(x) is None`` is false exactly where the check matched (a match object).
        return proven(frame, left, not truth if isinstance(op, (ast.Is, ast.Eq)) else truth)
    if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
        holds = truth if isinstance(op, (ast.Eq, ast.Is)) else not truth
        if not holds:
            return []
        for mine, other in ((left, right), (right, left)):
            inside = _common(frame, mine, other)
            if inside:
                return inside
            value = frame.expr(other)
            if not compared.not_outside(value):
                continue
            if isinstance(mine, ast.Name):
                exact = value if value.is_const or not compared.constant_built(value) else None
                return [(mine.id, _ALL, f"the comparison {ast.unparse(test)[:60]}", exact),
                        *_held_projection(frame, mine, f"equals {ast.unparse(other)[:40]}",
                                          lets_empty=value.is_const and not value.const, own=compared.own_url_held(value))]
            attribute = predicates.subject(frame, mine) if value.is_const else None
            if attribute:
                return [(attribute, _ALL, f"the comparison {ast.unparse(test)[:60]}", value)]
            found = _projection(frame, mine, f"equals {ast.unparse(other)[:40]}",
                                lets_empty=value.is_const and not value.const, own=compared.own_url_held(value))
            if found:
                return found
    return []


def _call(frame: Frame, test: ast.Call, truth: bool) -> list[Proof]:
    func = test.func
    quantified_proofs = quantified.proofs(frame, test, truth, proven)
    if quantified_proofs is not None:
        return quantified_proofs
    if isinstance(func, ast.Name) and func.id == "isinstance" and len(test.args) == 2 and truth:
        subject = test.args[0]
        kinds = frame.expr(test.args[1])
        names = {t[1:] for t in kinds.types if t.startswith("=")}
        if kinds.items is not None:
            for item in kinds.items.values():
                names |= {t[1:] for t in item.types if t.startswith("=")}
        if isinstance(subject, ast.Name) and names and names <= _NUMERIC:
            return [(subject.id, _ALL, f"isinstance(..., {ast.unparse(test.args[1])})", None)]
        current = frame.env.get(subject.id) if isinstance(subject, ast.Name) else None
        names |= {fid for item in (kinds, *(kinds.items or {}).values()) for fid in item.functions
                  if fid in frame.program.classes}  # the analysed code's classes
        classes = known_types(frame.program, names) - current.types if current is not None else frozenset()
        if classes:  # an object of these classes from here on (its taint as it was): their methods run
            return [(subject.id, frozenset(), "isinstance", replace(current, types=current.types | classes))]
        return []
    if not truth:
        return _no_option(frame, test) + predicates.proofs(frame, test, truth)
    out: list[Proof] = prefixes.started(frame, test, truth)  # type: ignore[assignment]
    for guard, checked in _guards_of(frame, test):
        if guard.compare:
            continue
        kinds = guard.kinds
        if guard.pattern >= 0 or guard.pattern == RECEIVER_PATTERN:
            kinds = patterns.checked_kinds(frame, test, guard)
            if not kinds:
                continue
        subject = predicates.subject(frame, checked)
        if subject:
            out.append((subject, kinds, guard.what, None))
    return out + predicates.proofs(frame, test, truth)


def _no_option(frame: Frame, test: ast.Call) -> list[Proof]:
    """``x.startswith("-")`` found false (also with a tuple holding ``"-"``): ``x`` cannot be
    read as an option by the program it is passed to (argument injection, CWE-88)."""
    func = test.func
    if not (isinstance(func, ast.Attribute) and func.attr == "startswith" and isinstance(func.value, ast.Name)
            and len(test.args) == 1 and not test.keywords):
        return []
    prefix = frame.expr(test.args[0])
    options = [prefix] if prefix.is_const else list((prefix.items or {}).values())
    if not any(p.is_const and p.const == "-" for p in options):
        return []
    return [(func.value.id, frozenset({"argument"}), f"the check {ast.unparse(test)[:60]} found false", None)]


def _guards_of(frame: Frame, call: ast.Call) -> list[tuple[Guard, ast.expr | None]]:
    """The guard models a call matches, each with the expression it checks."""
    catalog = frame.catalog
    func = call.func
    found: list[tuple[Guard, ast.expr | None]] = []
    if isinstance(func, ast.Attribute):
        receiver = frame.expr(func.value)
        keys = frame.method_keys(receiver, func.attr) if not any(t.startswith("=") for t in receiver.types) else []
        for key in keys:
            for guard in catalog.guards.get(key, ()):
                if guard.raises and call.keywords:  # ``relative_to(base, walk_up=True)`` accepts ``..``
                    continue
                checked: ast.expr | None = func.value
                if guard.pattern == RECEIVER_PATTERN:  # ``NAME.fullmatch(value)``: the argument is checked
                    checked = _argument(call, guard)
                elif guard.through:
                    checked = _unwrap(frame, func.value, guard)
                    if checked is None:
                        continue
                found.append((guard, checked))
        if keys:
            return found
    callee = frame.expr(func)
    for qualified in sorted(t[1:] for t in callee.types if t.startswith("=")):
        for guard in catalog.guards.get(qualified, ()):
            checked = _argument(call, guard)
            if guard.joined_by and isinstance(checked, ast.Call) and len(checked.args) >= 2 and not checked.keywords and {
                    t[1:] for t in frame.expr(checked.func).types if t.startswith("=")} & set(guard.joined_by):
                checked = checked.args[-1]  # urlparse(urljoin(base, url)): the URL joined last
            found.append((guard, checked))
    return found


def _argument(call: ast.Call, guard: Guard) -> ast.expr | None:
    """The argument a guard checks: at its position, or passed by its keyword."""
    if guard.arg < len(call.args):
        return call.args[guard.arg]
    return next((k.value for k in call.keywords if guard.keyword and k.arg == guard.keyword), None)


def _unwrap(frame: Frame, expr: ast.expr, guard: Guard) -> ast.expr | None:
    """For ``realpath(p)`` (or ``Path(p).resolve()``) with the call among ``guard.through``:
    ``p``; for ``realpath(join(base, name))`` with ``join`` among ``joined_by``: ``name``. One
    of the calls peeled must be among ``normalised_by`` when the guard names some
    (``Path(base, name).is_relative_to(base)`` compares the text), or the path ``p`` holds
    must be normalised, every label of it (``marks.NORMALISED``: ``p = realpath(...)``)."""
    through, joined_by, normalising = guard.through, guard.joined_by, set(guard.normalised_by)
    unwrapped, normalised = False, not normalising
    while isinstance(expr, ast.Call):
        if unwrapped and joined_by and expr.args and not expr.keywords:
            names = {t[1:] for t in frame.expr(expr.func).types if t.startswith("=")}
            if names & set(joined_by):
                expr = expr.args[-1]
                break
        unwrapped = True
        func = expr.func
        names: set[str] = set()
        if isinstance(func, ast.Attribute):
            receiver = frame.expr(func.value)
            if any(t.startswith("=") for t in receiver.types):
                names = {t[1:] for t in frame.expr(func).types if t.startswith("=")}
            else:
                names = {key for key in frame.method_keys(receiver, func.attr)} | {f"{UNTYPED}.{func.attr}"}
                if not any(name in through for name in names):
                    return None
                normalised = normalised or bool(names & normalising)
                expr = func.value
                continue
        else:
            names = {t[1:] for t in frame.expr(func).types if t.startswith("=")}
        if not any(name in through for name in names) or not expr.args:
            return None
        normalised = normalised or bool(names & normalising)
        expr = expr.args[0]
    if not isinstance(expr, ast.Name):
        return None
    if (not unwrapped or not normalised) and not is_normalised(frame.env.get(expr.id)):
        return None  # ``p.startswith(base)`` holds of a ``p = realpath(...)``, whatever came after
    return expr


def _absent(frame: Frame, text: ast.expr, checked: ast.expr, test: ast.Compare) -> list[Proof]:
    """``"'" not in x`` (or ``"'" in x`` found false): ``x`` holds no such text, so it cannot do
    the harm of a kind that text blocks (``[[kind]] blocked_by``) where the kind needs it: a
    value with no ``'`` cannot leave a ``'``-quoted XPath literal, one with no ``..`` cannot
    climb out of the folder it is joined after. ``x`` is cleaned for ``"<kind>@<after>"``, made
    safe for the kind where it is placed after such text (``marks.placed_after``). The absence
    of a part of a blocked text implies the text's."""
    if not isinstance(checked, ast.Name):
        return []
    held = frame.env.get(checked.id)
    if held is not None and (held.items is not None or held.types - {"str", "bytes"}):
        return []  # ``in`` on a list or a mapping tests its items or keys, not a text
    needle = frame.expr(text)
    if not needle.is_const or not isinstance(needle.const, str) or not needle.const:
        return []
    kinds = blocked_kinds(frame.catalog, needle.const)
    if not kinds:
        return []
    return [(checked.id, kinds, f"the check {ast.unparse(test)[:60]}", None)]


def raising(frame: Frame, call: ast.Call) -> bool:
    """True when ``call`` is a check that raises unless it holds (``raises``, called without
    keywords: ``path.resolve().relative_to(base)``): once it has returned, it held."""
    return any(guard.raises for guard, _ in _guards_of(frame, call))


def blocked_kinds(catalog: Catalog, absent: str) -> frozenset[str]:
    """The ``"<kind>@<after>"`` marks (``"...@inside"`` for a literal's delimiter, ``"...@last"``
    for a text whose absence protects only a path's last part) a value
    holding no ``absent`` text earns: one for each ``[[kind]] blocked_by`` entry whose text
    contains ``absent`` (the value then holds none of that text either)."""
    return frozenset(f"{kind.name}@{after}" + (f"@{flag}" if flag else "") for kind in catalog.kinds.values()
                     for blocked, after, flag in kind.blocked_by if absent in blocked)


def _conjuncts(test: ast.expr, truth: bool) -> list[tuple[ast.expr, bool]]:
    """The tests that all hold when ``test`` has ``truth`` (``a and b`` true, ``a or b`` false,
    through ``not``), each with the truth it then has."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _conjuncts(test.operand, not truth)
    if isinstance(test, ast.BoolOp) and (isinstance(test.op, ast.And) and truth or isinstance(test.op, ast.Or) and not truth):
        return [c for value in test.values for c in _conjuncts(value, truth)]
    return [(test, truth)]


def _literal(frame: Frame, test: ast.BoolOp, truth: bool) -> list[Proof]:
    """``x.startswith(q) and x.endswith(q) and q not in x[1:-1]`` (also ``x[0] == q``,
    ``x[-1] == q``): ``x`` is one whole literal in the quote ``q`` with none inside, inert as
    the whole input of a sink of a kind whose language delimits literals with ``q``
    (``[[kind]] literal_quotes``). The value earns ``"<kind>@@whole"``, a mark that any string
    built from it or call made on it drops (``marks.unmarked``): ``"f" + x`` is code again."""
    ends: dict[tuple[str, str], set[str]] = {}
    empty_inside: set[tuple[str, str]] = set()
    for expr, holds in _conjuncts(test, truth):
        if isinstance(expr, ast.Call) and holds and isinstance(expr.func, ast.Attribute) and len(expr.args) == 1 \
                and not expr.keywords and expr.func.attr in ("startswith", "endswith") and isinstance(expr.func.value, ast.Name):
            quote = frame.expr(expr.args[0])
            if quote.is_const and isinstance(quote.const, str) and len(quote.const) == 1:
                ends.setdefault((expr.func.value.id, quote.const), set()).add(expr.func.attr)
        elif isinstance(expr, ast.Compare) and len(expr.ops) == 1:
            op, left, right = expr.ops[0], expr.left, expr.comparators[0]
            if isinstance(op, (ast.Eq, ast.NotEq)) and (holds is isinstance(op, ast.Eq)) and isinstance(left, ast.Subscript):
                index, quote = frame.expr(left.slice), frame.expr(right)
                if isinstance(left.value, ast.Name) and index.is_const and index.const in (0, -1) and quote.is_const \
                        and isinstance(quote.const, str) and len(quote.const) == 1:
                    ends.setdefault((left.value.id, quote.const), set()).add("startswith" if index.const == 0 else "endswith")
            elif isinstance(op, (ast.In, ast.NotIn)) and (holds is isinstance(op, ast.NotIn)) and _is_inner(right):
                quote = frame.expr(left)
                if quote.is_const and isinstance(quote.const, str) and len(quote.const) == 1:
                    empty_inside.add((right.value.id, quote.const))  # type: ignore[union-attr]
    out: list[Proof] = []
    for (name, quote), sides in sorted(ends.items()):
        if sides == {"startswith", "endswith"} and (name, quote) in empty_inside:
            kinds = frozenset(f"{kind.name}@@whole" for kind in frame.catalog.kinds.values() if quote in kind.literal_quotes)
            if kinds:
                out.append((name, kinds, f"the check that it is one {quote}-quoted literal ({ast.unparse(test)[:60]})", None))
    return out


def _is_inner(expr: ast.expr) -> bool:
    """True for ``x[1:-1]``: a variable without its first and last character."""
    if not isinstance(expr, ast.Subscript) or not isinstance(expr.value, ast.Name) or not isinstance(expr.slice, ast.Slice):
        return False
    bounds = expr.slice
    lower = bounds.lower.value if isinstance(bounds.lower, ast.Constant) else None
    upper = bounds.upper
    upper_value = -upper.operand.value if isinstance(upper, ast.UnaryOp) and isinstance(upper.op, ast.USub) \
        and isinstance(upper.operand, ast.Constant) else None
    return lower == 1 and upper_value == -1 and bounds.step is None


def _common(frame: Frame, call: ast.expr, other: ast.expr) -> list[Proof]:
    """For ``os.path.commonpath([base, p]) == base`` (a ``common`` guard's call equal to one of
    the paths it was given): each other path that is a variable (``p``, or ``p`` under a
    ``through`` call such as ``realpath(p)``) lies inside ``base``."""
    if not (isinstance(call, ast.Call) and call.args and isinstance(call.args[0], (ast.List, ast.Tuple))):
        return []
    paths = call.args[0].elts
    if not any(ast.dump(path) == ast.dump(other) for path in paths):
        return []
    out: list[Proof] = []
    for guard, _ in _guards_of(frame, call):
        if not guard.common or guard.common == "characters" and not _ends_with_separator(frame.expr(other)):
            continue
        for path in paths:
            if ast.dump(path) == ast.dump(other):
                continue
            checked = _unwrap(frame, path, guard) if guard.through else path
            if isinstance(checked, ast.Name):
                out.append((checked.id, guard.kinds, guard.what, None))
    return out


def _ends_with_separator(value: Value) -> bool:
    """True when every text ``value`` may be ends with a path separator."""
    end = str(value.const) if value.is_const else value.suffix or ""
    return end.endswith(("/", "\\"))


def _held_projection(frame: Frame, name: ast.Name, how: str, *, lets_empty: bool = False, own: bool = False) -> list[Proof]:
    """For ``host = urlparse(x).hostname`` then ``host`` compared with constants: what comparing
    the projection itself proves (``x`` checked for the projection's guard kinds)."""
    held = frame.conditions.get(name.id)
    if held is None or not isinstance(without_case(held), (ast.Attribute, ast.Subscript)):
        return []
    return _projection(frame, held, how, lets_empty=lets_empty, own=own)


CASE_METHODS = frozenset({"lower", "upper", "casefold"})
"""``str`` methods that change only letter case: a projection compared after one of them
(``urlparse(x).hostname.lower() in ALLOWED``) is compared as it is."""


def without_case(expr: ast.expr) -> ast.expr:
    """``e`` for ``e.lower()`` (``CASE_METHODS``, any depth), else ``expr``."""
    while (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in CASE_METHODS
           and not expr.args and not expr.keywords):
        expr = expr.func.value
    return expr


def _projection(frame: Frame, expr: ast.expr, how: str, *, lets_empty: bool = False, own: bool = False) -> list[Proof]:
    """For ``urlparse(x).netloc`` compared with constants (or found empty), also after a
    change of case: ``x`` is checked for the kinds of the projection's guard model; only for
    its ``empty_kinds`` where the check lets the part be empty (``lets_empty``, or a check after
    a ``joined_by`` call), and for its ``own_kinds`` where it compares with the request's own
    URL or host (``own``)."""
    part = None
    expr = without_case(expr)
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        part = expr.attr if isinstance(expr, ast.Attribute) else None  # the one read from the call's result
        expr = expr.value
    holder = None
    if isinstance(expr, ast.Name) and isinstance(frame.conditions.get(expr.id), ast.Call):
        # ``parts = urlparse(x)`` then ``parts.netloc in (...)``: the name stands for the call,
        # and holds the object checked (``url = httpx.URL(x)``, then ``url`` fetched).
        holder = expr.id
        expr = frame.conditions[expr.id]
    if not isinstance(expr, ast.Call):
        return []
    out: list[Proof] = []
    for guard, checked in _guards_of(frame, expr):
        named = checked.id if isinstance(checked, ast.Name) else checked_paths.key(frame, checked)  # type: ignore[arg-type]
        if not (guard.compare and (named or holder is not None) and (not guard.parts or part in guard.parts)):
            continue
        kinds = guard.kinds
        joined = guard.arg < len(expr.args) and expr.args[guard.arg] is not checked
        if guard.only_empty and not lets_empty:
            continue
        if (lets_empty or joined) and guard.empty_kinds is not None:
            kinds = kinds & guard.empty_kinds
        if own and guard.own_kinds is not None:
            kinds = kinds & guard.own_kinds
        if kinds:
            if named:
                out.append((named, kinds, f"{guard.what} {how}", None))
            if holder is not None:
                out.append((holder, kinds, f"{guard.what} {how}", None))
    return out
