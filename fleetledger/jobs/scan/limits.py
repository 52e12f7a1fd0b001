"""GitHub code scanning's ingestion limits, checked on a built SARIF log, and trimming to fit.

The numbers are GitHub's documented hard limits, over which an upload is rejected whole
(docs.github.com, "SARIF support for code scanning" / "SARIF results exceed limit" and "SARIF
file is too large"): 10 MB for the gzip-compressed file; per file 20 runs; per run 25,000
results, 25,000 rules and 100 tool extensions; per result 1,000 locations and 10,000 thread flow
locations; per rule 20 tags. (GitHub also *displays* less: the top 5,000 results of a run, 100
locations and 1,000 thread flow locations of a result, 10 tags of a rule; those cuts are its
own and lose nothing in the file.)

``fit`` trims only what is over, and says exactly what it left out, in an
``invocations[0].toolExecutionNotifications`` entry (§3.20.21) and ``run.properties.trimmed``.
What goes first when the compressed file is too large: the bulk of the least severe results
(their code flows, related locations and snippets), then whole results, least severe first. A
result without its trace is still an alert a person can open; a dropped result is no alert at
all, so details are given up before results. findings.md and findings.json keep everything.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_LEVEL_RANK = {"error": 0, "warning": 1, "note": 2, "none": 3}
_SEVERITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}
_BULK = ("codeFlows", "relatedLocations")


@dataclass(frozen=True, kw_only=True)
class Limits:
    """GitHub's hard limits (see the module docstring); tests shrink them.

    Attributes:
        max_gzip_bytes: Largest gzip-compressed file (10 MB; counted as 10,000,000 bytes, the
            smaller reading of "MB").
        max_runs: Runs per file.
        max_results: Results per run.
        max_rules: Rules per run (never over here: rules come from the detectors' catalogue;
            checked and reported, not trimmed).
        max_locations: Locations per result (``locations`` and ``relatedLocations`` together).
        max_thread_flow_locations: Thread flow locations per result, over all its code flows.
        max_tags: Tags per rule.
    """

    max_gzip_bytes: int = 10_000_000
    max_runs: int = 20
    max_results: int = 25_000
    max_rules: int = 25_000
    max_locations: int = 1_000
    max_thread_flow_locations: int = 10_000
    max_tags: int = 20


GITHUB = Limits()


def gzip_size(data: bytes) -> int:
    """Returns the size of ``data`` gzip-compressed at level 6 (zlib's default, which GitHub's
    upload action uses)."""
    return len(gzip.compress(data, compresslevel=6, mtime=0))


def _rank(result: dict[str, Any]) -> tuple[int, int]:
    """Sort key, most severe first: triage severity when the result has one, else its level;
    a baseline's absent result (not a problem now) after every present one."""
    properties = result.get("properties") or {}
    absent = result.get("baselineState") == "absent"
    return (absent, _SEVERITY_RANK.get(properties.get("severity"), _LEVEL_RANK.get(result.get("level", "warning"), 1) + 1))


def fit(log: dict[str, Any], serialise: Callable[[dict[str, Any]], bytes], limits: Limits = GITHUB) -> list[str]:
    """Trims ``log`` in place until it is within ``limits``; returns what was left out.

    Args:
        log: A SARIF log as ``sarif.to_sarif`` builds it (one run; more runs than allowed are
            cut from the end).
        serialise: The bytes the log is written as (``export``'s JSON), whose gzip size counts.
        limits: The limits (``GITHUB``).

    Returns:
        One sentence per kind of cut, e.g. ``"12 result(s) left out (the least severe: 12
        low)"``; empty when the log was within every limit (then it is unchanged).
    """
    said: list[str] = []
    if len(log["runs"]) > limits.max_runs:
        said.append(f"{len(log['runs']) - limits.max_runs} run(s) left out (at most {limits.max_runs} per file)")
        del log["runs"][limits.max_runs:]
    for run in log["runs"]:
        results = run.get("results", [])
        order = sorted(range(len(results)), key=lambda i: (_rank(results[i]), i))
        if len(results) > limits.max_results:
            said.append(_dropped(results, order[limits.max_results:], f"at most {limits.max_results} per run"))
            keep = set(order[: limits.max_results])
            run["results"] = results = [r for i, r in enumerate(results) if i in keep]
        said += _per_result(results, limits)
        rules = run.get("tool", {}).get("driver", {}).get("rules", [])
        if len(rules) > limits.max_rules:
            said.append(f"{len(rules)} rules, over GitHub's {limits.max_rules}: the upload will be refused")
        for rule in rules:
            tags = (rule.get("properties") or {}).get("tags")
            if tags and len(tags) > limits.max_tags:
                said.append(f"rule {rule['id']}: {len(tags) - limits.max_tags} tag(s) left out (at most {limits.max_tags})")
                del tags[limits.max_tags:]
    said += _fit_size(log, serialise, limits)
    return said


