"""The triage sprint's rule: a severity and a one-sentence reason for a judged candidate.

Severity is impact (what the weakness lets an attacker do, by CWE) lowered by reach (who can
supply the dangerous value, from the answer's ``signals``) and by doubt (an ``uncertain``
verdict). The scale follows the qualitative bands of CVSS v3.1 (critical / high / medium /
low, plus ``info`` for no risk): remote code execution reachable from a web request is
critical; the same sink fed only by a function parameter is high (a caller decides); by a
parameter of library code (a file with no entry point for outside data, signal ``reach``:
``"library"``) or a value whose origin is unknown, medium; test code, dead code and answers
that clear the candidate are info. Doubt lowers one band more, so a library parameter the
analyst keeps as uncertain is low.

Signals read (all optional, so answers from any model work): ``source`` (``"request"``,
``"parameter"``, ``"unknown"``, ``"constant"``, ``"sanitised"``), ``channel`` (``"http"``,
``"network"``, ``"cli"``, ``"stdin"``, ``"env"``, ``"local"``), ``reach``, ``in_test``,
``dead_code``, ``guards`` (for asserts), ``purpose`` (for hashes and random numbers).
"""

from __future__ import annotations

from typing import Any

from .shapes import SEVERITIES, Candidate, ModelAnswer, Severity

# CWE -> (impact when an attacker controls the value, name, what the attacker gains)
_IMPACT: dict[int, tuple[Severity, str, str]] = {
    78: ("critical", "Command injection", "run commands on the host"),
    88: ("high", "Argument injection", "change what the started program does"),
    89: ("critical", "SQL injection", "read or change the database"),
    94: ("critical", "Code injection", "run code in the process"),
    95: ("critical", "Eval injection", "run code in the process"),
    502: ("critical", "Unsafe deserialisation", "run code in the process"),
    22: ("high", "Path traversal", "write files outside the intended directory"),
    259: ("high", "Hard-coded password", "log in with a credential published in the source"),
    798: ("high", "Hard-coded credential", "use a secret published in the source"),
    295: ("medium", "Certificate verification off", "read and change the traffic as a man in the middle"),
    327: ("medium", "Weak cryptography", "forge or reverse what the algorithm protects"),
    328: ("medium", "Weak hash", "forge collisions or crack what the hash protects"),
    347: ("high", "Signature not verified", "forge the tokens the application trusts"),
    703: ("high", "Check removed by python -O", "get past a check that optimised Python drops"),
    636: ("high", "Check that fails open", "get past a check whose failure is swallowed"),
    79: ("medium", "Cross-site scripting", "run script in other users' browsers"),
    80: ("medium", "Cross-site scripting", "run script in other users' browsers"),
    330: ("medium", "Predictable random value", "predict the secret it generates"),
    338: ("medium", "Predictable random value", "predict the secret it generates"),
    611: ("high", "XML external entities", "read local files or reach internal hosts through the parser"),
    776: ("medium", "XML entity expansion", "exhaust the server's memory and CPU"),
    1336: ("critical", "Server-side template injection", "run code in the template engine"),
    643: ("high", "XPath injection", "read XML data the query was meant to hide"),
    90: ("high", "LDAP injection", "read or change directory entries the query was meant to hide"),
    601: ("medium", "Open redirect", "send users to a site of the attacker's choosing"),
    918: ("high", "Server-side request forgery", "make the server reach internal hosts"),
    501: ("medium", "Trust boundary violation", "plant data that later code trusts as checked"),
    113: ("medium", "HTTP header injection", "add headers or split the response"),
    117: ("low", "Log injection", "forge log entries"),
    730: ("medium", "Regular expression injection", "make the server spend its CPU on a crafted pattern"),
    1333: ("medium", "Regular expression denial of service", "make the server spend its CPU on a crafted text"),
    614: ("low", "Cookie without Secure", "read the cookie on a plain-HTTP connection"),
    1004: ("low", "Cookie without HttpOnly", "read the cookie from a script injected into the page"),
}
# CWEs whose severity depends on who supplies the dangerous value.
_INJECTIONS = frozenset({78, 88, 89, 94, 95, 502, 22, 79, 80, 611, 776, 1336, 643, 90, 601, 918, 501, 113, 117, 730})
# How many bands reach lowers an injection: outside data over the network costs nothing.
_REACH_STEPS = {"http": 0, "network": 0, "cli": 2, "stdin": 2, "local": 1, "file": 1, "env": 2}
_SOURCE_STEPS = {"request": 0, "parameter": 1, "unknown": 2, "constant": 3, "sanitised": 3, "none": 3}
_DETECTOR_SEVERITY: dict[str, Severity] = {"HIGH": "high", "MEDIUM": "medium", "LOW": "low"}


