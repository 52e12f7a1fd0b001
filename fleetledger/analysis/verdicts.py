"""The offline analyst's verdicts: what a candidate's recorded facts and its place in the code
show.

A candidate reaches the analyst with the facts the detect step recorded:

* a taint trace (``Candidate.trace["traces"]``: source -> steps -> sink, sanitisers seen), for
  the taint engine's candidates: outside data reaching the sink unsanitised;
* an API misuse (``trace["check"]``), found without taint;
* evidence (``Candidate.evidence``) for another detector's candidate at a sink the engine
  evaluated: what reached that sink (constant, sanitised, a parameter, unknown, tainted).

A finding is dismissed only for a reason the analyst can show: the sink's value is built only
from constants, every non-constant part is sanitised or checked for that sink, or the code is
test code or never runs. An origin the analysis cannot see is not such a reason: the candidate
stays, as ``uncertain``. The confidence scale (0-10) is set against the pipeline's keep rule
(``shapes.survives``: ``vulnerable``, or ``uncertain`` at 5 or more).
"""

from __future__ import annotations

import ast
import ipaddress
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from .entries import defaults_by_param
from .free_names import free_source
from .model_conventions import UNREAD_TEMPLATE
from .tree import SourceTree

Verdict = Literal["vulnerable", "not_vulnerable", "uncertain"]

CERTAIN = 9
LIKELY = 8
PROBABLE = 7
KEPT = 5       # uncertain, kept in the report
DROPPED = 4    # uncertain, below the keep threshold

_REMOTE = frozenset({"http", "network"})
_LOCAL = frozenset({"cli", "stdin", "env", "file"})


@dataclass(frozen=True, kw_only=True)
class Judgement:
    """A verdict with its reasons.

    Attributes:
        verdict: ``"vulnerable"``, ``"not_vulnerable"`` or ``"uncertain"``.
        confidence: 0-10.
        cwe: The weakness.
        facts: Sentences a security engineer can check, in reading order.
        signals: JSON-ready facts for triage (``source``, ``channel``, ``reach``...).
    """

    verdict: Verdict
    confidence: int
    cwe: int | None
    facts: tuple[str, ...]
    signals: dict[str, Any] = field(default_factory=dict)


def describe_trace(trace: dict[str, Any]) -> str:
    """Returns one sentence showing a trace: source, steps, sink, sanitisers."""
    source, sink = trace["source"], trace["sink"]
    steps = [f"{s['what']} (line {s['line']}{'' if s['path'] == sink['path'] else ' of ' + s['path']})"
             for s in trace.get("steps", [])]
    road = f" -> {' -> '.join(steps)}" if steps else ""
    where = "" if source["path"] == sink["path"] else f" of {source['path']}"
    sanitisers = trace.get("sanitisers") or []
    checked = f"; sanitisers on the way, none for this sink: {', '.join(sanitisers)}" if sanitisers else "; no sanitiser on the way"
    return (f"Source: {source['what']} (line {source['line']}{where}){road} -> sink: {sink['what']} "
            f"({sink['role']}, line {sink['line']}){checked}.")


