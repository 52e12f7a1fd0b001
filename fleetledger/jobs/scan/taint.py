"""The taint engine's results as candidates, merged with the other detectors' candidates.

* A flow (outside data reaching a sink) becomes a candidate of rule ``FLT-<kind>`` at the sink,
  carrying up to three traces (source, steps, sink, sanitisers) in ``Candidate.trace``; flows
  into one sink from several origins are one candidate.
* An API misuse (``[[check]]``) becomes a candidate of rule ``FLC-<kind>`` at the call.
* A bandit (or FL001) candidate that reports the same weakness at the same place as an engine
  candidate is folded into it (its rule is listed in ``trace["also"]``), so one weakness gives
  one finding (the folded candidates' rule, position, CWE and message stay in
  ``trace["also"]``). Which detector rules report which engine kind is ``DETECTOR_KINDS`` (the
  detectors' rule ids, not anything in the scanned code).
* Any other detector candidate at a sink the engine evaluated carries the engine's evidence
  (``Candidate.evidence``): what reached the sink, tainted or constant, for the analyst.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from ...analysis import catalog
from ...analysis.engine import FileAnalysis
from ...analysis.facts import PASSED_TO, Evidence, Flow, Misuse, Site
from ...analysis.values import Step
from .shapes import Candidate, candidate_id

TAINT_DETECTOR = "fleetledger-taint"
CHECK_DETECTOR = "fleetledger-check"

DETECTOR_KINDS: Mapping[str, str] = {
    **{rule: "sql" for rule in ("B608", "B610", "B611", "FL001")},
    **{rule: "command" for rule in ("B601", "B602", "B603", "B604", "B605", "B606", "B607", "B609")},
    "B102": "code", "B307": "code",
    "B301": "deserialization", "B302": "deserialization", "B506": "deserialization",
    "B308": "xss", "B703": "xss", "B704": "xss",
    "B310": "ssrf",
    **{f"B3{n}": "xml-bomb" for n in range(13, 20)}, "B320": "xxe",
    "B202": "tar-extraction",
    "B303": "weak-hash", "B324": "weak-hash",
    "B304": "weak-cipher", "B305": "weak-cipher",
    "B701": "autoescape-off",
    "B311": "random",
}
"""Detector rule id -> the engine kind (a sink kind, a check kind, or ``random`` for bandit's
B311, which flags the source of a weak random number rather than a sink)."""

_REMOTE = frozenset({"http", "network"})


def _title_name(title: str) -> str:
    return "_".join(title.lower().replace("-", " ").split())


def flow_candidates(path_lines: Mapping[str, list[str]], flows: Iterable[Flow], root: str | None = None) -> list[Candidate]:
    """Turns flows into candidates, one per sink and kind, traces best first. A flow from the
    analysed file (``root``) to a sink in another file is also reported where it leaves the
    analysed file, at the call that passes the data on (``_at_call``): the place in this file to
    fix, as a view handing a request's value to a helper that runs it.

    Args:
        path_lines: Repository-relative path -> the file's lines (for columns and snippets).
        flows: The engine's flows.
        root: The analysed file's path (None: no call-site candidates).

    Returns:
        The candidates (their ``snippet`` is left empty for the caller to fill).
    """
    kinds = catalog.default().kinds
    grouped: dict[tuple[str, int, int, str], list[Flow]] = {}
    for flow in flows:
        grouped.setdefault((flow.site.path, flow.site.line, flow.site.col, flow.kind), []).append(flow)
    out: list[Candidate] = []
    for (path, line, col, kind_name), group in grouped.items():
        # Outside data first, a request's own address (``Label.own_url``) after other outside data.
        group.sort(key=lambda f: (f.label.channel not in _REMOTE, f.label.channel == "api", f.label.own_url,
                                  len(f.label.steps)))
        kind = kinds[kind_name]
        best = group[0]
        lines = path_lines.get(path, [])
        char_col = _char_col(lines, line, col)
        rule_id = f"FLT-{kind_name}"
        remote = best.label.channel in _REMOTE or best.label.channel == "random"
        origin = best.label.what
        out.append(Candidate(
            id=candidate_id(path, line, char_col, rule_id), path=path, line=line, col=char_col,
            end_line=max(line, best.site.end_line), rule_id=rule_id, rule_name=_title_name(kind.title),
            detector=TAINT_DETECTOR, cwe=kind.cwe, detector_severity="HIGH" if remote else "MEDIUM",
            detector_confidence="HIGH" if remote else "MEDIUM",
            message=f"{kind.title}: {origin} reaches {best.sink.what or best.sink.target} ({best.role}).",
            snippet="", scope=best.site.scope,
            trace={"traces": [_char_columns(f.trace_json(), path_lines) for f in group[:3]], "also": []}))
        call = _call_leaving(best, root) if root is not None and path != root else None
        if call is not None:
            out.append(_at_call(out[-1], call, path_lines))
    return out


def _call_leaving(flow: Flow, root: str) -> Step | None:
    """The step at which a flow's data last leaves ``root``, when it is a call passing it on
    (``facts.passed_to``), else None."""
    inside = [s for s in flow.label.steps if s.path == root]
    return inside[-1] if inside and inside[-1].what.startswith(PASSED_TO) else None


def _at_call(candidate: Candidate, call: Step, path_lines: Mapping[str, list[str]]) -> Candidate:
    """``candidate`` (a sink in another file) as reported at the call in the analysed file."""
    char_col = _char_col(path_lines.get(call.path, []), call.line, call.col)
    sink = candidate.trace["traces"][0]["sink"]
    return replace(candidate, id=candidate_id(call.path, call.line, char_col, candidate.rule_id), path=call.path,
                   line=call.line, col=char_col, end_line=call.line, scope="",  # (``scopes.with_scope``)
                   message=f"{candidate.message[:-1]}, {call.what} here ({sink['path']}, line {sink['line']}).")


def _char_columns(trace: dict[str, Any], path_lines: Mapping[str, list[str]]) -> dict[str, Any]:
    """The trace with its columns as characters (the engine's are UTF-8 bytes, as the parser's)."""
    def fix(place: dict[str, Any]) -> dict[str, Any]:
        lines = path_lines.get(place["path"], [])
        fixed = {**place, "col": _char_col(lines, place["line"], place["col"])}
        if "end_col" in place:
            fixed["end_col"] = _char_col(lines, place["end_line"], place["end_col"])
        return fixed

    return {**trace, "source": fix(trace["source"]), "steps": [fix(step) for step in trace["steps"]],
            "sink": fix(trace["sink"])}


def misuse_candidates(path_lines: Mapping[str, list[str]], misuses: Iterable[Misuse]) -> list[Candidate]:
    """Turns API misuses into candidates."""
    out = []
    for misuse in misuses:
        site = misuse.site
        char_col = _char_col(path_lines.get(site.path, []), site.line, site.col)
        rule_id = f"FLC-{misuse.kind}"
        out.append(Candidate(
            id=candidate_id(site.path, site.line, char_col, rule_id), path=site.path, line=site.line, col=char_col,
            end_line=max(site.line, site.end_line), rule_id=rule_id, rule_name=_title_name(misuse.title),
            detector=CHECK_DETECTOR, cwe=misuse.cwe, detector_severity="MEDIUM", detector_confidence="HIGH",
            message=f"{misuse.title}: {misuse.message}.", snippet="", scope=site.scope,
            trace={"check": {"kind": misuse.kind, "message": misuse.message,
                             "site": {**site.to_json(), "col": char_col,
                                      "end_col": _char_col(path_lines.get(site.path, []), site.end_line, site.end_col)}},
                   "also": []}))
    return out


def merge(detected: list[Candidate], engine: list[Candidate], analysis: FileAnalysis,
          path_lines: Mapping[str, list[str]], path: str | None = None) -> list[Candidate]:
    """Folds detector candidates into the engine's where they report the same weakness, and
    gives the others the engine's evidence about their sink.

    Args:
        detected: Candidates of bandit and fleetledger's pattern detectors.
        engine: Candidates from ``flow_candidates`` and ``misuse_candidates``.
        analysis: The engine's results (for the evidence and the flows' sources).
        path_lines: Path -> lines, for column conversion.
        path: The analysed file: weak random numbers made there that escape with no detector
            candidate get one of the engine's (``_escaped_random``); None: none are added.

    Returns:
        Every candidate to report, engine candidates first.
    """
    spans = [(c, _span(c, path_lines)) for c in engine]
    random_sources = {(f.label.path, f.label.line, f.label.col) for f in analysis.flows if f.label.channel == "random"}
    by_secret_source = {}
    for c in engine:
        for trace in (c.trace or {}).get("traces", []):
            source = trace["source"]
            if source["channel"] == "random":
                by_secret_source[(source["path"], source["line"], source["col"])] = c
    kept: list[Candidate] = []
    also: dict[str, list[dict[str, Any]]] = {c.id: [] for c in engine}
    for c in detected:
        kind = DETECTOR_KINDS.get(c.rule_id)
        byte_col = _byte_col(path_lines.get(c.path, []), c.line, c.col)
        if kind == "random":
            target = by_secret_source.get((c.path, c.line, byte_col))
            if target is not None:
                also[target.id].append(_folded(c))
                continue
            escaped = _escapes(analysis, c.path, c.line, byte_col)
            if escaped:
                c = _with_evidence(c, _escaped_evidence(escaped))
            elif (c.path, c.line, byte_col) not in random_sources:
                c = _with_evidence(c, {"kind": "secret", "state": "no-security-use",
                                       "detail": "the engine follows this random value to every use and finds none that "
                                                 "is security-sensitive (a cookie, a session, a key, a password, a token "
                                                 "signing key) and none in code it does not see",
                                       "sanitisers": []})
            kept.append(c)
            continue
        merged = False
        if kind is not None:
            for engine_candidate, span in spans:
                if _engine_kind(engine_candidate) == kind and (
                        _inside(span, c.line, byte_col) or (c.path, c.line) in _road(engine_candidate)):
                    also[engine_candidate.id].append(_folded(c))
                    merged = True
                    break
        if merged:
            continue
        evidence = _evidence_for(analysis.evidence, kind, c.path, c.line, byte_col)
        kept.append(_with_evidence(c, evidence.to_json()) if evidence is not None else c)
    out = [_with_also(c, also[c.id]) for c in engine]
    return out + kept + (_escaped_random(analysis, path, path_lines, detected, random_sources) if path else [])


def _escaped_random(analysis: FileAnalysis, path: str, path_lines: Mapping[str, list[str]],
                    detected: list[Candidate], followed: set[tuple[str, int, int]]) -> list[Candidate]:
    """Candidates of the engine's own for weak random numbers (any ``random`` source of the
    models, bandit's B311 list or not) that leave what the engine follows with no detector
    candidate at their call and no flow to a secret: CWE 330, with the engine's evidence
    ("unknown" use), so the analyst keeps them as uncertain, as it keeps B311's."""
    flagged = {(c.path, c.line) for c in detected if DETECTOR_KINDS.get(c.rule_id) == "random"}
    out = []
    for (where, line, byte_col), how in sorted(analysis.escaped.items()):
        if where != path or (where, line) in flagged or (where, line, byte_col) in followed:
            continue
        lines = path_lines.get(where, [])
        col = _char_col(lines, line, byte_col)
        rule_id = "FLT-random"
        out.append(Candidate(
            id=candidate_id(where, line, col, rule_id), path=where, line=line, col=col, end_line=line, rule_id=rule_id,
            rule_name="weak_random_number", detector=TAINT_DETECTOR, cwe=330, detector_severity="LOW",
            detector_confidence="MEDIUM", scope="",
            message="A predictable pseudo-random number (the random module) leaves what the engine follows; "
                    "if it becomes a secret, a token or a key, use the secrets module.",
            snippet="", evidence=_escaped_evidence(how)))
    return out


