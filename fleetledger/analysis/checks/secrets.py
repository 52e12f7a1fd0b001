"""CWE-259/798, hard-coded credentials: is the flagged string really a secret?"""

from __future__ import annotations

import ast
import math
import re
from collections import Counter

from ..assessment import LIKELY, PROBABLE, Assessment, Site
from ..tree import SourceTree, words

# The names bandit's B105-B107 look for (bandit/plugins/general_hardcoded_password.py).
_SECRET_NAME = re.compile(r"(^|_)(pas+wo?r?d|pass(phrase)?|pwd|token|secrete?)(_|$)", re.IGNORECASE)
_PASSWORD_WORDS = frozenset({"password", "passwd", "pass", "pwd", "passphrase", "pw"})
_SECRET_WORDS = _PASSWORD_WORDS | frozenset({"token", "secret", "secrete", "key", "apikey", "credential", "credentials", "auth"})
# Last word of a name that describes a secret rather than holding one: token_type, password_field...
_METADATA_WORDS = frozenset({
    "type", "url", "uri", "endpoint", "field", "header", "name", "label", "prompt", "message",
    "msg", "template", "path", "file", "env", "var", "pattern", "regex", "length", "len",
    "policy", "hint", "param", "column", "col", "attr", "attribute", "kind", "mode", "format",
    "prefix", "suffix", "expiry", "expires", "ttl", "timeout", "lifetime", "age", "algorithm",
    "alg", "scheme", "location", "storage", "backend", "class", "method", "key", "route", "view",
    "error", "help", "text", "title", "placeholder", "selector", "id", "cookie", "setting",
    "source", "origin", "reason", "description", "index", "count", "status", "state", "separator",
    "sep", "delimiter", "dir", "directory",
})
# First word of a name that describes a secret: REASON_CSRF_TOKEN_MISSING, ERROR_BAD_PASSWORD...
_DESCRIBING_WORDS = frozenset({
    "reason", "message", "msg", "error", "err", "label", "help", "prompt", "hint", "title", "text",
    "description", "desc", "doc", "warning", "notice", "placeholder",
})
# The word a name must use for a lexer's or parser's token: only an issued token is a secret,
# and an issued token is never a plain word.
_TOKEN_WORDS = frozenset({"token", "tokens", "tok"})
_KEYWORD_VALUES = frozenset({
    "bearer", "basic", "digest", "jwt", "token", "access_token", "refresh_token", "id_token",
    "password", "passwd", "secret", "api_key", "apikey", "x-api-key", "authorization", "oauth",
    "oauth2", "client_credentials", "authorization_code", "implicit", "code", "none", "null",
    "true", "false", "hidden", "text", "mac", "hmac", "session",
    # HTTP methods and the parts of a request a token can travel in.
    "get", "post", "put", "patch", "delete", "head", "options", "cookie", "cookies", "header",
    "headers", "query", "form", "body", "json", "meta",
})
_FILE_SUFFIXES = (".html", ".txt", ".json", ".yaml", ".yml", ".pem", ".key", ".crt", ".cfg", ".ini", ".j2", ".env")


def assess(site: Site) -> Assessment | None:
    """Judges a string bandit took for a hard-coded password or token (B105, B106, B107).

    The flagged string is not a credential when it is empty, a mask (``"****"``), a template
    placeholder (``"{password}"``, ``"<token>"``, ``"${SECRET}"``), a URL or file path, a protocol
    keyword, HTTP method or field name (``"bearer"``, ``"POST"``, ``"X-Auth-Token"``), a key or
    setting name (``"_password_reset_token"``, a session key), a message about a secret
    (``"CSRF token missing."``), or when the name it is bound to describes a secret instead of
    holding one (``token_type``, ``password_reset_url``, ``token_source``,
    ``REASON_BAD_TOKEN``). A name that says only "token" holds a lexer's or parser's token when
    its value is a plain word (``token == "is not"``, ``token == "COLLATE"``, a sentinel such as
    ``"NOTPROVIDED"``): issued tokens are never plain words. Anything else bound to a secret's
    name, or compared with a password, is a credential in the source (test code is handled by
    the analyst).

    Args:
        site: The flagged string, call or function.

    Returns:
        The assessment (CWE-259 for passwords, CWE-798 for other secrets), or None when no
        name/string pair is at the flagged place.
    """
    pairs = _pairs(site.tree, site.node)
    if not pairs:
        return None
    judged = [(_reason(name, value), name, value, compared) for name, value, compared in pairs]
    secrets = [(name, value, compared) for reason, name, value, compared in judged if reason is None]
    if not secrets:
        reason, name, value, _ = judged[0]
        fact = f"The string {_show(value)} bound to {name!r} is {reason}, not a credential."
        return Assessment(verdict="not_vulnerable", confidence=LIKELY, cwe=_cwe(name), facts=(fact,),
                          signals={"sink": "credential", "source": "constant", "sanitised": False, "secret": False})
    name, value, compared = secrets[0]
    strong = compared or _entropy(value) >= 3.0 and len(value) >= 12
    how = "compared with the user's input as a hard-coded password check" if compared else f"assigned to {name!r}"
    fact = (f"The literal {_show(value)} is {how}: anyone who can read the source (or the package) "
            "has the credential, and changing it needs a release.")
    return Assessment(verdict="vulnerable", confidence=LIKELY if strong else PROBABLE, cwe=_cwe(name), facts=(fact,),
                      signals={"sink": "credential", "source": "constant", "sanitised": False, "secret": True})