def from_trace(trace: dict[str, Any], cwe: int | None) -> Judgement:
    """Judges a taint engine candidate by its best trace."""
    best = trace["traces"][0]
    channel = best["source"]["channel"]
    facts = [describe_trace(best)]
    others = trace["traces"][1:]
    if others:
        facts.append("Also reached from: " + "; ".join(f"{t['source']['what']} (line {t['source']['line']})" for t in others) + ".")
    if trace.get("also"):
        facts.append(f"The same weakness is flagged by {_rules(trace['also'])}.")
    unseen = [s["what"] for s in best.get("steps", []) if s["what"].startswith("through ")]
    signals: dict[str, Any] = {"source": "request", "channel": channel, "sanitised": False, "analysed": True,
                               "trace": True}
    if cwe == 601 and all(t["source"].get("own_url") and not any(s["what"].startswith("through ") for s in t.get("steps", []))
                          for t in trace["traces"]):  # the address itself, not a part cut out of it (its query)
        signals.update(own_url=True)
        facts.append("The URL is the request's own address (its path, URL or host): a link chooses it only as an "
                     "address of this very site, so the redirect leaves the site only where a path starting with // "
                     "(a scheme-relative URL) reaches this view; routes that start with a fixed segment never do.")
        return Judgement(verdict="uncertain", confidence=KEPT, cwe=cwe, facts=tuple(facts), signals=signals)
    if best["sink"].get("model") == UNREAD_TEMPLATE:
        facts.append("The template was not read: markup is handed to a template to be written unescaped (|safe, "
                     "mark_safe), but this one may escape it, showing the tags instead.")
        return Judgement(verdict="uncertain", confidence=KEPT, cwe=cwe, facts=tuple(facts), signals=signals)
    if best.get("partial"):
        signals.update(partial=True)
        facts.append("The URL's scheme and host are constants: the data picks only its path or query on that host "
                     "(a partial SSRF), which reaches what that host serves, not any host.")
        return Judgement(verdict="uncertain", confidence=KEPT, cwe=cwe, facts=tuple(facts), signals=signals)
    if channel in _REMOTE:
        confidence = CERTAIN if not unseen else LIKELY
        if unseen:
            facts.append(f"The value passes through {unseen[0][8:]}, which the models do not describe; the engine "
                         "assumes it keeps the data's taint.")
        return Judgement(verdict="vulnerable", confidence=confidence, cwe=cwe, facts=tuple(facts), signals=signals)
    if channel == "random":
        signals.update(source="random", purpose="security")
        facts.append("A predictable pseudo-random number becomes a security value: use the secrets module.")
        return Judgement(verdict="vulnerable", confidence=LIKELY, cwe=cwe, facts=tuple(facts), signals=signals)
    if channel in _LOCAL:
        facts.append(f"The data comes from the {'environment' if channel == 'env' else channel}, which only a local user "
                     "or the process's caller controls: a weakness where they are less trusted than the program "
                     "(a setuid tool, a service fed by another account), often the tool's purpose otherwise.")
        return Judgement(verdict="uncertain", confidence=KEPT, cwe=cwe, facts=tuple(facts), signals=signals)
    signals.update(source="parameter", reach="api")
    facts.append("The function is public: its callers decide what the parameter holds, and it reaches the sink "
                 "unchecked, a weakness wherever a caller passes outside data." if not free_source(best["source"]["what"])
                 else "No code of the file binds the name: the program running the file supplies its value, and it "
                 "reaches the sink unchecked, a weakness wherever that value is outside data.")
    if unseen:
        signals.update(unseen=True)
        facts.append(f"On the way it passes through {unseen[0][8:]}, which the models do not describe and which may "
                     "check or transform it.")
        return Judgement(verdict="uncertain", confidence=KEPT, cwe=cwe, facts=tuple(facts), signals=signals)
    return Judgement(verdict="uncertain", confidence=6, cwe=cwe, facts=tuple(facts), signals=signals)


def _rules(folded: list[dict[str, Any]]) -> str:
    return ", ".join(sorted({f"{f['rule_id']}" for f in folded}))


def from_check(trace: dict[str, Any], cwe: int | None) -> Judgement:
    """Judges an API misuse the engine found without taint."""
    check = trace["check"]
    facts = [f"{check['message'][0].upper()}{check['message'][1:]} (line {check['site']['line']})."]
    if trace.get("also"):
        facts.append(f"The same weakness is flagged by {_rules(trace['also'])}.")
    return Judgement(verdict="vulnerable", confidence=PROBABLE, cwe=cwe, facts=tuple(facts),
                     signals={"source": "constant", "sanitised": False, "analysed": True, "check": check["kind"]})


