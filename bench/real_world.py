"""Scan quality on real code: what the pipeline keeps in a whole repository, and how it compares
with a security engineer's verdicts.

The evaluation set (``bench/eval_quality.py``) measures small labelled samples; this script runs
the same in-process pipeline over a real source tree and shows what a user would be handed:

* detect: ``fleetledger.jobs.scan.detect.detect_file`` on every Python file (as the scan plans
  them: ``fleetledger.jobs.scan.plan.discover``), reading the other planned files at their
  planned hashes to follow imports, as the scan's detect tasks do;
* investigate: ``OfflineAnalyst`` first pass; a candidate it does not keep is dismissed;
* triage: the severity of a kept candidate, from the first answer (as the scan job does);
* revalidate: the sceptical pass, given the first answer as ``prior``; the finding is kept when
  ``fleetledger.jobs.scan.shapes.survives`` holds for both answers.

It prints the kept findings by severity and by rule. With ``--labels FILE`` (a JSON list of
``{"path", "line", "rule", "label": "tp"|"fp"|"debatable", "reason"}``, e.g.
``bench/real_world_labels/django-5.1.4.json``) it also compares the kept findings with the
verdicts: per label, how many are kept and at which severity, which labelled true positives
are no longer kept (lost recall), and which kept findings have no verdict yet.

Run: ``python bench/real_world.py .cache/repos/Django-5.1.4 --labels
bench/real_world_labels/django-5.1.4.json [--details] [--json out.json] [--jobs N]``. Files
are processed in parallel; results are merged in path order, so the output is deterministic.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

# fleetledger.jobs.scan.report (imported by eval_quality) needs fleetledger.ledger first; the
# modules used here do not, but importing it keeps the import order the job uses.
import fleetledger.ledger  # noqa: F401
from fleetledger.jobs.scan.detect import detect_file
from fleetledger.jobs.scan.plan import discover
from fleetledger.jobs.scan.shapes import SEVERITIES, ModelRequest, survives
from fleetledger.jobs.scan.source import decode_source
from fleetledger.jobs.scan.triage import triage
from fleetledger.models.offline import ANALYST_VERSION, OfflineAnalyst

LABELS = ("tp", "debatable", "fp")
_ANALYST: OfflineAnalyst | None = None


def scan_file(root: str, relpath: str, readable: dict[str, str]) -> tuple[list[dict[str, Any]], int, str | None]:
    """Runs the pipeline on one file.

    Args:
        root: The scanned root.
        relpath: The file, relative to ``root``.
        readable: Every planned file's path -> its SHA-256 (the files the taint engine may read
            to follow imports, as in a scan).

    Returns:
        ``(kept findings, number of candidates, skip reason or None)``; each finding is a dict
        with ``path``, ``line``, ``col``, ``rule``, ``severity``, ``reason``, both verdicts and
        both rationales.
    """
    global _ANALYST
    if _ANALYST is None:
        _ANALYST = OfflineAnalyst()
    report = detect_file(Path(root), relpath, readable=readable)
    if report.status != "scanned":
        return [], 0, report.reason
    if not report.candidates:
        return [], 0, None
    text = decode_source((Path(root) / relpath).read_bytes()).text
    kept: list[dict[str, Any]] = []
    for candidate in report.candidates:
        first = _ANALYST.analyze(ModelRequest(candidate=candidate, source=text, brief=""))
        if not survives(first):
            continue
        severity, reason = triage(candidate, first)
        second = _ANALYST.analyze(ModelRequest(candidate=candidate, source=text, brief="", pass_name="revalidate",
                                               prior=first.to_json()))
        if not survives(second):
            continue
        kept.append({
            "path": candidate.path, "line": candidate.line, "col": candidate.col, "rule": candidate.rule_id,
            "severity": severity, "reason": reason,
            "investigate": f"{first.verdict}/{first.confidence}", "revalidate": f"{second.verdict}/{second.confidence}",
            "snippet": " ".join(candidate.snippet.split())[:160],
            "rationale": second.rationale,
        })
    return kept, len(report.candidates), None


_READABLE: dict[str, str] = {}


def _plan(readable: dict[str, str]) -> None:
    """A pool process's initialiser: the planned files, one mapping for all its files (the
    engine shares function summaries between the files given the same mapping)."""
    _READABLE.update(readable)


def _scan_planned(root: str, relpath: str) -> tuple[list[dict[str, Any]], int, str | None]:
    return scan_file(root, relpath, _READABLE)


def _key(finding: dict[str, Any]) -> tuple[str, int, str]:
    return (finding["path"], finding["line"], finding["rule"])


def main() -> int:
    """Prints the counts (and the comparison with the labels); returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the source tree to scan")
    parser.add_argument("--labels", type=Path, help="hand-labelled verdicts to compare with")
    parser.add_argument("--details", action="store_true", help="list every kept finding")
    parser.add_argument("--json", type=Path, help="write the kept findings to this file")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: CPUs)")
    options = parser.parse_args()
    root = options.folder.resolve()
    started = time.perf_counter()
    planned = [f for f in discover(root) if not f.link]
    files = [f.path for f in planned]
    readable = {f.path: f.sha256 for f in planned if f.sha256}
    findings: list[dict[str, Any]] = []
    candidates = 0
    skipped: list[str] = []
    if options.jobs > 1:
        with ProcessPoolExecutor(max_workers=options.jobs, initializer=_plan, initargs=(readable,)) as pool:
            results = list(pool.map(_scan_planned, [str(root)] * len(files), files, chunksize=8))
    else:
        results = [scan_file(str(root), path, readable) for path in files]
    for path, (kept, count, skip) in zip(files, results):
        findings.extend(kept)
        candidates += count
        if skip is not None:
            skipped.append(f"{path}: {skip}")
    findings.sort(key=lambda f: (f["path"], f["line"], f["col"], f["rule"]))

    print(f"Scanned {root} with analyst {ANALYST_VERSION}: {len(files)} files ({len(skipped)} skipped), "
          f"{candidates} candidates, {len(findings)} kept")
    by_severity = Counter(f["severity"] for f in findings)
    print("By severity: " + ", ".join(f"{s} {by_severity[s]}" for s in SEVERITIES))
    rules = sorted({f["rule"] for f in findings})
    print(f"\n{'rule':<6}" + "".join(f"{s:>9}" for s in SEVERITIES) + f"{'total':>8}")
    for rule in rules:
        row = Counter(f["severity"] for f in findings if f["rule"] == rule)
        print(f"{rule:<6}" + "".join(f"{row[s]:>9}" for s in SEVERITIES) + f"{sum(row.values()):>8}")

    if options.labels is not None:
        _compare(findings, json.loads(options.labels.read_text()))
    if options.details:
        print("\nKept findings:")
        for f in findings:
            print(f"  {f['severity']:<8} {f['rule']} {f['path']}:{f['line']}  [{f['investigate']} -> {f['revalidate']}]  {f['snippet'][:100]}")
    if options.json is not None:
        options.json.write_text(json.dumps(findings, indent=1, sort_keys=True) + "\n")
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


