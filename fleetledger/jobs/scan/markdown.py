"""The Markdown report of a scan: what a person reads first.

Every finding is listed (no cap, no merging), in the SARIF order (``sarif.order_key``). Text
that comes from the scanned repository or a model (paths, messages, rationales, snippets) is
escaped, so it can neither break the tables nor inject links or HTML; its control, bidi and
other format characters become visible escapes (``display.printable``), so ``cat findings.md``
shows them instead of acting on them.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ...display import printable
from . import nosec
from .exclusions import counts as exclusion_counts
from .export_options import ExportOptions
from .fix_export import markdown_section
from .sarif import finding_cwe, finding_verdict, order_key
from .shapes import SEVERITIES, Finding, ModelAnswer, ScanReport

_RATIONALE_CHARS = 160
# CommonMark §2.4: any ASCII punctuation may be backslash-escaped; these are the ones that start
# inline markup, links, HTML or entities, or end a table cell (GFM).
_SPECIAL = re.compile(r"[\\`*_\[\]<>|~&!]")


def to_markdown(report: ScanReport, states: dict[str, dict[str, Any]] | None = None) -> str:
    """Renders the report: summary, incomplete-run banner, exclusions, findings table, details,
    skipped files. The header names the repository root the SARIF URIs are relative to (paths
    here stay relative to the target); a finding whose suppression comment is honoured is
    marked "suppressed" instead of open, and, with a baseline, each says new/unchanged/updated.

    Args:
        report: The scan report.
        states: ``codescanning.candidate_states`` of the SARIF run written beside it; None:
            suppression is decided per finding, no baseline state.

    Returns:
        The Markdown text, ending in one newline; equal reports give equal text.
    """
    findings = sorted(report.findings, key=order_key)
    options = report.export or ExportOptions()
    status = {f.candidate.id: _status(f, options, states) for f in findings}
    parts = [_header(report), _summary(report, findings, status), _coverage(report), _exclusions(report),
             _table(findings, status), _details(findings, status), _files(report)]
    return "\n\n".join(part for part in parts if part) + "\n"


def _header(report: ScanReport) -> str:
    lines = [
        f"# fleetledger scan {_inline(report.run_id)}",
        "",
        f"- Target: {_inline(report.target)}",
        *_code_scanning(report),
        f"- fleetledger {_inline(report.tool_version)}, started {_inline(report.started_utc or 'unknown')}",
    ]
    for code in report.code:  # one line per identity of the code that contributed (``identity``)
        lines.append("- Code: " + _inline(", ".join(f"{name} {value}" for name, value in sorted(code.items()))))
    if not report.complete:
        reason = _inline(report.halt_reason or "no reason recorded")
        lines += ["", f"> **Incomplete run.** The run stopped before every step finished: {reason}. "
                      "The findings below are partial."]
    return "\n".join(lines)


def _code_scanning(report: ScanReport) -> list[str]:
    options = report.export or ExportOptions()
    prefix = options.prefix(report.target)
    lines = [f"- Repository root: {_inline(options.repo_root or report.target)} (SARIF URIs are relative to it"
             + (f"; the target is {_inline(prefix)} in it; paths below are relative to the target)" if prefix else ")"),
             f"- Category: {_inline(options.automation_id(report.target))}",
             "- Suppression comments (# nosec, # noqa: B...): " + ("honoured (--honour-nosec)" if options.honour_nosec
                                                                    else "shown, not honoured (the default)")]
    if options.baseline:
        lines.append(f"- Baseline: {_inline(options.baseline)}")
    return lines


def _status(f: Finding, options: ExportOptions, states: dict[str, dict[str, Any]] | None) -> str:
    """"open" or "suppressed", then the baseline state when there is one ("open, new")."""
    c = f.candidate
    state = (states or {}).get(c.id)
    suppressed = state["suppressed"] if state else options.honour_nosec and nosec.applies(c)
    text = "suppressed" if suppressed else "open"
    return f"{text}, {state['baselineState']}" if state and state.get("baselineState") else text


def _summary(report: ScanReport, findings: list[Finding], status: dict[str, str]) -> str:
    counts = Counter(f.severity for f in findings)
    skipped = sum(f.status == "skipped" for f in report.files)
    lines = ["## Summary", "", "| Severity | Findings |", "| --- | ---: |"]
    lines += [f"| {severity} | {counts[severity]} |" for severity in SEVERITIES]
    lines += [
        f"| **total** | **{len(findings)}** |",
        "",
        f"Files planned: {len(report.files)}; skipped: {skipped}; "
        f"candidates dismissed as false positives: {report.dismissed}.",
    ]
    suppressed = sum(s.startswith("suppressed") for s in status.values())
    if suppressed:
        lines.append(f"Suppressed in source (honoured # nosec / # noqa comments): {suppressed}; the others are open.")
    by_state = Counter(s.split(", ", 1)[1] for s in status.values() if ", " in s)
    if by_state:
        lines.append("Against the baseline: " + ", ".join(f"{by_state[k]} {k}" for k in ("new", "updated", "unchanged")) + ".")
    if skipped:
        lines.append(f"Coverage is incomplete: {skipped} skipped files were not scanned (listed below).")
    excluded = exclusion_counts(report.exclusions)
    if any(excluded.values()):
        lines.append(f"Left out by the repository's own rules: {excluded['excluded_by_repository']}; kept in although "
                     f"the repository's rules asked to leave them out: {excluded['repository_exclusion_refused']}; "
                     f"left out by the policy: {excluded['excluded_by_policy']} (see Exclusions).")
    partly = sum(bool(f.detectors_not_run or f.not_analysed) for f in report.files if f.status == "scanned")
    if partly:
        lines.append(f"{partly} scanned file(s) were analysed in part only: a detector could not run on them, or part "
                     "of their analysis was cut short (listed under File problems).")
    return "\n".join(lines)


def _coverage(report: ScanReport) -> str:
    """Every candidate not judged to the end: where, the detector's verdict, the step not done
    and why, and whether the same command tries it again."""
    if not report.gaps:
        return ""
    lines = ["## Coverage", "", f"{len(report.gaps)} candidate(s) were not judged to the end; they are not findings "
             "and not dismissed. Each keeps its detector verdict:", "",
             "| Location | Rule | Detector verdict | Status | Reason | Tried again |", "| --- | --- | --- | --- | --- | --- |"]
    for gap in report.gaps:
        c = gap.candidate
        lines.append(f"| {_inline(f'{c.path}:{c.line}')} | {_inline(c.rule_id)} {_inline(c.rule_name)} | "
                     f"{_inline(c.detector)} {_inline(c.detector_severity)} | {gap.status} | {_inline(_one_line(gap.reason))} | "
                     f"{'yes, by the same command' if gap.retry else 'no'} |")
    return "\n".join(lines)


_EXCLUSION_LABELS = {("repository", False): "**Repository rule refused**",
                     ("repository", True): "**Excluded by the repository's rules**",
                     ("policy", True): "Excluded by the policy"}


def _exclusions(report: ScanReport) -> str:
    """What each exclusion rule did (``exclusions.Exclusion.describe``): the rule, the count,
    the first paths; findings.json lists every path."""
    if not report.exclusions:
        return ""
    lines = ["## Exclusions", ""]
    lines += [f"- {_EXCLUSION_LABELS.get((e.origin, e.applied), e.origin)}: {_inline(e.describe())}."
              for e in report.exclusions]
    return "\n".join(lines)


def _table(findings: list[Finding], status: dict[str, str]) -> str:
    if not findings:
        return "## Findings\n\nNo findings."
    lines = ["## Findings", "", "| # | Severity | CWE | Verdict | Status | Location | Rule | Rationale |",
             "| ---: | --- | --- | --- | --- | --- | --- | --- |"]
    for number, f in enumerate(findings, 1):
        c = f.candidate
        lines.append(
            f"| {number} | {f.severity} | {_cwe(f)} | {_inline(finding_verdict(f))} | {status[c.id]} | {_inline(_where(f))} | "
            f"{_inline(c.rule_id)} {_inline(c.rule_name)} | {_inline(_one_line(own_rationale(f)))} |"
        )
    return "\n".join(lines)


def own_rationale(f: Finding) -> str:
    """Returns what a finding's table row says about it: the revalidation's rationale, unless
    it quotes the first pass's rationale whole behind words of its own (the offline analyst
    opens every revalidation with the same sentence, which, cut to the column's width, would
    be all each row shows); then the first pass's rationale, which is about this finding.
    Both rationales stay in full in the finding's details."""
    first, last = f.investigation.rationale.strip(), f.revalidation.rationale.strip()
    if not last or (first and first in last):
        return first or last
    return last