def from_evidence(evidence: dict[str, Any], cwe: int | None, rule: str) -> Judgement:
    """Judges another detector's candidate by what the engine saw reach its sink."""
    state, detail = evidence["state"], evidence["detail"]
    signals: dict[str, Any] = {"analysed": True, "evidence": state}
    if state == "constant":
        signals.update(source="constant", sanitised=False)
        return Judgement(verdict="not_vulnerable", confidence=CERTAIN, cwe=cwe,
                         facts=(f"The value {rule} flags is {detail}: nothing from outside reaches the sink.",), signals=signals)
    if state == "sanitised":
        signals.update(source="sanitised", sanitised=True)
        return Judgement(verdict="not_vulnerable", confidence=LIKELY, cwe=cwe,
                         facts=(f"Every non-constant part of the value {rule} flags is {detail}.",), signals=signals)
    if state == "no-security-use":
        signals.update(source="random", purpose="not security")
        return Judgement(verdict="not_vulnerable", confidence=6, cwe=cwe, facts=(f"Not a secret: {detail}.",), signals=signals)
    if state == "tainted":
        signals.update(source="request", sanitised=False)
        return Judgement(verdict="vulnerable", confidence=LIKELY, cwe=cwe, facts=(f"The value {rule} flags: {detail}.",),
                         signals=signals)
    if state == "parameter":
        signals.update(source="parameter", sanitised=False)
        return Judgement(verdict="uncertain", confidence=6, cwe=cwe,
                         facts=(f"The value {rule} flags: {detail}; no caller the analysis sees passes outside data, "
                                "so callers elsewhere decide.",), signals=signals)
    signals.update(source="unknown", sanitised=False)
    return Judgement(verdict="uncertain", confidence=KEPT, cwe=cwe,
                     facts=(f"The value {rule} flags: {detail}, whose origin the analysis does not see; it is kept for "
                            "a reviewer, not dismissed.",), signals=signals)


# --- detector rules the engine does not model at the flagged place ------------------------------

def imports(tree: SourceTree, node: ast.AST, cwe: int | None) -> Judgement:
    """An import of a module bandit lists (B401-B411): importing runs none of its functions;
    each call that could misuse it is flagged and judged where it happens."""
    return Judgement(verdict="not_vulnerable", confidence=PROBABLE, cwe=cwe,
                     facts=(f"`{tree.segment(node, 50)}` only imports a module; each call that could misuse it is "
                            "flagged and judged where it happens.",), signals={"source": "none", "analysed": True})


# Library calls that verify and raise when the check fails (their failure is the exception).
VERIFYING_CALLS = frozenset({"jwt.decode", "jose.jwt.decode", "hmac.compare_digest", "itsdangerous.Signer.unsign",
                             "itsdangerous.URLSafeSerializer.loads", "itsdangerous.URLSafeTimedSerializer.loads",
                             "django.core.signing.loads", "cryptography.fernet.Fernet.decrypt",
                             "nacl.signing.VerifyKey.verify"})


def swallowed(tree: SourceTree, node: ast.AST, cwe: int | None) -> Judgement:
    """``except: pass`` / ``continue`` (B110, B112): a weakness when the ``try`` block runs a
    library call that refuses by raising (a signature or token check), so the refusal is
    dropped and the code goes on as if the check had passed."""
    handler = node if isinstance(node, ast.ExceptHandler) else None
    parent = tree.parent(handler) if handler is not None else None
    body = parent.body if isinstance(parent, ast.Try) else []
    for statement in body:
        # Only a check whose result is thrown away fails open when its error is swallowed; one
        # whose result the code returns or keeps goes on only when the check passed.
        call = statement.value if isinstance(statement, ast.Expr) else None
        call = call.value if isinstance(call, ast.Await) else call
        if isinstance(call, ast.Call):
            name = tree.qualname(call.func) or ""
            if name in VERIFYING_CALLS:
                return Judgement(verdict="vulnerable", confidence=PROBABLE, cwe=636,
                                 facts=(f"`{tree.segment(call, 50)}` (line {call.lineno}) refuses by raising, and the "
                                        "handler swallows the refusal: the code after the try runs as if the check "
                                        "passed.",), signals={"source": "none", "analysed": True})
    return Judgement(verdict="not_vulnerable", confidence=6, cwe=cwe,
                     facts=("The swallowed error comes from no verifying call the models know; dropping an error is a "
                            "robustness question here, not a security decision.",), signals={"source": "none", "analysed": True})


