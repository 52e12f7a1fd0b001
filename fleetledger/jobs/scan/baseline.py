"""Pull-request mode: a SARIF log compared with a baseline log (SARIF §3.27.24 ``baselineState``).

Each result of the new log is matched to a result of the baseline (typically the main branch's
``findings.sarif``) by its stable fingerprints (``fingerprints``), so a finding whose lines moved
is the same finding:

1. ``fleetledgerFingerprint/v1`` and the rule, when both logs have it;
2. else GitHub's ``primaryLocationLineHash``, the rule and the file's URI;
3. else the candidate id of earlier exports (``candidateId/v1``, line-dependent) and the rule.

A matched result is ``unchanged`` when its level, message and severity are the same, else ``updated``; an
unmatched one is ``new``; every baseline result left unmatched is added as ``absent`` (its
``ruleIndex`` dropped: it indexes the baseline's rules) unless the options say not to. Matching
is one to one: two equal fingerprints pair with two equal ones, in order.

The baseline is trusted input: a forged one can mark a new finding ``unchanged``. Take it from a
run of the protected branch (CI cache or artifact written by that branch), never from the pull
request's own tree.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import UsageError
from .fingerprints import FINGERPRINT_KEY, LEGACY_KEY, LINE_HASH_KEY

MAX_BASELINE_BYTES = 512 * 1024 * 1024
"""A larger baseline file is refused (GitHub's own limit is 10 MB compressed)."""
STATES = ("new", "unchanged", "updated", "absent")


@dataclass(frozen=True, kw_only=True)
class Baseline:
    """A loaded baseline log.

    Attributes:
        path: Where it was read from (for messages).
        results: Its results still present in it (``baselineState`` other than ``absent``),
            in file order, over all its runs.
    """

    path: str
    results: tuple[dict[str, Any], ...]


def load(path: str | Path) -> Baseline:
    """Reads and checks a baseline SARIF log (read-only).

    Args:
        path: A SARIF 2.1.0 file, e.g. the ``findings.sarif`` of a scan of the main branch.

    Returns:
        The baseline.

    Raises:
        UsageError: the file cannot be read, is too large, is not JSON, or is not a SARIF 2.1.0
            log with runs and results; the message says what to give instead.
    """
    hint = "give the findings.sarif of an earlier fleetledger scan (e.g. of the main branch)"
    try:
        size = Path(path).stat().st_size
        if size > MAX_BASELINE_BYTES:
            raise UsageError(f"--baseline {path}: {size:,} bytes is too large for a SARIF log; {hint}")
        data = json.loads(Path(path).read_bytes())
    except OSError as error:
        raise UsageError(f"--baseline {path}: cannot read it ({error.strerror or error}); {hint}") from None
    except (ValueError, RecursionError) as error:
        raise UsageError(f"--baseline {path}: not JSON ({str(error)[:200]}); {hint}") from None
    if not isinstance(data, dict) or data.get("version") != "2.1.0" or not isinstance(data.get("runs"), list):
        raise UsageError(f"--baseline {path}: not a SARIF 2.1.0 log (no \"version\": \"2.1.0\" with \"runs\"); {hint}")
    results: list[dict[str, Any]] = []
    for run in data["runs"]:
        found = run.get("results", []) if isinstance(run, dict) else None
        if not isinstance(found, list) or not all(isinstance(r, dict) for r in found):
            raise UsageError(f"--baseline {path}: a run's \"results\" is not a list of result objects; {hint}")
        results += [r for r in found if r.get("baselineState") != "absent"]
    return Baseline(path=str(path), results=tuple(results))


def _keys(result: dict[str, Any]) -> Iterator[tuple[str, ...]]:
    """The result's match keys, best first (see the module docstring)."""
    prints = result.get("partialFingerprints") or {}
    rule = str(result.get("ruleId", ""))
    if isinstance(prints.get(FINGERPRINT_KEY), str):
        yield ("fp", rule, prints[FINGERPRINT_KEY])
    if isinstance(prints.get(LINE_HASH_KEY), str):
        yield ("line", rule, _uri(result), prints[LINE_HASH_KEY])
    legacy = prints.get(LEGACY_KEY) or (result.get("properties") or {}).get("candidateId")
    if isinstance(legacy, str):
        yield ("id", rule, legacy)


def _uri(result: dict[str, Any]) -> str:
    try:
        return str(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
    except (KeyError, IndexError, TypeError):
        return ""


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when nothing a reviewer reads changed: the level, the message text and the triage
    severity (``properties.severity``: high and critical are both level ``error``)."""
    def seen(result: dict[str, Any]) -> tuple[Any, ...]:
        return (result.get("level", "warning"), (result.get("message") or {}).get("text"),
                (result.get("properties") or {}).get("severity"))
    return seen(a) == seen(b)


def compare(results: list[dict[str, Any]], baseline: Baseline, *, absent: bool = True) -> dict[str, int]:
    """Sets ``baselineState`` on each result, in place, and appends the absent ones.

    Args:
        results: The new run's results (``run["results"]``), changed in place.
        baseline: The loaded baseline.
        absent: Append the baseline's unmatched results with ``baselineState: "absent"``.

    Returns:
        ``{state: count}`` for every state of ``STATES`` (absent counted even when not appended).
    """
    index: dict[tuple[str, ...], list[int]] = {}
    for number, old in enumerate(baseline.results):
        for key in _keys(old):
            index.setdefault(key, []).append(number)
    taken: set[int] = set()
    counts = dict.fromkeys(STATES, 0)
    for result in results:
        match = None
        for key in _keys(result):
            match = next((n for n in index.get(key, ()) if n not in taken), None)
            if match is not None:
                break
        if match is None:
            state = "new"
        else:
            taken.add(match)
            state = "unchanged" if _same(result, baseline.results[match]) else "updated"
        result["baselineState"] = state
        counts[state] += 1
    for number, old in enumerate(baseline.results):
        if number in taken:
            continue
        counts["absent"] += 1
        if absent:
            gone = {k: v for k, v in old.items() if k not in ("ruleIndex", "rule")}
            gone["baselineState"] = "absent"
            results.append(gone)
    return counts
