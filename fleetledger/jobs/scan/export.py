"""The export step of the scan job: SARIF 2.1.0, Markdown and JSON reports of a ``ScanReport``.

``write_outputs`` is the effect: it writes ``findings.sarif``, ``findings.md`` and
``findings.json`` into the workspace, each atomically, and returns their SHA-256 so the ledger
can record exactly what was exported. Equal reports give byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ... import fsutil
from ...display import json_text
from .exclusions import counts
from .markdown import to_markdown
from .sarif import finding_cwe, finding_verdict, order_key, to_sarif
from .shapes import SEVERITIES, ScanReport

__all__ = ["JSON_SCHEMA_VERSION", "OUTPUT_NAMES", "to_json", "to_markdown", "to_sarif", "write_outputs"]

JSON_SCHEMA_VERSION = 1
OUTPUT_NAMES = ("findings.sarif", "findings.md", "findings.json")


def to_json(report: ScanReport) -> dict[str, Any]:
    """Builds the full machine-readable report: every finding and file, uncapped.

    Findings are in the SARIF order (``sarif.order_key``), each as ``Finding.to_json()`` plus
    its reported ``cwe`` and ``verdict`` (``sarif.finding_cwe``, ``sarif.finding_verdict``: the
    values SARIF, Markdown and the HTML report show); files are sorted by path, each as
    ``FileReport.to_json()`` (skipped ones carry ``status`` "skipped" and their ``reason``);
    ``exclusions`` lists what each exclusion rule did, with every path (``Exclusion.to_json``),
    and ``summary`` counts those files (``exclusions.counts``); ``not_judged`` lists every
    candidate not judged to the end with the step not done and why (``Gap.to_json``).

    Args:
        report: The scan report.

    Returns:
        A JSON-ready dict with ``"schema": 1``; equal reports give equal dicts.
    """
    findings = sorted(report.findings, key=order_key)
    files = sorted(report.files, key=lambda f: f.path)
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
        },
        "summary": {
            "findings": len(findings),
            "by_severity": {s: sum(f.severity == s for f in findings) for s in SEVERITIES},
            "files": len(files),
            "files_skipped": sum(f.status == "skipped" for f in files),
            "not_judged": len(report.gaps),
            **counts(report.exclusions),
        },
        "exclusions": [e.to_json() for e in report.exclusions],
        "findings": [{**f.to_json(), "cwe": finding_cwe(f), "verdict": finding_verdict(f)} for f in findings],
        "not_judged": [g.to_json() for g in report.gaps],
        "files": [{k: v for k, v in f.to_json().items() if k != "depends"} for f in files],
    }


def write_outputs(report: ScanReport, workspace: Path) -> dict[str, str]:
    """Writes the three reports into ``workspace``, each with ``fsutil.atomic_write``.

    All three are rendered before the first is written, so a rendering error writes nothing.
    Each file is replaced atomically (a reader sees the old or the new file, never a mix); the
    set is not: a crash between two writes leaves the earlier ones new. Rewriting the same
    report is idempotent. Crash points: ``export.<name>.after_write`` etc. (see ``faults``).

    Args:
        report: The scan report.
        workspace: Existing folder to write into.

    Returns:
        ``{file name: SHA-256 hex of the bytes written}`` for ``OUTPUT_NAMES``.

    Raises:
        OSError: a file could not be written (the workspace is missing, the disk failed...).
        ValueError: a path in the report cannot be exported (see ``sarif.artifact_uri``).
    """
    outputs = {
        "findings.sarif": _json_bytes(to_sarif(report)),
        "findings.md": _utf8(to_markdown(report)),
        "findings.json": _json_bytes(to_json(report)),
    }
    for name, data in outputs.items():
        fsutil.atomic_write(Path(workspace) / name, data, fault_prefix=f"export.{name}")
    return {name: hashlib.sha256(data).hexdigest() for name, data in outputs.items()}


def _json_bytes(document: dict[str, Any]) -> bytes:
    """Compact JSON, non-ASCII text as it is except control, bidi and other format characters
    (and lone surrogates), which are JSON escapes (``display.json_text``): the data is exact and
    ``cat findings.json`` cannot drive the terminal."""
    return _utf8(json_text(json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)) + "\n")


def _utf8(text: str) -> bytes:
    """Encodes as UTF-8; a lone surrogate (a file name that is not UTF-8) becomes ``\\udcXX``.

    Inside a JSON string that is the JSON escape of the same code point, so it reads back equal.
    """
    return text.encode("utf-8", "backslashreplace")