_LOOPBACK = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})


def tls(tree: SourceTree, node: ast.AST, cwe: int | None) -> Judgement:
    """``verify=False`` or an unverified SSL context (B501, B323, FL002): a man in the middle can
    read and change the traffic, unless the URL is a constant loopback address. Where the code
    turns verification off only when a test of its function's parameter says so (``if verify is
    False:``, an HTTP client's option), its callers decide: uncertain, as a public function's
    parameter reaching a sink is."""
    switch = _caller_switch(tree, node)
    if switch is not None:
        name, line = switch
        return Judgement(verdict="uncertain", confidence=KEPT, cwe=295,
                         facts=(f"`{tree.segment(node, 60)}` turns certificate verification off only where the test of "
                                f"the parameter {name!r} (line {line}) says so: the function's callers decide, and it is a "
                                "weakness wherever one asks for it.",),
                         signals={"source": "parameter", "reach": "api", "analysed": True})
    if isinstance(node, ast.Call):
        url = next((k.value for k in node.keywords if k.arg == "url"), None)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        index = 1 if method == "request" else 0
        url = url if url is not None else (node.args[index] if len(node.args) > index else None)
        host = _constant_host(url)
        if host is not None and _loopback(host):
            return Judgement(verdict="not_vulnerable", confidence=LIKELY, cwe=295,
                             facts=(f"Certificate checks are off only for the fixed loopback host {host!r}; the traffic "
                                    "never leaves the machine.",), signals={"source": "constant", "analysed": True})
    return Judgement(verdict="vulnerable", confidence=PROBABLE, cwe=295,
                     facts=(f"`{tree.segment(node, 60)}` turns certificate verification off, so a man in the middle can "
                            "impersonate the server.",), signals={"source": "constant", "analysed": True})


def _caller_switch(tree: SourceTree, node: ast.AST) -> tuple[str, int] | None:
    """``(parameter, line)`` when ``node`` runs only under an ``if`` (or a conditional
    expression) whose test reads a switch of the function around it: a parameter with a
    ``True``/``False`` default or a ``bool`` annotation (``verify=True``), which the caller sets
    to turn verification off; else None. A test of any other parameter (``if data is None``)
    says nothing of who decides."""
    function = tree.function_of(node)
    if function is None:
        return None
    args = function.args
    defaults = defaults_by_param(args)
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]
              if isinstance(defaults.get(a.arg), ast.Constant) and isinstance(defaults[a.arg].value, bool)
              or a.annotation is not None and any(isinstance(n, ast.Name) and n.id == "bool" for n in ast.walk(a.annotation))}
    child: ast.AST = node
    for ancestor in tree.ancestors(node):
        if ancestor is function:
            return None
        test = ancestor.test if isinstance(ancestor, (ast.If, ast.IfExp)) and child is not ancestor.test else None
        if test is not None:
            read = next((n for n in ast.walk(test) if isinstance(n, ast.Name) and n.id in params), None)
            if read is not None:
                return read.id, read.lineno
        child = ancestor
    return None


def _constant_host(url: ast.expr | None) -> str | None:
    text = ""
    if isinstance(url, ast.Constant) and isinstance(url.value, str):
        text = url.value
    elif isinstance(url, ast.JoinedStr) and url.values and isinstance(url.values[0], ast.Constant):
        text = str(url.values[0].value)
    elif isinstance(url, ast.BinOp) and isinstance(url.left, ast.Constant) and isinstance(url.left.value, str):
        text = url.left.value
    if "://" not in text or not any(mark in text.split("://", 1)[1] for mark in ":/?#"):
        return None
    return urlsplit(text).hostname