def triage(candidate: Candidate, answer: ModelAnswer) -> tuple[Severity, str]:
    """Rates a judged candidate.

    Args:
        candidate: The detector's candidate.
        answer: The model's answer about it (investigate or revalidate).

    Returns:
        ``(severity, reason)``: one of ``critical``/``high``/``medium``/``low``/``info`` and one
        sentence saying why. Deterministic and read-only.
    """
    signals: dict[str, Any] = answer.signals or {}
    cwe = answer.cwe if answer.cwe is not None else candidate.cwe
    impact, name, gain = _IMPACT.get(cwe or -1, (_DETECTOR_SEVERITY.get(candidate.detector_severity.upper(), "low"),
                                                 candidate.rule_name.replace("_", " ").capitalize() or "Finding",
                                                 "exploit what the detector describes"))
    label = f"{name} (CWE-{cwe})" if cwe is not None else name
    if answer.verdict == "not_vulnerable":
        return "info", f"{label} was judged not a vulnerability, so it carries no risk."
    if signals.get("in_test"):
        return "info", f"{label} is in test code, which is not deployed."
    if signals.get("dead_code"):
        return "info", f"{label} is in code that never runs."
    steps, reach = _reach(cwe, signals)
    if answer.verdict == "uncertain":
        steps += 1
        reach += "; the analysis could not confirm it"
    severity = _lower(impact, steps)
    return severity, f"{label} {reach}: an attacker could {gain}."


def _reach(cwe: int | None, signals: dict[str, Any]) -> tuple[int, str]:
    """Returns how many bands to lower the impact by, and the clause that says why."""
    if cwe == 703:
        guards = signals.get("guards")
        if guards == "authorization":
            return 0, "guards an authorisation decision with assert"
        if guards == "input-validation":
            return 1, "validates outside data with assert"
        return 2, "uses assert as a check"
    if cwe in (327, 328, 330, 338):
        return (0, "protects a secret with it") if signals.get("purpose") == "security" else (1, "is used for an unclear purpose")
    if cwe not in _INJECTIONS:
        return 0, "is present"
    source = signals.get("source")
    channel = signals.get("channel")
    if source == "request":
        steps = _REACH_STEPS.get(channel or "http", 0)
        where = {"http": "web requests", "network": "the network", "cli": "the command line",
                 "stdin": "standard input", "env": "the environment", "file": "a file's content",
                 "local": "a file any local user can write"}.get(channel or "http", "outside data")
        return steps, f"is fed by {where}"
    if source == "parameter" and signals.get("reach") == "api":
        if signals.get("unseen"):
            return 2, "is fed by a parameter of a public function (its callers decide) through code the models do not describe"
        return 1, "is fed by a parameter of a public function (its callers decide)"
    if source == "parameter" and signals.get("reach") == "library":
        return 2, "is fed by a parameter of library code whose file shows no entry point for outside data"
    if source in _SOURCE_STEPS:
        clause = {"parameter": "is fed by a function parameter (its callers decide)",
                  "unknown": "is fed by a value of unknown origin"}.get(source, "is fed only by constants or sanitised values")
        return _SOURCE_STEPS[source], clause
    return 1, "has no stated source"


def _lower(severity: Severity, steps: int) -> Severity:
    index = min(SEVERITIES.index(severity) + max(steps, 0), SEVERITIES.index("low"))
    return SEVERITIES[index]  # type: ignore[return-value]
