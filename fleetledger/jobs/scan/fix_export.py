"""The fix sprint's part of the reports: ``patches/<finding-id>.diff`` for each validated
patch, SARIF's ``fixes`` on a result (§3.55), and the "Proposed fix" section of findings.md.

Only a patch whose validation passed every check is exported as a fix; the others are shown in
findings.md with the reason they were not kept (no safe rewrite known, or the check that failed).
"""

from __future__ import annotations

import re
from typing import Any

from ...display import printable
from .shapes import Finding

PATCHES_DIR = "patches"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def patch_name(finding_id: str) -> str:
    """The workspace-relative path of a finding's exported patch."""
    return f"{PATCHES_DIR}/{finding_id}.diff"


_ID = re.compile(r"[0-9a-f]{16}")
"""A candidate's id as ``shapes.candidate_id`` makes it: the only names a patch file gets."""


def patch_files(findings: tuple[Finding, ...] | list[Finding]) -> dict[str, bytes]:
    """Returns ``{patches/<id>.diff: the diff's bytes}`` for every validated fix (read-only).

    The id comes from a worker's record (a worker may be taken over by what it reads): one that
    is not 16 hex digits (``../../x``) would name a file outside the workspace, and gets none."""
    return {patch_name(f.candidate.id): f.validated_fix["proposal"]["diff"].encode("utf-8", "surrogateescape")
            for f in findings if f.validated_fix and _ID.fullmatch(f.candidate.id)}


def sarif_fixes(group: tuple[Finding, ...], artifact: Any) -> list[dict[str, Any]]:
    """Returns the SARIF ``fixes`` (§3.55) of a result: one fix per distinct validated patch
    of the findings merged into it, each an ``artifactChange`` (§3.56) whose replacements
    (§3.57) are the diff's changed lines: ``deletedRegion`` whole old lines (empty for an
    insertion before a line) and ``insertedContent`` the new lines.

    Args:
        group: The findings merged into the result.
        artifact: ``path -> artifactLocation`` (the result's own URI rules).
    """
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for f in group:
        fix = f.validated_fix
        if fix is None or fix["proposal"]["diff"] in seen:
            continue
        proposal = fix["proposal"]
        seen.add(proposal["diff"])
        out.append({"description": {"text": f"{proposal['rationale']} (by {proposal['author']}; "
                                            f"validated: {fix['validation']['reason']})"},
                    "artifactChanges": [{"artifactLocation": artifact(proposal["path"]),
                                         "replacements": replacements(proposal["diff"])}]})
    return out


def replacements(diff: str) -> list[dict[str, Any]]:
    """The SARIF replacements of a unified diff: each run of removed and added lines is one
    replacement of whole lines of the old file (line numbers of the old file, 1-based)."""
    out: list[dict[str, Any]] = []
    old_line = 0
    deleted: list[str] = []
    added: list[str] = []
    start = 0

    def flush() -> None:
        nonlocal deleted, added
        if deleted or added:
            region = ({"startLine": start, "startColumn": 1, "endLine": start + len(deleted), "endColumn": 1}
                      if deleted else {"startLine": start, "startColumn": 1, "endLine": start, "endColumn": 1})
            out.append({"deletedRegion": region, "insertedContent": {"text": "".join(added)}})
        deleted, added = [], []

    for line in diff.split("\n"):
        match = _HUNK.match(line)
        if match:
            flush()
            old_line = int(match.group(1)) - (0 if match.group(2) != "0" else -1)
            continue
        if line.startswith(("---", "+++")) and not deleted and not added:
            continue
        tag, body = line[:1], line[1:]
        if tag == "-":
            if not deleted and not added:
                start = old_line
            deleted.append(body + "\n")
            old_line += 1
        elif tag == "+":
            if not deleted and not added:
                start = old_line
            added.append(body + "\n")
        elif tag == " ":
            flush()
            old_line += 1
        elif tag == "\\":
            if added:
                added[-1] = added[-1][:-1]
    flush()
    return out


def markdown_section(f: Finding, fence: Any) -> list[str]:
    """The "Proposed fix" lines of a finding in findings.md (none without a fix sprint).

    Args:
        f: The finding.
        fence: ``(text, language) -> a fenced code block`` (findings.md's own).
    """
    fix = f.fix
    if fix is None:
        return []
    proposal, check = fix["proposal"], fix.get("validation")
    if not proposal.get("diff"):
        return ["", f"**Proposed fix**: none. {_line(proposal['rationale'])} (by {_line(proposal['author'])})"]
    if check is None:
        return ["", f"**Proposed fix**: not exported: its validation was not recorded (by {_line(proposal['author'])})"]
    if not check["ok"]:
        return ["", f"**Proposed fix**: not exported: {_line(check['reason'])} (by {_line(proposal['author'])})"]
    return ["", f"**Proposed fix** (by {_line(proposal['author'])}, worker {_line(fix.get('worker', '?'))}; "
                f"`{patch_name(f.candidate.id)}`; apply it with `fleetledger patch apply {f.candidate.id}`):", "",
            f"> {_line(proposal['rationale'])}", "",
            f"Validation: applies, parses, the re-scan no longer reports it and reports nothing new"
            f"{' (accepted: ' + _line(', '.join(check['accepted'])) + ')' if check.get('accepted') else ''}; "
            f"tests: {_line(check['tests'])}.", "",
            fence(proposal["diff"], "diff")]


def _line(text: str) -> str:
    return printable(" ".join(str(text).split()))