def _loopback(host: str) -> bool:
    if host in _LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_PLACEHOLDER = re.compile(r"\{[^}]*\}|%\(?\w*\)?s|^<[^>]*>$|^\$\{?\w+\}?$|^\[[^\]]*\]$")
_FILE_SUFFIXES = (".html", ".txt", ".json", ".yaml", ".yml", ".pem", ".key", ".crt", ".cfg", ".ini", ".j2", ".env")
# Values a protocol or API uses as words (auth schemes, grant types, HTTP methods, where a
# token travels): a string equal to one of them is a keyword, not a credential.
PROTOCOL_WORDS = frozenset({
    "bearer", "basic", "digest", "jwt", "token", "access_token", "refresh_token", "id_token", "password", "passwd",
    "secret", "api_key", "apikey", "x-api-key", "authorization", "oauth", "oauth2", "client_credentials",
    "authorization_code", "implicit", "code", "none", "null", "true", "false", "hidden", "text", "mac", "hmac",
    "session", "get", "post", "put", "patch", "delete", "head", "options", "cookie", "cookies", "header", "headers",
    "query", "form", "body", "json", "meta", "access", "refresh",
})


def credential(tree: SourceTree, node: ast.AST, cwe: int | None) -> Judgement:
    """A string bandit took for a hard-coded credential (B105-B107), judged by the string
    itself: empty, a mask, a placeholder, a URL or path, a protocol keyword, or a sentence for
    people is not a credential; anything else is (weaker when short and low in entropy)."""
    values = _strings_at(_secret_of(tree, node))
    if not values:
        return Judgement(verdict="uncertain", confidence=DROPPED, cwe=cwe,
                         facts=("No string literal at the flagged place to judge.",), signals={"analysed": False})
    setting, stored = _framework_secret(tree, node)
    # Several strings at one place (a call's keyword arguments): the framework's secret if one
    # of them is, else the most secret-looking one.
    value = stored if stored is not None else max(
        values, key=lambda text: (_not_credential(text) is None, _entropy(text) if text else 0.0))
    reason = _not_credential(value)
    if setting is not None and _ENVIRONMENT_NAME.fullmatch(value.strip()):
        reason = "the name of a setting or an environment variable"
    elif setting is not None and reason in _SHAPES_OF_WEAK_SECRETS:
        # The framework signs sessions or tokens with whatever string this is: a word, a run
        # of one letter or an identifier is a weak key written in the source, not a name.
        return Judgement(verdict="uncertain", confidence=KEPT, cwe=cwe,
                         facts=(f"The framework's secret {setting} is the literal {_show(value)} ({reason}): anyone who "
                                "reads the source can sign what the framework trusts.",),
                         signals={"source": "constant", "secret": True, "analysed": True})
    if reason is not None:
        return Judgement(verdict="not_vulnerable", confidence=LIKELY, cwe=cwe,
                         facts=(f"The string {_show(value)} is {reason}, not a credential.",),
                         signals={"source": "constant", "secret": False, "analysed": True})
    strong = _entropy(value) >= 3.0 and len(value) >= 12
    return Judgement(verdict="vulnerable" if strong else "uncertain", confidence=PROBABLE if strong else KEPT, cwe=cwe,
                     facts=(f"The literal {_show(value)} is in the source: anyone who can read it has the credential, "
                            "and changing it needs a release.",), signals={"source": "constant", "secret": True, "analysed": True})