def _pairs(tree: SourceTree, node: ast.AST) -> list[tuple[str, str, bool]]:
    """Returns (name, string, compared) for each secret-named string at the flagged node."""
    found: list[tuple[str, str, bool]] = []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        parent = tree.parent(node)
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            found.extend((_target_name(t), node.value, False) for t in targets if _target_name(t))
        elif isinstance(parent, ast.Compare):
            others = [parent.left, *parent.comparators]
            found.extend((_target_name(o), node.value, True) for o in others if o is not node and _target_name(o))
        elif isinstance(parent, ast.Dict):
            for key, value in zip(parent.keys, parent.values):
                if key is node and isinstance(value, ast.Constant) and isinstance(value.value, str):
                    found.append((node.value, value.value, False))
                elif value is node and isinstance(key, ast.Constant) and isinstance(key.value, str):
                    found.append((key.value, node.value, False))
        elif isinstance(parent, ast.keyword) and parent.arg:
            found.append((parent.arg, node.value, False))
    elif isinstance(node, ast.Call):
        for keyword in node.keywords:
            if keyword.arg and _SECRET_NAME.search(keyword.arg) and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str):
                found.append((keyword.arg, keyword.value.value, False))
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        defaults = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
        defaults += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        for arg, default in defaults:
            if _SECRET_NAME.search(arg.arg) and isinstance(default, ast.Constant) and isinstance(default.value, str):
                found.append((arg.arg, default.value, False))
    return [pair for pair in found if _SECRET_NAME.search(pair[0]) or set(words(pair[0])) & _SECRET_WORDS]


def _target_name(target: ast.expr) -> str:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
        return target.slice.value
    return ""


def _reason(name: str, value: str) -> str | None:
    """Returns why ``value`` is not a credential, or None when it looks like one."""
    text = value.strip()
    lowered = text.lower()
    name_words = words(name)
    if not text:
        return "empty"
    if len(set(text)) == 1:
        return "a mask of one repeated character"
    if re.search(r"\{[^}]*\}|%\(?\w*\)?s|^<[^>]*>$|^\$\{?\w+\}?$|^\[[^\]]*\]$", text):
        return "a template placeholder"
    if "://" in text or text.startswith(("/", "./", "../")) or lowered.endswith(_FILE_SUFFIXES):
        return "a URL or file path"
    if lowered in _KEYWORD_VALUES:
        return "a protocol keyword, HTTP method or field name"
    if re.fullmatch(r"_*[A-Za-z]+([_\-.][A-Za-z]+)+", text) and words(text)[-1] in _SECRET_WORDS | {"id", "header", "field", "name"}:
        return "a field, header, key or setting name"
    value_words = words(text)
    if re.search(r"\s", text) and len(value_words) >= 2 and (set(value_words) & _SECRET_WORDS or text[-1] in ".!?:"):
        return "a message about the secret, written for people"
    if name_words and name_words[-1] in _METADATA_WORDS and name_words[-1] not in _SECRET_WORDS | {"key"}:
        return f"the {name_words[-1]} of a secret (the name says so)"
    if len(name_words) > 1 and name_words[0] in _DESCRIBING_WORDS:
        return f"the {name_words[0]} about a secret (the name says so)"
    if set(name_words) & _SECRET_WORDS <= _TOKEN_WORDS and not _is_password_name(name) and re.fullmatch(r"[A-Za-z]+([ .\-][A-Za-z]+)*", text):
        return "a plain word (a lexer token, keyword, sentinel or file name), not an issued token"
    return None


def _is_password_name(name: str) -> bool:
    return bool(set(words(name)) & _PASSWORD_WORDS or re.search(r"pas+wo?r?d|pwd", name, re.IGNORECASE))


def _cwe(name: str) -> int:
    return 259 if _is_password_name(name) else 798


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def _show(value: str) -> str:
    shown = value if len(value) <= 4 else value[:2] + "*" * min(len(value) - 2, 6)
    return repr(shown)