def _details(findings: list[Finding], status: dict[str, str]) -> str:
    return "\n\n".join(_detail(number, f, status[f.candidate.id]) for number, f in enumerate(findings, 1))


def _detail(number: int, f: Finding, status: str) -> str:
    c = f.candidate
    comment = c.suppression or {}
    lines = [
        f"### {number}. {f.severity} {_cwe(f)}: {_inline(_where(f))}",
        "",
        f"- Rule: {_inline(c.rule_id)} {_inline(c.rule_name)} ({_inline(c.detector)}; detector severity "
        f"{_inline(c.detector_severity)}, confidence {_inline(c.detector_confidence)})",
        f"- Message: {_inline(c.message)}",
        f"- Scope: {_inline(c.scope)}",
        f"- Severity: {f.severity}, because {_inline(f.severity_reason)}",
        f"- Status: {status}",
        *([f"- Suppression comment at line {comment.get('line')}: {_inline(str(comment.get('comment')))}"] if comment else []),
        *_trace(c.trace),
        "",
        _fenced(c.snippet),
        "",
        _answer("Investigation", f.investigation),
        "",
        _answer("Revalidation", f.revalidation),
        *markdown_section(f, _fenced),
    ]
    return "\n".join(lines)


def _trace(trace: dict[str, Any] | None) -> list[str]:
    """The taint traces of a finding as numbered hops: source, steps, sink."""
    lines: list[str] = []
    for number, flow in enumerate((trace or {}).get("traces", []), 1):
        source, sink = flow["source"], flow["sink"]
        lines += ["", f"Trace {number}{' (partial: the host is fixed)' if flow.get('partial') else ''}:", ""]
        lines.append(f"1. source: {_inline(source['what'])} ({_inline(source['path'])}:{source['line']})")
        for hop, step in enumerate(flow["steps"], 2):
            lines.append(f"{hop}. {_inline(step['what'])} ({_inline(step['path'])}:{step['line']})")
        lines.append(f"{len(flow['steps']) + 2}. sink: {_inline(sink['what'])}, {_inline(sink['role'])} "
                     f"({_inline(sink['path'])}:{sink['line']})")
        if flow.get("sanitisers"):
            lines.append(f"   (sanitisers seen, none for this sink: {_inline(', '.join(flow['sanitisers']))})")
    return lines


