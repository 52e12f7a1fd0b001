"""The export step of the scan job: SARIF 2.1.0, Markdown and JSON reports of a ``ScanReport``.

``write_outputs`` is the effect: it writes ``findings.sarif``, ``findings.md`` and
``findings.json`` into the workspace, each atomically, and returns their SHA-256 so the ledger
can record exactly what was exported. Equal reports give byte-identical files.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ... import fsutil
from . import nosec
from .codescanning import candidate_states, json_bytes
from .exclusions import counts
from .export_options import ExportOptions
from .fix_export import PATCHES_DIR, patch_files
from .markdown import to_markdown
from .sarif import finding_cwe, finding_verdict, order_key, to_sarif
from .shapes import SEVERITIES, ScanReport

__all__ = ["JSON_SCHEMA_VERSION", "OUTPUT_NAMES", "to_json", "to_markdown", "to_sarif", "write_outputs"]

JSON_SCHEMA_VERSION = 1
OUTPUT_NAMES = ("findings.sarif", "findings.md", "findings.json")


def to_json(report: ScanReport, states: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Builds the full machine-readable report: every finding and file, uncapped.

    Findings are in the SARIF order (``sarif.order_key``), each as ``Finding.to_json()`` plus
    its reported ``cwe`` and ``verdict`` (``sarif.finding_cwe``, ``sarif.finding_verdict``: the
    values SARIF, Markdown and the HTML report show); files are sorted by path, each as
    ``FileReport.to_json()`` (skipped ones carry ``status`` "skipped" and their ``reason``);
    ``exclusions`` lists what each exclusion rule did, with every path (``Exclusion.to_json``),
    and ``summary`` counts those files (``exclusions.counts``); ``not_judged`` lists every
    candidate not judged to the end with the step not done and why (``Gap.to_json``).

    Code scanning (``ExportOptions``): ``run`` names the repository root that the SARIF URIs are
    relative to and the scanned folder's place in it (paths here stay relative to the target),
    the category, whether ``# nosec`` is honoured and the baseline; each finding has ``status``
    ``"open"`` or ``"suppressed"`` (a recorded suppression comment, honoured) and, with a
    baseline, ``baseline_state``; ``summary`` counts both.

    Args:
        report: The scan report.
        states: ``codescanning.candidate_states`` of the SARIF run written beside it, so both
            files agree on merged results; None: suppression is decided per finding and no
            baseline state is given.

    Returns:
        A JSON-ready dict with ``"schema": 1``; equal reports give equal dicts.
    """
    findings = sorted(report.findings, key=order_key)
    files = sorted(report.files, key=lambda f: f.path)
    options = report.export or ExportOptions()
    shown = [{**f.to_json(), "cwe": finding_cwe(f), "verdict": finding_verdict(f),
              **_status(f.candidate, options, states)} for f in findings]
    return {
        "schema": JSON_SCHEMA_VERSION,
        "run": {
            "run_id": report.run_id,
            "target": report.target,
            "complete": report.complete,
            "halt_reason": report.halt_reason,
            "dismissed": report.dismissed,
            "tool_version": report.tool_version,
            "started_utc": report.started_utc,
            "code": list(report.code),
            "repository_root": options.repo_root or report.target,
            "scanned_folder": options.prefix(report.target) or ".",
            "category": options.automation_id(report.target),
            "honour_nosec": options.honour_nosec,
            "baseline": options.baseline,
        },
        "summary": {
            "findings": len(findings),
            "by_severity": {s: sum(f.severity == s for f in findings) for s in SEVERITIES},
            "files": len(files),
            "files_skipped": sum(f.status == "skipped" for f in files),
            "not_judged": len(report.gaps),
            "suppressed": sum(f["status"] == "suppressed" for f in shown),
            **({"baseline": {state: sum(f.get("baseline_state") == state for f in shown)
                             for state in ("new", "unchanged", "updated")}} if states is not None and options.baseline else {}),
            **counts(report.exclusions),
        },
        "exclusions": [e.to_json() for e in report.exclusions],
        "findings": shown,
        "not_judged": [g.to_json() for g in report.gaps],
        "files": [{k: v for k, v in f.to_json().items() if k != "depends"} for f in files],
    }


def write_outputs(report: ScanReport, workspace: Path, *, log: dict[str, Any] | None = None) -> dict[str, str]:
    """Writes the three reports into ``workspace``, each with ``fsutil.atomic_write``.

    All three are rendered before the first is written, so a rendering error writes nothing.
    Each file is replaced atomically (a reader sees the old or the new file, never a mix); the
    set is not: a crash between two writes leaves the earlier ones new. Rewriting the same
    report is idempotent. Crash points: ``export.<name>.after_write`` etc. (see ``faults``).

    Args:
        report: The scan report.
        workspace: Existing folder to write into.
        log: ``sarif.to_sarif(report)`` when the caller has it (it is built otherwise).

    Returns:
        ``{file name: SHA-256 hex of the bytes written}`` for ``OUTPUT_NAMES`` and each
        validated patch (``patches/<finding-id>.diff``, ``fix_export.patch_files``).

    Raises:
        OSError: a file could not be written (the workspace is missing, the disk failed...).
        ValueError: a path in the report cannot be exported (see ``sarif.artifact_uri``).
    """
    log = to_sarif(report) if log is None else log
    states = candidate_states(log["runs"][0])
    outputs = {
        "findings.sarif": json_bytes(log),
        "findings.md": _utf8(to_markdown(report, states)),
        "findings.json": json_bytes(to_json(report, states)),
    }
    patches = patch_files(report.findings)
    if patches:
        (Path(workspace) / PATCHES_DIR).mkdir(exist_ok=True)
    for name, data in {**patches, **outputs}.items():  # the patches first: the reports name them
        fsutil.atomic_write(Path(workspace) / name, data, fault_prefix=f"export.{name}")
    return {name: hashlib.sha256(data).hexdigest() for name, data in {**outputs, **patches}.items()}


def _status(c: Any, options: ExportOptions, states: dict[str, dict[str, Any]] | None) -> dict[str, Any]:
    """A finding's ``status`` (and ``baseline_state``) as its SARIF result has them."""
    if states is not None and c.id in states:
        state = states[c.id]
        out: dict[str, Any] = {"status": "suppressed" if state["suppressed"] else "open"}
        if state.get("baselineState"):
            out["baseline_state"] = state["baselineState"]
        return out
    return {"status": "suppressed" if options.honour_nosec and nosec.applies(c) else "open"}


def _utf8(text: str) -> bytes:
    """Encodes as UTF-8; a lone surrogate (a file name that is not UTF-8) becomes ``\\udcXX``.

    Inside a JSON string that is the JSON escape of the same code point, so it reads back equal.
    """
    return text.encode("utf-8", "backslashreplace")
