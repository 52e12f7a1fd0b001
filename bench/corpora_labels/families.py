"""The vulnerability classes the corpus benchmark scores, each a family of CWEs.

A finding matches an expectation when its CWE is in the expectation's family (or in a family
that family accepts: see ``accepts``). CWE 400 belongs to the regex family only when the text
around it is about regular expressions (bandit also uses 400 for a request without a timeout).
"""

from __future__ import annotations

import re

__all__ = ["FAMILIES", "accepts", "family_of"]

FAMILIES: dict[str, frozenset[int]] = {
    "sqli": frozenset({89}),
    "cmdi": frozenset({78, 77, 88}),
    "code": frozenset({94, 95, 96}),
    "path": frozenset({22, 23, 36, 73}),
    "xss": frozenset({79, 80}),
    "ssti": frozenset({1336}),
    "xpath": frozenset({643}),
    "ldap": frozenset({90}),
    "xxe": frozenset({611, 776}),
    "redirect": frozenset({601}),
    "ssrf": frozenset({918}),
    "trust": frozenset({501}),
    "cookie": frozenset({614, 1004}),
    "header": frozenset({113}),
    "log": frozenset({117}),
    "regex": frozenset({730, 1333}),
    "deser": frozenset({502}),
    "hash": frozenset({328, 327, 916}),
    "random": frozenset({330, 338}),
    "creds": frozenset({798, 259}),
    "tls": frozenset({295}),
}
"""Family name -> its CWEs. ``code`` holds 96 too (a child of 94 in MITRE's tree; semgrep-rules
files its template and ``globals()`` rules under it)."""

_REGEX_TEXT = re.compile(r"regex|regular expression|redos|\bre\.(compile|search|match|fullmatch|sub|findall|split)\b",
                         re.IGNORECASE)
_CODE_AND_TEMPLATES = frozenset({"code", "ssti"})


def family_of(cwe: int | None, text: str = "") -> str | None:
    """Returns the family of a CWE, or None when it is out of scope.

    Args:
        cwe: The CWE number (None: no CWE).
        text: What the CWE was said about (a finding's message, a rule's message, a sample's
            code); decides CWE 400, which counts as the regex family only when this text is
            about regular expressions.

    Returns:
        A key of ``FAMILIES``, or None.
    """
    if cwe is None:
        return None
    if cwe == 400:
        return "regex" if _REGEX_TEXT.search(text) else None
    for name, cwes in FAMILIES.items():
        if cwe in cwes:
            return name
    return None


def accepts(family: str) -> frozenset[str]:
    """Returns the finding families that can match an expectation of ``family``.

    Each family accepts itself. Code injection and server-side template injection accept each
    other: corpora and tools file template injection under either (semgrep-rules under CWE-96,
    bandit's template checks under CWE-94), and a template that runs attacker input is both.
    """
    if family in _CODE_AND_TEMPLATES:
        return _CODE_AND_TEMPLATES
    return frozenset({family})
