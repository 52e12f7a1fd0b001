"""Findings of a tool, matched to expectations and counted per family.

The matching rule: a finding matches an expectation when it is in the same file, its line is in
one of the expectation's spans (any line for a whole-file expectation), and its family is one
the expectation's family accepts (``families.accepts``). A taint finding is placed at its sink
and also names its source (SARIF's related location; CodeQL's tests annotate either end of a
flow, and semgrep's taint tests mark where its multi-line match starts, often the source or the
statement that builds the value): its source line and the lines of its trace's steps (SARIF's
code flow), when they are in the same file, match too. Then, per family:

* TP: a positive matched by at least one finding; FN: a positive matched by none;
* FP: a negative matched by at least one finding (one per negative, however many findings);
* unlabelled: distinct ``(file, line, family)`` of in-scope findings in a file that has
  expectations, on a line no expectation of that file covers;
* strict FP (semgrep-rules): unlabelled findings of a family the file itself labels also count
  as false positives, since those test files annotate every place their rules mean.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from .expect import Expectation
from .families import accepts, family_of

__all__ = ["Finding", "Tally", "bandit_findings", "scan_findings", "score"]


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One reported finding, reduced to what the benchmark compares.

    Attributes:
        path: The file, relative to the corpus root, forward slashes.
        line: The 1-based line the tool reports.
        cwe: The reported CWE, or None.
        family: The CWE's family (``families.family_of``), None when out of scope.
        rule: The tool's rule id.
        message: The tool's message.
        flow_lines: The lines of its trace's source and steps in the same file, in flow order.
    """

    path: str
    line: int
    cwe: int | None
    family: str | None
    rule: str
    message: str
    flow_lines: tuple[int, ...] = ()

    @property
    def lines(self) -> tuple[int, ...]:
        """The lines the finding names: where it is reported, then its source's and its steps'
        (``flow_lines``, same file only)."""
        return (self.line, *self.flow_lines)


def _corpus_path(prefix: str, path: str) -> str:
    joined = f"{prefix.rstrip('/')}/{path}" if prefix else path
    return os.path.normpath(joined).replace(os.sep, "/")


def scan_findings(report: dict[str, Any], prefix: str = "") -> list[Finding]:
    """Reads the kept findings of a ``findings.json`` report (``fleetledger.jobs.scan.export``).

    Args:
        report: The parsed report.
        prefix: The scanned folder relative to the corpus root ("" for the root itself), put
            before each finding's path.

    Returns:
        One ``Finding`` per reported finding, with the report's top-level ``cwe``.
    """
    found = []
    for item in report.get("findings", []):
        candidate = item["candidate"]
        message = candidate.get("message", "")
        rationale = (item.get("revalidation") or {}).get("rationale", "")
        traces = (candidate.get("trace") or {}).get("traces") or [{}]
        trace = traces[0]
        flow = [trace.get("source") or {}, *(trace.get("steps") or [])]
        flow_lines = tuple(int(at["line"]) for at in flow if at.get("path") == candidate["path"] and at.get("line"))
        found.append(Finding(path=_corpus_path(prefix, candidate["path"]), line=int(candidate["line"]),
                             cwe=item.get("cwe"), family=family_of(item.get("cwe"), f"{message} {rationale}"),
                             rule=candidate.get("rule_id", ""), message=message, flow_lines=flow_lines))
    return found


def bandit_findings(report: dict[str, Any], scanned: str, prefix: str = "") -> list[Finding]:
    """Reads the issues of ``bandit -f json`` output.

    Args:
        report: The parsed bandit output.
        scanned: The folder bandit was given (its issues' file names start with it).
        prefix: As for ``scan_findings``.

    Returns:
        One ``Finding`` per issue, with ``issue_cwe.id`` and ``line_number``.
    """
    found = []
    for issue in report.get("results", []):
        cwe = (issue.get("issue_cwe") or {}).get("id")
        relative = os.path.relpath(issue["filename"], scanned)
        found.append(Finding(path=_corpus_path(prefix, relative), line=int(issue["line_number"]), cwe=cwe,
                             family=family_of(cwe, issue.get("issue_text", "")), rule=issue.get("test_id", ""),
                             message=issue.get("issue_text", "")))
    return found