def _escaped_evidence(how: list[str]) -> dict[str, Any]:
    """The evidence of a weak random number that leaves what the engine follows (``how``: the
    ways it left): its use is unknown, so the analyst keeps its candidate as uncertain."""
    return {"kind": "secret", "state": "unknown", "sanitisers": [],
            "detail": f"the random value leaves what the engine follows ({'; '.join(how)}), "
                      "so whether it becomes a secret is not shown"}


def _escapes(analysis: FileAnalysis, path: str, line: int, byte_col: int) -> list[str]:
    """How a weak random number made by the call at (line, column) left what the engine follows
    (a call such as ``random.randint`` starts at its callee's column, ``randint`` at its own)."""
    for (where, at_line, at_col), how in analysis.escaped.items():
        if where == path and at_line == line and at_col >= byte_col:
            return how
    return []


def _road(candidate: Candidate) -> set[tuple[str, int]]:
    """The lines an engine candidate's traces pass through (a detector that flags where the
    value is built, such as B608 on a query assigned before it is run, reports that flow)."""
    lines = set()
    for trace in (candidate.trace or {}).get("traces", []):
        lines.update((step["path"], step["line"]) for step in trace["steps"])
    return lines


def _engine_kind(candidate: Candidate) -> str:
    return candidate.rule_id.split("-", 1)[1]


