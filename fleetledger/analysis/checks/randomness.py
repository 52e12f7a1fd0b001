"""CWE-338, a predictable random number generator used for a secret."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ..assessment import PROBABLE, Assessment, Site
from ..tree import SourceTree, walk_scope, words

CWE = 338
# Words that name a secret on their own.
_SECRET_WORDS = frozenset({
    "token", "tokens", "password", "passwd", "pwd", "passphrase", "secret", "secrets", "salt",
    "nonce", "otp", "pin", "csrf", "session", "sessionid", "captcha", "apikey", "credential",
    "credentials", "iv",
})
# Words that make a link, slug, id or key a capability: whoever holds it gets access.
_CAPABILITY = frozenset({"share", "sharing", "shared", "invite", "invitation", "magic", "access", "private", "unlisted",
                         "download", "capability"})
# Words that name a secret only next to a qualifier: an API key (not a sort key), a reset code
# (not source code), a share-link slug (not an article's slug). The qualifier may be in the same
# name or in the names around the value (its function, what it is passed to, its other names).
_QUALIFIED = {
    "key": frozenset({"api", "secret", "private", "signing", "encryption", "access", "session", "auth", "hmac"}) | _CAPABILITY,
    "code": frozenset({"verification", "verify", "reset", "confirm", "confirmation", "activation", "auth", "login",
                       "sms", "email", "invite", "invitation", "mfa", "twofa", "security", "recovery", "one"}),
    "id": frozenset({"session", "secret"}) | _CAPABILITY,
    "slug": _CAPABILITY,
    "link": _CAPABILITY,
    "url": _CAPABILITY,
}
# Generators whose every output is predictable once a few are seen (or the seed is known).
_GENERATORS = frozenset({"random.Random"})
# How far a value is followed: through this many assignments to later uses, this many uses each.
_MAX_DEPTH = 2
_MAX_USES = 16
_MAX_LABEL_WORDS = 3
# Text right before an interpolated value that labels it: "session:{sid}", "code={code}", "Your code: {code}".
_LABEL_END = re.compile(r"[:=/_#-]\s*$")
_CLAUSE = re.compile(r"[.!?;,\n]")


@dataclass(kw_only=True)
class _Names:
    """What the names around a random value say about it.

    Attributes:
        own: Names the value is stored in or labelled with (a variable, attribute, keyword,
            dict key, the text labelling it in a format string) and the function producing it,
            nearest first.
        context: Names that qualify it without naming it: the functions and classes it is
            passed to.
    """

    own: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)


def assess(site: Site) -> Assessment | None:
    """Judges a call of the ``random`` module (bandit B311).

    Python's ``random`` is a Mersenne Twister: after 624 outputs its state, and so every
    future value, can be reconstructed (and a generator seeded with the clock is guessable
    from the start). That matters only for values that must be unguessable: tokens,
    passwords, salts, nonces, one-time codes, session ids, links that grant access. The
    purpose is read from the names around the value: the variable, attribute, key or keyword
    it is stored in, the label in front of it in a format string (``f"session:{sid}"``), the
    function that produces it, and, for a value assigned to a local name, the same for each
    later use of that name (``ShareLink(slug=slug)``). A word that is a secret only with a
    qualifier (``code``, ``key``, ``id``, ``slug``) counts when the qualifier is in any of
    those names (``code`` in ``request_verification()``). A generator object
    (``rng = random.Random(seed)``) is judged by what its methods produce wherever the object
    is used. Shuffling, sampling, jitter, load balancing and test data need no secrecy.

    Args:
        site: The flagged call.

    Returns:
        The assessment (``purpose`` is ``"security"`` or ``"other"``), or None when the node
        is not a call.
    """
    node = site.node
    if not isinstance(node, ast.Call):
        return None
    tree = site.tree
    name = tree.qualname(node.func) or tree.segment(node.func, 40)
    values = _generated(tree, node) if name in _GENERATORS else [node]
    names = _names_of(tree, values)
    secret = _secret(names)
    via = ""
    if values != [node]:
        via = f" through the generator object it makes (used on line {', '.join(str(v.lineno) for v in values)})"
    if secret is not None:
        fact = (f"{name}() is predictable (Mersenne Twister){via}, and the value is used for {secret}, which must be "
                "unguessable; the secrets module is the fix.")
        return Assessment(verdict="vulnerable", confidence=PROBABLE, cwe=CWE, facts=(fact,),
                          signals={"sink": "random", "source": "none", "sanitised": False, "purpose": "security"})
    shown = ", ".join(repr(n) for n in names.own[:4]) or "no name"
    fact = (f"{name}() is predictable{via}, but the value is used for {shown}, nothing that must be unguessable "
            "(sampling, shuffling, jitter or similar), so predictability gives an attacker nothing.")
    return Assessment(verdict="not_vulnerable", confidence=PROBABLE, cwe=CWE, facts=(fact,),
                      signals={"sink": "random", "source": "none", "sanitised": False, "purpose": "other"})


def _secret(names: _Names) -> str | None:
    """Says which name makes the value a secret (``'token'``; ``'code' (with 'request_verification')``), or None."""
    for name in names.own:
        found = set(words(name))
        if found & _SECRET_WORDS or any(word in found and found & qualifiers for word, qualifiers in _QUALIFIED.items()):
            return repr(name)
    everywhere = [*names.own, *names.context]
    for name in names.own:
        found = set(words(name))
        for word, qualifiers in _QUALIFIED.items():
            if word not in found:
                continue
            qualifier = next((other for other in everywhere if set(words(other)) & qualifiers), None)
            if qualifier is not None:
                return f"{name!r} (with {qualifier!r})"
    return None


def _generated(tree: SourceTree, constructor: ast.Call) -> list[ast.AST]:
    """The method calls on the generator object a constructor makes (``rng.getrandbits(128)``):
    on the constructor itself, on the local name it is assigned to, or on the ``self`` attribute
    it is stored in (anywhere in the class). Falls back to the constructor when none is found."""
    parent = tree.parent(constructor)
    receivers: list[ast.AST] = [constructor]
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is constructor:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        for target in targets:
            if isinstance(target, ast.Name):
                receivers.extend(_later_loads(tree, target.id, parent))
            elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                function = tree.function_of(constructor)
                owner = tree.enclosing_class(function) if function is not None else None
                if owner is not None:
                    receivers.extend(n for n in ast.walk(owner) if isinstance(n, ast.Attribute) and n.attr == target.attr
                                     and isinstance(n.value, ast.Name) and n.value.id == "self" and isinstance(n.ctx, ast.Load))
    calls: list[ast.AST] = []
    for receiver in receivers:
        method = tree.parent(receiver)
        call = tree.parent(method) if method is not None else None
        if isinstance(method, ast.Attribute) and method.value is receiver and isinstance(call, ast.Call) and call.func is method:
            calls.append(call)
    calls.sort(key=lambda c: (getattr(c, "lineno", 0), getattr(c, "col_offset", 0)))
    return calls[:_MAX_USES] or [constructor]


def _names_of(tree: SourceTree, values: list[ast.AST]) -> _Names:
    """Collects the names around each value, then around the later uses of the local names
    they are assigned to (up to ``_MAX_DEPTH`` assignments away)."""
    names = _Names()
    queue: list[tuple[ast.AST, int]] = [(value, 0) for value in values]
    seen: set[int] = set()
    while queue:
        expr, depth = queue.pop(0)
        if id(expr) in seen:
            continue
        seen.add(id(expr))
        assigned = _around(tree, expr, names, depth == 0)
        if assigned is not None and depth < _MAX_DEPTH:
            name, statement = assigned
            queue.extend((use, depth + 1) for use in _later_loads(tree, name, statement)[:_MAX_USES])
    return names


def _around(tree: SourceTree, node: ast.AST, names: _Names, produced: bool) -> tuple[str, ast.stmt] | None:
    """Adds the names around ``node`` to ``names``; returns the local name it is assigned to
    (with the assignment), if any.

    For the random value itself (``produced``) the walk goes up to the enclosing function,
    whose name it records, through any call that reshapes the value (``"".join(...)``); for a
    later use of a name holding the value, it stops at the call the value is passed to (whose
    result is something else) or at the end of the statement.
    """
    assigned: tuple[str, ast.stmt] | None = None
    child: ast.AST = node
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, ast.keyword):
            if ancestor.arg:
                names.own.append(ancestor.arg)
        elif isinstance(ancestor, ast.Call) and child is not ancestor.func:
            callee = tree.qualname(ancestor.func) or (ancestor.func.attr if isinstance(ancestor.func, ast.Attribute) else None)
            if callee:
                names.context.append(callee)
            if not produced:
                break
        elif isinstance(ancestor, ast.Dict):
            names.own.extend(k.value for k, v in zip(ancestor.keys, ancestor.values)
                             if v is child and isinstance(k, ast.Constant) and isinstance(k.value, str))
        elif isinstance(ancestor, ast.JoinedStr):
            index = next((i for i, v in enumerate(ancestor.values) if v is child), 0)
            before = ancestor.values[index - 1] if index > 0 else None
            if isinstance(before, ast.Constant) and isinstance(before.value, str):
                _add_label(before.value, names)
        elif isinstance(ancestor, ast.BinOp) and isinstance(ancestor.op, ast.Add) and child is ancestor.right:
            if isinstance(ancestor.left, ast.Constant) and isinstance(ancestor.left.value, str):
                _add_label(ancestor.left.value, names)
        elif isinstance(ancestor, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = ancestor.targets if isinstance(ancestor, ast.Assign) else [ancestor.target]
            for target in targets:
                if isinstance(target, ast.Name) and assigned is None and not isinstance(ancestor, ast.AugAssign):
                    assigned = (target.id, ancestor)
                for part in ast.walk(target):
                    if isinstance(part, ast.Name):
                        names.own.append(part.id)
                    elif isinstance(part, ast.Attribute):
                        names.own.append(part.attr)
                    elif isinstance(part, ast.Constant) and isinstance(part.value, str):
                        names.own.append(part.value)
        elif isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if produced:
                names.own.append(ancestor.name)
            break
        if not produced and isinstance(ancestor, ast.stmt):
            break
        child = ancestor
    return assigned


def _add_label(text: str, names: _Names) -> None:
    """Adds the label a format string puts right before a value (``"session:"`` -> ``session``)."""
    end = _LABEL_END.search(text)
    if end is None:
        return
    clause = _CLAUSE.split(text[:end.start()])[-1]
    label = " ".join(clause.split()[-_MAX_LABEL_WORDS:])
    if label:
        names.own.append(label + end.group(0).strip())


def _later_loads(tree: SourceTree, name: str, statement: ast.stmt) -> list[ast.Name]:
    """Reads of a local name after the statement that assigns it, in the same scope, in order."""
    scope = tree.function_of(statement) or tree.module
    end = (getattr(statement, "end_lineno", None) or statement.lineno, getattr(statement, "end_col_offset", None) or 0)
    found = [n for n in walk_scope(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
             and (n.lineno, n.col_offset) >= end]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))