# Settings and arguments that frameworks document as the key they sign sessions, cookies or
# tokens with (Flask's SECRET_KEY config and ``app.secret_key``, Django's SECRET_KEY setting,
# Flask-JWT-Extended's JWT_SECRET_KEY, Flask-WTF's WTF_CSRF_SECRET_KEY, Starlette's
# ``SessionMiddleware(secret_key=)``): library API names, not names the code's author chose.
FRAMEWORK_SECRETS = frozenset({"SECRET_KEY", "secret_key", "JWT_SECRET_KEY", "WTF_CSRF_SECRET_KEY"})

# A name in capitals (``FLASK_SECRET_KEY``): in a framework's secret, the name of the setting or
# of the environment variable that holds the key, not the key.
_ENVIRONMENT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")

# What ``_not_credential`` calls a string that a framework's secret may still be: any string
# there is the key, however little it looks like one.
_SHAPES_OF_WEAK_SECRETS = frozenset({
    "a mask of one repeated character", "a protocol keyword, HTTP method or field name", "a sentence written for people",
    "an identifier made of words (a key, field or setting name)", "a prefix that other text completes",
})


def _framework_secret(tree: SourceTree, node: ast.AST) -> tuple[str | None, str | None]:
    """The name of the framework secret (``FRAMEWORK_SECRETS``) that the string bandit flagged
    at ``node`` is stored in (``config["SECRET_KEY"] = s``, ``app.secret_key = s``,
    ``SECRET_KEY = s``, ``{"SECRET_KEY": s}`` or ``f(secret_key=s)``) and, for a call, the
    string that keyword passes; ``(None, None)`` when it is stored elsewhere."""
    parent = tree.parent(node)
    if isinstance(parent, ast.Dict) and any(key is node for key in parent.keys):
        return _secret_name(node), None
    holder = tree.parent(parent) if isinstance(parent, ast.Subscript) and parent.slice is node else None
    if isinstance(holder, (ast.Assign, ast.AnnAssign)):
        return _secret_name(node), None
    statement: ast.AST | None = node
    while statement is not None and not isinstance(statement, (ast.Assign, ast.AnnAssign, ast.Call, ast.stmt)):
        statement = tree.parent(statement)
    if isinstance(statement, ast.Call):
        named = [(k.arg, k.value.value) for k in statement.keywords if k.arg in FRAMEWORK_SECRETS
                 and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)]
        return named[0] if named else (None, None)
    targets = (statement.targets if isinstance(statement, ast.Assign)
               else [statement.target] if isinstance(statement, ast.AnnAssign) else [])
    for target in targets:
        name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else None
        if name is None and isinstance(target, ast.Subscript):
            name = _secret_name(target.slice)
        if name in FRAMEWORK_SECRETS:
            return name, None
    return None, None


def _secret_name(key: ast.AST) -> str | None:
    if isinstance(key, ast.Constant) and key.value in FRAMEWORK_SECRETS:
        return str(key.value)
    return None


def _secret_of(tree: SourceTree, node: ast.AST) -> ast.AST:
    """The string that would be the secret: a dictionary key names it, its value holds it
    (``{"password": "admin123"}``: bandit flags the key)."""
    parent = tree.parent(node)
    if isinstance(parent, ast.Dict) and any(key is node for key in parent.keys):
        return parent.values[[key is node for key in parent.keys].index(True)]
    # ``config["SECRET_KEY"] = "..."``: bandit flags the key, the assignment stores the secret.
    holder = tree.parent(parent) if isinstance(parent, ast.Subscript) and parent.slice is node else None
    if isinstance(holder, ast.Assign) and any(target is parent for target in holder.targets):
        return holder.value
    if isinstance(holder, ast.AnnAssign) and holder.target is parent and holder.value is not None:
        return holder.value
    # bandit places a call's finding (B106) at the call's start, the innermost node there being
    # the callee's name: the call holds the keyword arguments.
    current: ast.AST | None = node
    while isinstance(current, (ast.Name, ast.Attribute)):
        current = tree.parent(current)
    return current if isinstance(current, ast.Call) else node


