"""What the exclusion rules did to a scan: which files a rule kept out, or tried to.

A scanned repository's own rules (``.fleetledger.toml``, ``exclude``) must never hide its code
silently. Whether they may hide the files the scan analyses at all is the user's policy's
decision (``Policy.repository_may_exclude``, applied by the gate); either way every output
says what happened: the rule, how many files, which (``Exclusion``). Files the user's own
policy leaves out (its ``read`` patterns) are counted too, as the policy's.

Everything here is computed from the run (the policy of its latest session and the per-file
results), so every report of a run says the same.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ...display import printable
from .shapes import FileReport

DENIED = "denied by policy: "
"""How a skipped file's ``reason`` starts when the gate denied reading it (then the rule)."""
REPOSITORY_RULE = "repository rule exclude "
MAX_LISTED_PATHS = 10
"""Paths a one-line description names (the count is always given, and findings.json lists all)."""


@dataclass(frozen=True, kw_only=True)
class Exclusion:
    """Files one rule kept out of the scan, or tried to.

    Attributes:
        origin: ``"repository"`` (the scanned repository's ``.fleetledger.toml``) or
            ``"policy"`` (the user's policy: no ``read`` pattern matches the file).
        rule: The rule as the gate names it, e.g. ``"repository rule exclude 'app/*.py'"``,
            or ``"policy.read"``.
        applied: True when the files were left out; False when the policy refused the
            repository's rule (``repository_may_exclude`` is false) and the files were scanned.
        paths: The files, sorted (relative to the scanned root).
    """

    origin: Literal["repository", "policy"]
    rule: str
    applied: bool
    paths: tuple[str, ...]

    def to_json(self, *, max_paths: int | None = None) -> dict[str, Any]:
        """Returns the JSON form: ``origin``, ``rule``, ``applied``, ``count`` and ``paths``
        (the first ``max_paths`` of them; all when None)."""
        return {"origin": self.origin, "rule": self.rule, "applied": self.applied, "count": len(self.paths),
                "paths": list(self.paths if max_paths is None else self.paths[:max_paths])}

    def describe(self, *, max_paths: int = MAX_LISTED_PATHS) -> str:
        """Returns one sentence for a person: what the rule did, to how many files, which.

        Paths are shown with ``display.printable`` (one line each, control characters
        escaped); at most ``max_paths`` are named, then how many more.
        """
        shown = ", ".join(printable(p, keep="") for p in self.paths[:max_paths])
        if len(self.paths) > max_paths:
            shown += f" and {len(self.paths) - max_paths} more"
        count = f"{len(self.paths)} file(s)"
        if self.origin == "policy":
            return f"{count} left out of the scan by the user's policy ({self.rule}): {shown}"
        rule = printable(self.rule.removeprefix("repository rule "), keep="")
        if self.applied:
            return (f"{count} left out of the scan by the repository's own rule {rule} (the user's policy lets "
                    f"a repository exclude files: repository_may_exclude = true): {shown}")
        return (f"the repository's own rule {rule} would hide {count} from the scan; refused (the user's policy "
                f"does not let a repository hide its source files: repository_may_exclude = false), so they "
                f"were scanned: {shown}")


def exclusions(files: Iterable[FileReport], policy_body: dict[str, Any]) -> tuple[Exclusion, ...]:
    """Groups the scan's files by the exclusion rule that applied to them (read-only, pure).

    A skipped file whose read the gate denied under a repository ``exclude`` rule, or because
    no ``policy.read`` pattern matched it, belongs to that rule (applied). Any other file that a
    repository ``exclude`` pattern of the policy matches was not hidden: it belongs to that rule
    as refused (the first matching pattern, as the gate takes it).

    Args:
        files: The scan's files (``build_report``'s ``files``).
        policy_body: The body of the policy in force (``RunView.policy["body"]``): its
            ``exclude`` patterns are the repository's.

    Returns:
        The exclusions sorted by origin (the repository's first), rule, and refused before
        applied; empty when no rule excluded or tried to exclude anything.
    """
    patterns = [p for p in policy_body.get("exclude", ()) if isinstance(p, str)]
    groups: dict[tuple[str, str, bool], list[str]] = {}
    for f in sorted(files, key=lambda f: f.path):
        rule = (f.reason or "")[len(DENIED):] if f.status == "skipped" and (f.reason or "").startswith(DENIED) else ""
        if rule.startswith(REPOSITORY_RULE):
            key = ("repository", rule, True)
        elif rule.startswith("no policy.read pattern"):
            key = ("policy", "policy.read", True)
        else:
            pattern = next((p for p in patterns if fnmatch.fnmatchcase(f.path, p)), None)
            if pattern is None:
                continue
            key = ("repository", f"{REPOSITORY_RULE}{pattern!r}", False)
        groups.setdefault(key, []).append(f.path)
    order = sorted(groups, key=lambda k: (k[0] != "repository", k[1], k[2]))
    return tuple(Exclusion(origin=k[0], rule=k[1], applied=k[2], paths=tuple(groups[k])) for k in order)  # type: ignore[arg-type]


def counts(found: Iterable[Exclusion]) -> dict[str, int]:
    """Returns the numbers of files: ``excluded_by_repository`` (left out by the repository's
    rules), ``repository_exclusion_refused`` (the repository's rules would have hidden them;
    scanned) and ``excluded_by_policy`` (left out by the user's policy)."""
    out = {"excluded_by_repository": 0, "repository_exclusion_refused": 0, "excluded_by_policy": 0}
    for e in found:
        name = ("excluded_by_policy" if e.origin == "policy" else
                "excluded_by_repository" if e.applied else "repository_exclusion_refused")
        out[name] += len(e.paths)
    return out