def _answer(title: str, answer: ModelAnswer) -> str:
    head = f"**{title}**: {_inline(answer.verdict)}, confidence {answer.confidence}/10"
    body = [f"> {_inline(line)}" if line.strip() else ">" for line in answer.rationale.splitlines()]
    return "\n".join([head, ""] + (body or ["> (no rationale given)"]))


def _files(report: ScanReport) -> str:
    files = sorted(report.files, key=lambda f: f.path)
    skipped = [f"| {_inline(f.path)} | {_inline(f.reason or 'no reason recorded')} |" for f in files
               if f.status == "skipped"]
    problems = [
        f"| {_inline(f.path)} | {kind} | {_inline(detail)} |"
        for f in files
        for kind, details in (("warning", f.warnings), ("internal error", f.internal_errors),
                              ("detector not run", f.detectors_not_run), ("not analysed", f.not_analysed))
        for detail in details
    ]
    sections = []
    if skipped:
        sections.append("\n".join(["## Skipped files", "", "| File | Reason |", "| --- | --- |"] + skipped))
    if problems:
        sections.append("\n".join(["## File problems", "", "| File | Kind | Detail |", "| --- | --- | --- |"] + problems))
    return "\n\n".join(sections)


def _where(f: Finding) -> str:
    c = f.candidate
    return f"{c.path}:{c.line}:{c.col + 1}"


def _cwe(f: Finding) -> str:
    cwe = finding_cwe(f)
    return f"CWE-{cwe}" if cwe is not None else "no CWE"


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _RATIONALE_CHARS else line[: _RATIONALE_CHARS - 1] + "…"


def _inline(text: str) -> str:
    """Escapes text for one line of Markdown (a table cell, a heading, a list item).

    Control and format characters become visible escapes first (``display.printable``, so a
    carriage return or U+2028 does not break the line either); newlines (a file name may hold
    one) then become ``<br>``, the one HTML tag emitted.
    """
    return "<br>".join(_SPECIAL.sub(r"\\\g<0>", line) for line in printable(text, keep="\n\t").splitlines())


def _fenced(snippet: str, language: str = "python") -> str:
    """Returns a code block whose fence is longer than any backtick run inside (CommonMark §4.5).

    The snippet's control and format characters become visible escapes (``display.printable``;
    newlines and tabs stay, a CRLF line end is a newline).
    """
    snippet = printable(snippet.replace("\r\n", "\n"), keep="\n\t")
    longest = max((len(run) for run in re.findall(r"`+", snippet)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{snippet.rstrip()}\n{fence}"
