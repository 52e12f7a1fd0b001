"""CWE-636, a check that fails open: an error swallowed by ``except: pass`` or ``continue``."""

from __future__ import annotations

import ast

from ..assessment import LIKELY, PROBABLE, Assessment, Site
from ..tree import SourceTree, words

CWE = 636
# Words of a call that refuses by raising: a check whose failure is the exception.
_CHECK_WORDS = frozenset({
    "verify", "validate", "authenticate", "authorize", "authorise", "unsign", "check",
    "require", "ensure", "enforce", "permission", "permissions", "perm", "perms", "csrf",
    "signature", "login", "compare", "digest",
})
# Calls that verify and return: ``jwt.decode`` checks the signature and the claims.
_VERIFYING_CALLS = frozenset({"jwt.decode", "jose.jwt.decode", "hmac.compare_digest", "secrets.compare_digest"})


def assess(site: Site) -> Assessment | None:
    """Judges ``try: ... except ...: pass`` or ``continue`` (bandit B110, B112).

    Swallowing an error is a security weakness when the ``try`` block holds a check that
    refuses by raising (``verify_signature(body, sig)``, ``jwt.decode(token, key)``,
    ``check_permission(user)``) and its result is not what the code goes on with: the error
    that means "refused" is dropped and the code after the ``try`` runs as if the check had
    passed. Anything else (closing resources, optional imports, parse fallbacks, best-effort
    clean-up, a verifying call whose returned value is the only way on) changes no security
    decision.

    Args:
        site: The flagged ``except`` clause.

    Returns:
        The assessment, or None when the node is not an ``except`` clause of a ``try``.
    """
    handler = site.node
    if not isinstance(handler, ast.ExceptHandler):
        return None
    tree = site.tree
    owner = tree.parent(handler)
    if not isinstance(owner, (ast.Try, ast.TryStar)):
        return None
    caught = tree.segment(handler.type, 40) if handler.type is not None else "every exception"
    swallow = "continues with the next item" if any(isinstance(s, ast.Continue) for s in handler.body) else "carries on"
    lead = f"The `except` clause on line {handler.lineno} catches {caught} and {swallow} without handling it."
    check = _failing_check(tree, owner.body)
    if check is not None:
        fact = (f"The `try` block runs {check}, a check that refuses by raising; swallowing its error lets the code after "
                "the `try` run as if the check had passed (it fails open).")
        return Assessment(verdict="vulnerable", confidence=PROBABLE, cwe=CWE, facts=(lead, fact),
                          signals={"sink": "check", "source": "none", "sanitised": False, "fails_open": True})
    fact = ("Nothing in the `try` block is a check whose failure means a refusal, so continuing is a fallback or a "
            "clean-up, not a security decision.")
    return Assessment(verdict="not_vulnerable", confidence=LIKELY, cwe=CWE, facts=(lead, fact),
                      signals={"sink": "check", "source": "none", "sanitised": False, "fails_open": False})


def _failing_check(tree: SourceTree, body: list[ast.stmt]) -> str | None:
    """Names a checking call in the block whose result is thrown away, or None."""
    for stmt in body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Await):
            call = call.value
        if not isinstance(call, ast.Call):
            continue
        name = tree.qualname(call.func) or ""
        short = call.func.attr if isinstance(call.func, ast.Attribute) else name
        if name in _VERIFYING_CALLS or set(words(short)) & _CHECK_WORDS:
            return f"`{tree.segment(call, 50)}` (line {call.lineno})"
    return None