def _evidence_for(evidence: Iterable[Evidence], kind: str | None, path: str, line: int, byte_col: int) -> Evidence | None:
    """The evidence of the innermost sink of ``kind`` containing the position."""
    best: Evidence | None = None
    for item in evidence:
        if item.site.path != path or (kind is not None and item.kind != kind) or kind is None:
            continue
        if item.site.contains(line, byte_col) or item.site.line == line:
            if best is None or _size(item.site) < _size(best.site):
                best = item
    return best


def _size(site: Site) -> tuple[int, int]:
    return (site.end_line - site.line, site.end_col - site.col if site.end_line == site.line else 1 << 30)


def _span(candidate: Candidate, path_lines: Mapping[str, list[str]]) -> tuple[int, int, int, int]:
    trace = candidate.trace or {}
    site = (trace.get("traces") or [{}])[0].get("sink") or (trace.get("check") or {}).get("site")
    if not site:
        return (candidate.line, 0, candidate.end_line, 1 << 30)
    lines = path_lines.get(candidate.path, [])
    return (site["line"], _byte_col(lines, site["line"], site["col"]), site["end_line"],
            _byte_col(lines, site["end_line"], site["end_col"]))


def _inside(span: tuple[int, int, int, int], line: int, col: int) -> bool:
    return (span[0], span[1]) <= (line, col) <= (span[2], span[3]) or span[0] == line


def _with_evidence(candidate: Candidate, evidence: dict[str, Any]) -> Candidate:
    from dataclasses import replace

    return replace(candidate, evidence=evidence)


def _folded(candidate: Candidate) -> dict[str, Any]:
    """What is kept of a detector candidate folded into an engine candidate."""
    return {"rule_id": candidate.rule_id, "detector": candidate.detector, "line": candidate.line, "col": candidate.col,
            "cwe": candidate.cwe, "message": candidate.message}


def _with_also(candidate: Candidate, folded: list[dict[str, Any]]) -> Candidate:
    from dataclasses import replace

    if not folded:
        return candidate
    trace = dict(candidate.trace or {})
    trace["also"] = sorted(folded, key=lambda f: (f["line"], f["col"], f["rule_id"]))
    return replace(candidate, trace=trace)


def _char_col(lines: list[str], line: int, byte_col: int) -> int:
    if not 0 < line <= len(lines):
        return byte_col
    return len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _byte_col(lines: list[str], line: int, char_col: int) -> int:
    if not 0 < line <= len(lines):
        return char_col
    return len(lines[line - 1][:char_col].encode("utf-8"))