def matches(finding: Finding, expectation: Expectation) -> bool:
    """True when ``finding`` counts at ``expectation`` (see the module docstring)."""
    return (finding.family is not None and finding.path == expectation.path
            and finding.family in accepts(expectation.family) and any(expectation.covers(line) for line in finding.lines))


@dataclass(kw_only=True)
class Tally:
    """Counts for one family (or all of them) of one tool on one corpus."""

    tp: int = 0
    fn: int = 0
    fp: int = 0
    tn: int = 0
    unlabelled: int = 0
    unlabelled_own: int = 0
    missed: list[Expectation] = field(default_factory=list)
    false_alarms: list[tuple[Expectation, Finding]] = field(default_factory=list)
    unlabelled_findings: list[Finding] = field(default_factory=list)

    def add(self, other: "Tally") -> None:
        """Adds another tally's counts (not its lists) into this one."""
        for name in ("tp", "fn", "fp", "tn", "unlabelled", "unlabelled_own"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def figures(self) -> dict[str, Any]:
        """The counts and ratios as a JSON-ready dict (None where a ratio has no denominator)."""
        recall = _ratio(self.tp, self.tp + self.fn)
        precision = _ratio(self.tp, self.tp + self.fp)
        strict = _ratio(self.tp, self.tp + self.fp + self.unlabelled_own)
        return {"tp": self.tp, "fn": self.fn, "fp": self.fp, "tn": self.tn, "unlabelled": self.unlabelled,
                "unlabelled_own_family": self.unlabelled_own, "recall": recall, "precision": precision,
                "f1": _f1(recall, precision), "strict_precision": strict, "strict_f1": _f1(recall, strict)}


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _f1(recall: float | None, precision: float | None) -> float | None:
    if recall is None or precision is None:
        return None
    return 2 * recall * precision / (recall + precision) if recall + precision else 0.0


def _by_path(items: Iterable[Any]) -> dict[str, list[Any]]:
    grouped: dict[str, list[Any]] = defaultdict(list)
    for item in items:
        grouped[item.path].append(item)
    return grouped


def _count_expectations(expectations: list[Expectation], findings_by_path: dict[str, list[Finding]],
                        tallies: dict[str, Tally]) -> None:
    for expectation in expectations:
        tally = tallies[expectation.family]
        hits = [f for f in findings_by_path.get(expectation.path, []) if matches(f, expectation)]
        if expectation.vulnerable:
            tally.tp += bool(hits)
            tally.fn += not hits
            if not hits:
                tally.missed.append(expectation)
        else:
            tally.fp += bool(hits)
            tally.tn += not hits
            if hits:
                tally.false_alarms.append((expectation, hits[0]))


def _count_unlabelled(expectations: list[Expectation], findings_by_path: dict[str, list[Finding]],
                      tallies: dict[str, Tally]) -> None:
    for path, in_file in _by_path(expectations).items():
        own_families = {e.family for e in in_file}
        seen = set()
        for finding in findings_by_path.get(path, []):
            key = (finding.line, finding.family)
            if finding.family is None or key in seen or any(e.covers(line) for e in in_file for line in finding.lines):
                continue
            seen.add(key)
            tally = tallies[finding.family]
            tally.unlabelled += 1
            tally.unlabelled_own += finding.family in own_families
            tally.unlabelled_findings.append(finding)


def score(expectations: list[Expectation], findings: list[Finding]) -> dict[str, Tally]:
    """Counts one tool's findings against a corpus's expectations.

    Args:
        expectations: The expectations in the selected split.
        findings: All the tool's findings on the corpus (those outside labelled files are
            ignored).

    Returns:
        ``{family: Tally}`` for every family that has an expectation or an unlabelled
        finding.
    """
    tallies: dict[str, Tally] = defaultdict(Tally)
    findings_by_path = _by_path(findings)
    _count_expectations(expectations, findings_by_path, tallies)
    _count_unlabelled(expectations, findings_by_path, tallies)
    return dict(tallies)