def _compare(findings: list[dict[str, Any]], labels: list[dict[str, Any]]) -> None:
    """Prints kept findings per verdict and severity, lost true positives, and unlabelled findings.

    Verdicts are keyed by (path, line, rule); kept findings are counted one by one (two
    candidates of one rule on one line share a verdict).
    """
    verdicts = {(v["path"], v["line"], v["rule"]): v for v in labels}
    kept_keys = {_key(f) for f in findings}
    print(f"\nAgainst {len(verdicts)} hand-labelled verdicts (kept findings counted one by one):")
    print(f"{'label':<10}{'verdicts':>9}{'kept':>6}" + "".join(f"{s:>9}" for s in SEVERITIES))
    for label in LABELS:
        row = Counter(f["severity"] for f in findings if verdicts.get(_key(f), {}).get("label") == label)
        count = sum(1 for v in verdicts.values() if v["label"] == label)
        print(f"{label:<10}{count:>9}{sum(row.values()):>6}" + "".join(f"{row[s]:>9}" for s in SEVERITIES))
    lost = sorted(k for k, v in verdicts.items() if v["label"] == "tp" and k not in kept_keys)
    loud = [f for f in findings if verdicts.get(_key(f), {}).get("label") == "fp" and f["severity"] in ("critical", "high", "medium")]
    unlabelled = [f for f in findings if _key(f) not in verdicts]
    print(f"True positives no longer kept: {len(lost)}")
    for path, line, rule in lost:
        print(f"  {rule} {path}:{line}  ({verdicts[(path, line, rule)]['reason']})")
    print(f"False positives still kept at medium or above: {len(loud)}")
    for f in loud:
        print(f"  {f['severity']:<8} {f['rule']} {f['path']}:{f['line']}  ({verdicts[_key(f)]['reason']})")
    print(f"Kept findings without a verdict: {len(unlabelled)}")
    for f in unlabelled:
        print(f"  {f['severity']:<8} {f['rule']} {f['path']}:{f['line']}  {f['snippet'][:100]}")


if __name__ == "__main__":
    sys.exit(main())
