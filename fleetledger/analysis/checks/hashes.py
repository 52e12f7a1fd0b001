"""CWE-327/328, a weak hash (MD5, SHA-1...) used where security depends on it."""

from __future__ import annotations

import ast

from ..assessment import LIKELY, OPEN, PROBABLE, Assessment, Site
from ..tree import SourceTree, words

CWE = 328
_SECURITY_WORDS = frozenset({
    "password", "passwd", "pwd", "passphrase", "secret", "token", "signature", "sign", "signed",
    "signing", "hmac", "auth", "authenticate", "authentication", "credential", "credentials",
    "salt", "otp", "nonce", "csrf", "apikey", "session", "login", "verify", "reset", "mac",
})
_BENIGN_WORDS = frozenset({
    "cache", "etag", "checksum", "dedup", "dedupe", "deduplicate", "shard", "bucket",
    "partition", "gravatar", "avatar", "color", "colour", "filename", "slug", "lookup", "memo",
    "memoize", "ring", "content", "chunk", "version", "asset", "static", "bust", "busting",
    "fingerprint", "identicon", "thumbnail", "sharding",
})


def assess(site: Site) -> Assessment | None:
    """Judges a call of a weak hash (bandit B324, B303) by what the digest is for.

    MD5 and SHA-1 are broken for collision resistance and far too fast for passwords; they are
    fine as cache keys, ETags, checksums against accidents or shard keys. The purpose is read
    from the words of the hashed expression, the variable the digest goes to and the enclosing
    function (``hash_password``, ``sign_payload`` vs ``cache_key``, ``etag``): security words
    make it a finding, only benign ones clear it, neither or both leave it open.

    Args:
        site: The flagged call.

    Returns:
        The assessment, or None when the node is not a call.
    """
    node = site.node
    if not isinstance(node, ast.Call):
        return None
    tree = site.tree
    name = tree.qualname(node.func) or tree.segment(node.func, 30)
    vocabulary = _context_words(tree, node)
    security = sorted(vocabulary & _SECURITY_WORDS)
    benign = sorted(vocabulary & _BENIGN_WORDS)
    lead = f"{name}() is a weak hash (collisions are practical, and it is far too fast for passwords)."
    if security and not benign:
        fact = f"Its context says the digest protects something ({', '.join(security)})."
        return Assessment(verdict="vulnerable", confidence=LIKELY, cwe=CWE, facts=(lead, fact),
                          signals={"sink": "hash", "purpose": "security", "source": "none", "sanitised": False})
    if benign and not security:
        fact = f"Its context says the digest is an identifier, not a protection ({', '.join(benign)}), where a weak hash is fine."
        return Assessment(verdict="not_vulnerable", confidence=PROBABLE, cwe=CWE, facts=(lead, fact),
                          signals={"sink": "hash", "purpose": "identifier", "source": "none", "sanitised": False})
    mixed = f" (both: {', '.join(security + benign)})" if security else ""
    fact = f"Its context does not show what the digest is for{mixed}."
    return Assessment(verdict="uncertain", confidence=OPEN, cwe=CWE, facts=(lead, fact),
                      signals={"sink": "hash", "purpose": "unknown", "source": "none", "sanitised": False})


def _context_words(tree: SourceTree, call: ast.Call) -> set[str]:
    """Words of the hashed expression, the digest's variable and the function, plus word pairs (``apikey``)."""
    found = _identifier_words(tree, call)
    return found | {a + b for a in found for b in found if a != b and a + b in _SECURITY_WORDS | _BENIGN_WORDS}


def _identifier_words(tree: SourceTree, call: ast.Call) -> set[str]:
    found: set[str] = set()
    for part in [*call.args, *(k.value for k in call.keywords)]:
        for node in ast.walk(part):
            if isinstance(node, ast.Name):
                found.update(words(node.id))
            elif isinstance(node, ast.Attribute):
                found.update(words(node.attr))
    statement = tree.statement_of(call)
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    found.update(words(node.id))
                elif isinstance(node, ast.Attribute):
                    found.update(words(node.attr))
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    found.update(words(node.value))
    function = tree.function_of(call)
    if function is not None:
        found.update(words(function.name))
    return found