def _strings_at(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Call):
        return [k.value.value for k in node.keywords if isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [d.value for d in [*node.args.defaults, *node.args.kw_defaults]
                if isinstance(d, ast.Constant) and isinstance(d.value, str)]
    return []


def _not_credential(value: str) -> str | None:
    text = value.strip()
    lowered = text.lower()
    if not text:
        return "empty"
    if len(set(text) - set(" -_.")) == 1 and set(text) - set(" -_.") <= set("*xX#•●"):
        # "****", "xxxx" or "XXXX-XXXX" hides a value; "aaaaaaa" or "0000" is one (a weak one).
        return "a mask of one repeated character"
    if _PLACEHOLDER.search(text):
        return "a template placeholder"
    if "://" in text or text.startswith(("/", "./", "../")) or lowered.endswith(_FILE_SUFFIXES):
        return "a URL or file path"
    if lowered in PROTOCOL_WORDS:
        return "a protocol keyword, HTTP method or field name"
    if _sentence(text):
        return "a sentence written for people"
    if re.fullmatch(r"_*[a-z]+(_[a-z]+)+_*|_*[A-Z]+(_[A-Z]+)+_*", text) or (
            re.fullmatch(r"[a-z]+(-[a-z]+)+", lowered) and PROTOCOL_WORDS & set(lowered.split("-"))):
        # snake_case, or kebab-case naming what it is for ("set-password"; "correct-horse-battery"
        # is a passphrase)
        return "an identifier made of words (a key, field or setting name)"
    if text[-1] in "-_.:/" and re.fullmatch(r"[\w.:/-]+", text):
        return "a prefix that other text completes"
    return None


def _sentence(text: str) -> bool:
    """True for text made of words separated by spaces (at least two, and most of its tokens
    words: letters, joined by an apostrophe or a hyphen, maybe ending in punctuation), as a
    message is; random characters that happen to hold a space or a newline are
    not (Flask's documented key ``'_5#y2L"F4Q8z\\n\\xec]/'``)."""
    tokens = text.split()
    words = [t for t in tokens if re.fullmatch(r"[^\W\d_]+(?:['’-][^\W\d_]+)*[.,:;!?]?", t)]
    return len(tokens) >= 2 and len(words) >= 2 and len(words) >= 0.6 * len(tokens)


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def _show(value: str) -> str:
    return repr(value if len(value) <= 4 else value[:2] + "*" * min(len(value) - 2, 6))


# Unicode's explicit directional formatting characters (UAX #9): embeddings, overrides, their
# terminator, and isolates. They reorder how the code around them is displayed (Trojan Source,
# CVE-2021-42574). The implicit marks (LRM U+200E, RLM U+200F, ALM U+061C) only set the
# direction of neutral characters next to them: dates and numbers in right-to-left text use them.
EXPLICIT_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def bidi(tree: SourceTree, node: ast.AST, cwe: int | None) -> Judgement:
    """A bidirectional control character in the source (B613, CWE-838): a Trojan Source attack
    where the flagged lines hold an explicit embedding, override or isolate; only implicit
    marks (a right-to-left date format's RLM) reorder no code."""
    first = getattr(node, "lineno", 1)
    last = getattr(node, "end_lineno", None) or first
    text = "\n".join(tree.lines[first - 1:last])
    found = sorted({f"U+{ord(c):04X}" for c in text if c in EXPLICIT_BIDI})
    if found:
        return Judgement(verdict="uncertain", confidence=KEPT, cwe=838,
                         facts=(f"Lines {first}-{last} hold explicit directional formatting ({', '.join(found)}), which can "
                                "make the code read differently from how it runs (Trojan Source).",),
                         signals={"source": "none", "analysed": True})
    return Judgement(verdict="not_vulnerable", confidence=LIKELY, cwe=838,
                     facts=(f"Lines {first}-{last} hold only implicit directional marks (such as RLM in a right-to-left "
                            "date format), which set the direction of the characters next to them and reorder no code.",),
                     signals={"source": "none", "analysed": True})
