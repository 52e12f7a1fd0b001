"""CWE-338, a predictable random number generator used for a secret."""

from __future__ import annotations

import ast

from ..assessment import PROBABLE, Assessment, Site
from ..tree import SourceTree, words

CWE = 338
# Words that name a secret on their own.
_SECRET_WORDS = frozenset({
    "token", "tokens", "password", "passwd", "pwd", "passphrase", "secret", "secrets", "salt",
    "nonce", "otp", "pin", "csrf", "session", "sessionid", "captcha", "apikey", "credential",
    "credentials", "iv",
})
# Words that name a secret only next to a qualifier: an API key (not a sort key), a reset code
# (not source code).
_QUALIFIED = {
    "key": frozenset({"api", "secret", "private", "signing", "encryption", "access", "session", "auth", "hmac"}),
    "code": frozenset({"verification", "verify", "reset", "confirm", "confirmation", "activation", "auth", "login",
                       "sms", "email", "invite", "invitation", "mfa", "twofa", "security", "recovery", "one"}),
    "id": frozenset({"session", "secret"}),
}


def assess(site: Site) -> Assessment | None:
    """Judges a call of the ``random`` module (bandit B311).

    Python's ``random`` is a Mersenne Twister: after 624 outputs its state, and so every
    future value, can be reconstructed. That matters only for values that must be
    unguessable: tokens, passwords, salts, nonces, one-time codes, session ids. The purpose is
    read from the names around the call (the variable, attribute, key or keyword it is stored
    in and the function that produces it); shuffling, sampling, jitter, load balancing and
    test data need no secrecy.

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
    names = _names_around(tree, node)
    secret = next((n for n in names if _names_secret(n)), None)
    if secret is not None:
        fact = (f"{name}() is predictable (Mersenne Twister), and the value is used for {secret!r}, which must be "
                "unguessable; the secrets module is the fix.")
        return Assessment(verdict="vulnerable", confidence=PROBABLE, cwe=CWE, facts=(fact,),
                          signals={"sink": "random", "source": "none", "sanitised": False, "purpose": "security"})
    shown = ", ".join(repr(n) for n in names[:4]) or "no name"
    fact = (f"{name}() is predictable, but the value is used for {shown}, nothing that must be unguessable "
            "(sampling, shuffling, jitter or similar), so predictability gives an attacker nothing.")
    return Assessment(verdict="not_vulnerable", confidence=PROBABLE, cwe=CWE, facts=(fact,),
                      signals={"sink": "random", "source": "none", "sanitised": False, "purpose": "other"})


def _names_secret(name: str) -> bool:
    found = set(words(name))
    if found & _SECRET_WORDS:
        return True
    return any(word in found and found & qualifiers for word, qualifiers in _QUALIFIED.items())


def _names_around(tree: SourceTree, node: ast.Call) -> list[str]:
    """The names the random value is stored in or produced for, nearest first."""
    found: list[str] = []
    child: ast.AST = node
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, ast.keyword) and ancestor.arg:
            found.append(ancestor.arg)
        elif isinstance(ancestor, ast.Dict):
            found.extend(k.value for k, v in zip(ancestor.keys, ancestor.values)
                         if v is child and isinstance(k, ast.Constant) and isinstance(k.value, str))
        elif isinstance(ancestor, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = ancestor.targets if isinstance(ancestor, ast.Assign) else [ancestor.target]
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Name):
                        found.append(part.id)
                    elif isinstance(part, ast.Attribute):
                        found.append(part.attr)
                    elif isinstance(part, ast.Constant) and isinstance(part.value, str):
                        found.append(part.value)
        elif isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append(ancestor.name)
            break
        child = ancestor
    return found
