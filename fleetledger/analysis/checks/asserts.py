"""CWE-703, ``assert`` used as a check: ``python -O`` removes it."""

from __future__ import annotations

import ast

from ..assessment import CERTAIN, LIKELY, PROBABLE, Assessment, Site
from ..sources import source_of
from ..taint import RANK, Leaf, Tracer
from ..tree import SourceTree, words

CWE = 703
_AUTHZ_WORDS = frozenset({
    "admin", "superuser", "staff", "perm", "perms", "permission", "permissions", "authorized",
    "authorised", "authenticated", "owner", "owns", "owned", "role", "roles", "privilege",
    "privileges", "allowed", "can", "access", "acl", "granted", "scope", "scopes", "logged",
    "moderator", "member", "authorize", "authorise", "entitled", "login",
})
# "can" says "is allowed to" only before an action (can_edit, user.can("delete")); in a long
# capability flag such as features.can_return_rows_from_bulk_insert it says what a backend supports.
_ACTION_WORDS = frozenset({
    "edit", "delete", "view", "change", "add", "read", "write", "create", "update", "manage",
    "publish", "approve", "moderate", "access", "admin", "administer", "see", "modify", "remove",
    "upload", "download", "export", "import", "invite", "ban", "assign", "transfer", "refund",
    "comment", "post", "vote", "login", "act", "impersonate",
})
_IDENTITY_WORDS = frozenset({"user", "owner", "author", "account", "tenant", "creator", "uid"})
_SENSITIVE_CALLS = frozenset({
    "delete", "remove", "destroy", "drop", "save", "update", "write", "create", "transfer",
    "grant", "revoke", "execute", "commit", "set_password", "send", "pay", "refund", "approve",
    "publish", "purge", "reset", "withdraw", "deactivate", "promote", "bulk_delete",
})


def assess(site: Site) -> Assessment | None:
    """Judges an ``assert`` statement (bandit B101).

    ``python -O`` (and ``PYTHONOPTIMIZE``) strips asserts, so an assert that makes a security
    decision silently disappears in optimised deployments. It is a finding when its test or
    message speaks of authorisation (``assert user.is_admin``, ``assert doc.owner ==
    request.user``, ``assert ..., "login required"``; "can" only before an action, as in
    ``can_edit``, not in a capability flag such as ``features.can_return_rows``), more so
    when a state-changing call follows, or when it is the only validation of request data.
    Asserts on internal invariants and type narrowing are not (removing them changes no
    security decision). Test code is handled by the analyst before this check.

    Args:
        site: The flagged statement.

    Returns:
        The assessment, or None when the node is not an ``assert``.
    """
    node = site.node
    if not isinstance(node, ast.Assert):
        return None
    tree = site.tree
    test = tree.segment(node.test, 60)
    lead = f"`assert {test}` is removed when Python runs with -O."
    identifiers = _identifiers(node.test) + (_identifiers(node.msg) if node.msg is not None else [])
    vocabulary = {w for ident in identifiers for w in _authz_words(ident)}
    authz = sorted(vocabulary & _AUTHZ_WORDS)
    if authz or _identity_comparison(node.test):
        follow = _sensitive_follow_up(tree, node)
        fact = (f"It makes an authorisation decision ({', '.join(authz) or 'an ownership comparison'})"
                + (f" guarding {follow}, which then runs for anyone." if follow else ", which then no longer happens."))
        return Assessment(verdict="vulnerable", confidence=CERTAIN if follow else LIKELY, cwe=CWE,
                          facts=(lead, fact), signals={"sink": "assert", "guards": "authorization",
                                                       "source": "none", "sanitised": False})
    worst = _worst_input(tree, node.test)
    if worst is not None and worst.kind == "request":
        fact = f"It is the validation of outside data ({worst.detail}); without it that data flows on unchecked."
        return Assessment(verdict="vulnerable", confidence=PROBABLE, cwe=CWE, facts=(lead, fact),
                          signals={"sink": "assert", "guards": "input-validation", "source": "request",
                                   "channel": worst.channel, "sanitised": False})
    if worst is not None and worst.kind == "parameter":
        fact = f"It checks {worst.detail}; whether that matters depends on the callers."
        return Assessment(verdict="uncertain", confidence=4, cwe=CWE, facts=(lead, fact),
                          signals={"sink": "assert", "guards": "argument-check", "source": "parameter", "sanitised": False})
    fact = "It states an internal invariant or narrows a type; removing it changes no security decision."
    return Assessment(verdict="not_vulnerable", confidence=PROBABLE, cwe=CWE, facts=(lead, fact),
                      signals={"sink": "assert", "guards": "invariant", "source": "none", "sanitised": False})


def _identifiers(expr: ast.expr) -> list[str]:
    """Names, attributes and short strings of an assert's test or message (``"admins only"``)."""
    found: list[str] = []
    for node in ast.walk(expr):
        if isinstance(node, ast.Name):
            found.append(node.id)
        elif isinstance(node, ast.Attribute):
            found.append(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 40:
            found.append(node.value)
    return found


def _authz_words(identifier: str) -> tuple[str, ...]:
    """The words of an identifier, without a "can" that does not name a permission."""
    found = words(identifier)
    if "can" in found:
        index = found.index("can")
        following = found[index + 1:]
        if following and following[0] not in _ACTION_WORDS:
            found = found[:index] + found[index + 1:]
    return found


def _identity_comparison(test: ast.expr) -> bool:
    """``a.owner == request.user``: both sides name an identity."""
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.Is)):
            sides = [node.left, node.comparators[0]]
            if all(_identity_words(side) for side in sides):
                return True
    return False


def _identity_words(expr: ast.expr) -> bool:
    names = [n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(expr) if isinstance(n, (ast.Attribute, ast.Name))]
    return any(set(words(name)) & _IDENTITY_WORDS for name in names)


def _sensitive_follow_up(tree: SourceTree, node: ast.Assert) -> str | None:
    parent = tree.parent(node)
    block: list[ast.stmt] = next((getattr(parent, f) for f in ("body", "orelse", "finalbody")
                                  if isinstance(getattr(parent, f, None), list) and any(s is node for s in getattr(parent, f))), [])
    index = next((i for i, s in enumerate(block) if s is node), len(block))
    for stmt in block[index + 1:]:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Call):
                name = sub.func.attr if isinstance(sub.func, ast.Attribute) else getattr(sub.func, "id", "")
                if name in _SENSITIVE_CALLS or name.split("_")[0] in _SENSITIVE_CALLS:
                    return f"`{tree.segment(sub, 40)}` (line {sub.lineno})"
    return None


def _worst_input(tree: SourceTree, test: ast.expr) -> Leaf | None:
    tracer = Tracer(tree, "any")
    worst: Leaf | None = None
    for node in ast.walk(test):
        found: Leaf | None = None
        source = source_of(tree, node) if isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)) else None
        if source is not None:
            found = Leaf(line=node.lineno, kind="request", detail=source.description, channel=source.channel)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            # Sanitisers do not matter here (the question is whose data the assert checks), but a
            # value that came back from other code (a lookup keyed by the input) is not the input.
            leaves = [leaf for leaf in tracer.trace(node).leaves if leaf.through is None]
            found = max(leaves, key=lambda leaf: RANK[leaf.kind], default=None)
        if found is not None and (worst is None or RANK[found.kind] > RANK[worst.kind]):
            worst = found
    return worst