def _per_result(results: list[dict[str, Any]], limits: Limits) -> list[str]:
    locations = flows = 0
    for result in results:
        shown = result.get("locations", [])
        related = result.get("relatedLocations", [])
        room = max(limits.max_locations - len(shown), 0)
        if len(related) > room:
            locations += 1
            result["relatedLocations"] = related[:room]
            _mark(result, "relatedLocations")
        total = sum(len(t.get("locations", [])) for f in result.get("codeFlows", []) for t in f.get("threadFlows", []))
        if total > limits.max_thread_flow_locations:
            flows += 1
            del result["codeFlows"]
            _mark(result, "codeFlows")
    said = []
    if locations:
        said.append(f"related locations beyond {limits.max_locations} per result left out of {locations} result(s)")
    if flows:
        said.append(f"code flows of {flows} result(s) left out (over {limits.max_thread_flow_locations} "
                    "thread flow locations each)")
    return said


def _fit_size(log: dict[str, Any], serialise: Callable[[dict[str, Any]], bytes], limits: Limits) -> list[str]:
    data = serialise(log)
    if len(data) + len(data) // 1000 + 64 <= limits.max_gzip_bytes:
        return []  # deflate adds at most 5 bytes per 16 KiB stored block, gzip 18 of header: no need to compress
    raw, size = len(data), gzip_size(data)
    if size <= limits.max_gzip_bytes:
        return []
    before = size
    results = log["runs"][0]["results"]
    order = sorted(range(len(results)), key=lambda i: (_rank(results[i]), i), reverse=True)  # least severe first
    # Each round removes enough raw bytes to cover the excess, estimated from the compression
    # ratio with 5% to spare, then measures again: a few rounds, never one gzip per result.
    stripped = 0
    while size > limits.max_gzip_bytes and stripped < len(order):
        excess = _excess_raw(raw, size, limits)
        while excess > 0 and stripped < len(order):
            excess -= _strip(results[order[stripped]])
            stripped += 1
        data = serialise(log)
        raw, size = len(data), gzip_size(data)
    said = [f"code flows, related locations and snippets of the {stripped} least severe result(s) left out"] if stripped else []
    dropped: list[int] = []
    while size > limits.max_gzip_bytes and len(dropped) < len(order):
        excess = _excess_raw(raw, size, limits)
        while excess > 0 and len(dropped) < len(order):
            excess -= len(serialise(results[order[len(dropped)]]))
            dropped.append(order[len(dropped)])
        gone = set(dropped)
        log["runs"][0]["results"] = [r for i, r in enumerate(results) if i not in gone]
        data = serialise(log)
        raw, size = len(data), gzip_size(data)
    if dropped:
        said.append(_dropped(results, dropped, "to fit the size limit"))
    said.append(f"the file was {before:,} bytes gzip-compressed, over GitHub's {limits.max_gzip_bytes:,}; "
                f"now {size:,}")
    return said


def _excess_raw(raw: int, size: int, limits: Limits) -> int:
    """Raw bytes to remove for a file of ``raw`` bytes, ``size`` compressed, to drop under the
    limit with 5% to spare."""
    ratio = size / max(raw, 1)
    return int((size - limits.max_gzip_bytes * 0.95) / max(ratio, 1e-6)) + 1


def _strip(result: dict[str, Any]) -> int:
    """Removes a result's code flows, related locations and snippets; returns the raw bytes saved
    (estimated from the removed parts' ``repr``, close to their JSON size)."""
    saved = 0
    for key in _BULK:
        if key in result:
            saved += len(repr(result.pop(key)))
            _mark(result, key)
    for location in result.get("locations", []):
        region = location.get("physicalLocation", {}).get("region", {})
        if "snippet" in region:
            saved += len(repr(region.pop("snippet")))
            _mark(result, "snippet")
    return saved


def _mark(result: dict[str, Any], what: str) -> None:
    trimmed = result.setdefault("properties", {}).setdefault("trimmedForUpload", [])
    if what not in trimmed:
        trimmed.append(what)


def _dropped(results: list[dict[str, Any]], indexes: list[int], why: str) -> str:
    by_kind: dict[str, int] = {}
    for i in indexes:
        result = results[i]
        kind = (result.get("properties") or {}).get("severity") or result.get("level", "warning")
        if result.get("baselineState") == "absent":
            kind = "absent"
        by_kind[kind] = by_kind.get(kind, 0) + 1
    detail = ", ".join(f"{n} {kind}" for kind, n in sorted(by_kind.items(), key=lambda kv: -kv[1]))
    return f"{len(indexes)} result(s) left out, the least severe ({detail}; {why})"
