"""The data shapes that pass between the scan job's sprints.

Every shape is a frozen, keyword-only dataclass that round-trips through plain JSON
(``to_json()`` / ``from_json()``), because every one of them is written into a ledger record
payload and read back by replay. Nothing here reads files or the clock.

Conventions:
    * ``path`` is the file's path relative to the scanned root, with forward slashes.
    * ``line`` is 1-based and is the line number Python's parser gives (``ast`` ``lineno``).
    * ``col`` is a 0-based *character* column (``ast`` ``col_offset`` counts UTF-8 bytes; the
      detect step converts it), so SARIF's 1-based ``startColumn`` is ``col + 1``.
    * ``cwe`` is the CWE number as an int (``78`` for CWE-78), or ``None`` when unknown.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .exclusions import Exclusion
    from .export_options import ExportOptions

Verdict = Literal["vulnerable", "not_vulnerable", "uncertain"]
Severity = Literal["critical", "high", "medium", "low", "info"]
SEVERITIES: tuple[str, ...] = ("critical", "high", "medium", "low", "info")


def _from(cls: type, data: dict[str, Any]) -> Any:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    return cls(**{k: v for k, v in data.items() if k in names})


_FIELD_NAMES: dict[type, frozenset[str]] = {}


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """A place a detector flagged; the input of the investigate sprint.

    Attributes:
        id: Stable identifier, ``candidate_id(path, line, col, rule_id)``; equal across runs
            for the same finding in the same file content.
        path: File path relative to the scanned root (forward slashes).
        line: 1-based line of the flagged node, as the parser gives it.
        col: 0-based character column of the flagged node.
        end_line: 1-based last line of the flagged node (>= ``line``).
        rule_id: Detector rule id, e.g. ``"B602"`` for bandit.
        rule_name: Detector rule name, e.g. ``"subprocess_popen_with_shell_equals_true"``.
        detector: ``"bandit"`` or the name of a fleetledger detector.
        cwe: CWE number the detector assigns, or ``None``.
        detector_severity: ``"LOW"``, ``"MEDIUM"`` or ``"HIGH"`` as the detector rates it.
        detector_confidence: ``"LOW"``, ``"MEDIUM"`` or ``"HIGH"`` as the detector rates it.
        message: The detector's one-line message.
        snippet: The source text of the flagged line(s) with one line of context on each side
            (as bandit shows it), decoded leniently, at most 2,000 characters.
        scope: Qualified name of the enclosing function or class from the syntax tree
            (``"<module>"`` at module level).
        trace: For a candidate of the taint engine: ``{"traces": [...], "also": [...]}``,
            each trace ``{"source", "steps", "sink", "sanitisers"}`` (``facts.Flow.trace_json``)
            and ``also`` the other detectors' candidates folded into this one (``rule_id``,
            ``detector``, ``line``, ``col``, ``cwe``, ``message`` each); for an API misuse:
            ``{"check": {...}, "also": [...]}``. None for other detectors.
        evidence: For another detector's candidate at a sink the engine evaluated: what
            reached it (``facts.Evidence.to_json``: ``state`` is ``"tainted"``,
            ``"parameter"``, ``"unknown"``, ``"sanitised"`` or ``"constant"``), or None.
        context_hash: The normalised-context hash of ``line`` (``fingerprints.context_hashes``:
            16 hex digits and ``:N``), taken in the worker; None when recorded by older code
            (the export then derives one from ``snippet``) or when the file's lines were
            unreadable.
        suppression: The ``# nosec`` / ``# noqa: B...`` comment on the candidate's lines
            (``nosec.suppression_for``: ``kind``, ``rules``, ``comment``, ``line``), recorded
            whether or not it is honoured (``--honour-nosec`` decides at export), or None.
    """

    id: str
    path: str
    line: int
    col: int
    end_line: int
    rule_id: str
    rule_name: str
    detector: str
    cwe: int | None
    detector_severity: str
    detector_confidence: str
    message: str
    snippet: str
    scope: str = "<module>"
    trace: dict[str, Any] | None = None
    evidence: dict[str, Any] | None = None
    context_hash: str | None = None
    suppression: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """Returns the candidate as a JSON-ready dict (read-only); the optional analysis fields
        are left out when empty, so a candidate without them keeps its earlier form."""
        # The fields are JSON values already (``trace``, ``evidence`` and ``suppression`` are
        # plain dicts): a shallow copy, not ``dataclasses.asdict``'s deep one, which costs a
        # scan of a large tree seconds when it plans the model sprints.
        data = {f.name: getattr(self, f.name) for f in _CANDIDATE_FIELDS}
        for name in ("trace", "evidence", "context_hash", "suppression"):
            if data[name] is None:
                del data[name]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Candidate":
        """Builds a candidate from ``to_json()`` output; unknown keys are ignored."""
        return _from(cls, data)


def candidate_id(path: str, line: int, col: int, rule_id: str) -> str:
    """Returns the stable id of a candidate: 16 hex digits of SHA-256 over its location and rule."""
    text = f"{path}\0{line}\0{col}\0{rule_id}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


_CANDIDATE_FIELDS = dataclasses.fields(Candidate)


@dataclass(frozen=True, kw_only=True)
class FileReport:
    """What the detect step learned about one file.

    Attributes:
        path: File path relative to the scanned root.
        sha256: Hex SHA-256 of the file's bytes as read.
        size_bytes: Size of the file in bytes.
        status: ``"scanned"`` when the detectors ran, ``"skipped"`` when they could not.
        reason: Why the file was skipped (``"NUL byte at line 2"``, ``"exceeds size limit
            (20971520 bytes > 1048576)"``, ``"needs a newer Python"``...); ``None`` if scanned.
        warnings: Non-fatal problems, e.g. ``"line 2 is not valid UTF-8"``.
        candidates: What the detectors flagged.
        internal_errors: One line per detector check that raised (the other checks still ran).
        parser: ``"cpython"`` when the running interpreter parsed the file, ``"tree-sitter"``
            when only the version-independent parser could (newer syntax); None if skipped.
        detectors_not_run: One line per detector that could not run on the file, and why
            (``"bandit: ..."``): the file was still analysed by the others.
        not_analysed: What the taint engine cut short, with the reason (a work budget).
        read: Other files the analysis of this one read (imported modules), for the audit.
        depends: What the result depends on besides the file's own content
            (``Dependencies.to_json``: the other files read with their SHA-256, and how each
            import and template name looked up resolved), or None when nothing else was
            consulted (a skipped file); a later scan reuses the result only while all of it
            still holds (``reuse``). Not exported.
    """

    path: str
    sha256: str
    size_bytes: int
    status: Literal["scanned", "skipped"]
    reason: str | None = None
    warnings: tuple[str, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    internal_errors: tuple[str, ...] = ()
    parser: str | None = None
    detectors_not_run: tuple[str, ...] = ()
    not_analysed: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    depends: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """Returns the report as a JSON-ready dict (read-only)."""
        data = {
            "path": self.path,
            "sha256": self.sha256,
            "size_bytes": self.size_bytes,
            "status": self.status,
            "reason": self.reason,
            "warnings": list(self.warnings),
            "candidates": [c.to_json() for c in self.candidates],
            "internal_errors": list(self.internal_errors),
        }
        if self.parser is not None:
            data.update(parser=self.parser, detectors_not_run=list(self.detectors_not_run),
                        not_analysed=list(self.not_analysed), read=list(self.read))
        if self.depends is not None:
            data["depends"] = self.depends
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "FileReport":
        """Builds a report from ``to_json()`` output."""
        return cls(
            path=data["path"],
            sha256=data["sha256"],
            size_bytes=data["size_bytes"],
            status=data["status"],
            reason=data.get("reason"),
            warnings=tuple(data.get("warnings", ())),
            candidates=tuple(Candidate.from_json(c) for c in data.get("candidates", ())),
            internal_errors=tuple(data.get("internal_errors", ())),
            parser=data.get("parser"),
            detectors_not_run=tuple(data.get("detectors_not_run", ())),
            not_analysed=tuple(data.get("not_analysed", ())),
            read=tuple(data.get("read", ())),
            depends=data.get("depends"),
        )


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """What the model seam is asked about one candidate.

    Attributes:
        candidate: The candidate under investigation.
        source: The whole decoded text of the candidate's file (the code context; a provider
            that sends text to a paid API cuts it down to the enclosing function).
        brief: The repository brief (a few hundred words at most).
        pass_name: ``"investigate"`` for the first look, ``"revalidate"`` for the sceptical
            second pass, ``"fix"`` for a patch of a confirmed finding (``models.passes``).
        prior: The first pass's answer (``ModelAnswer.to_json()``) on ``"revalidate"``, else None.
    """

    candidate: Candidate
    source: str
    brief: str
    pass_name: Literal["investigate", "revalidate", "fix"] = "investigate"
    prior: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class ModelAnswer:
    """What the model seam answers about one candidate.

    Attributes:
        verdict: ``"vulnerable"``, ``"not_vulnerable"`` or ``"uncertain"``.
        confidence: 0 (a guess) to 10 (certain), an int.
        cwe: CWE number of the weakness the answer is about, or None.
        rationale: One paragraph a security engineer can check.
        signals: Machine-readable facts the answer rests on, used by triage. The offline
            analyst fills: ``source`` (where the dangerous value comes from: "request",
            "parameter", "constant", "environment", "unknown"), ``channel``, ``sanitised``
            (bool), ``in_test`` (bool), ``dead_code`` (bool), ``guards`` (list of checks seen),
            ``purpose`` (e.g. of a hash), ``analysed`` (bool: the analyst understood the
            code). Other models may fill any subset; triage works without them.
    """

    verdict: Verdict
    confidence: int
    cwe: int | None
    rationale: str
    signals: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.verdict not in ("vulnerable", "not_vulnerable", "uncertain"):
            raise ValueError(f"verdict must be vulnerable, not_vulnerable or uncertain, not {self.verdict!r}")
        if not isinstance(self.confidence, int) or not 0 <= self.confidence <= 10:
            raise ValueError(f"confidence must be an int from 0 to 10, not {self.confidence!r}")

    def to_json(self) -> dict[str, Any]:
        """Returns the answer as a JSON-ready dict (read-only). ``signals`` holds JSON values
        already: copied one level deep, not by ``dataclasses.asdict``, whose deep copy costs a
        scan of a large tree most of a second when it plans the model sprints and exports."""
        return {"verdict": self.verdict, "confidence": self.confidence, "cwe": self.cwe, "rationale": self.rationale,
                "signals": dict(self.signals)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ModelAnswer":
        """Builds an answer from ``to_json()`` output.

        Raises:
            ValueError: the verdict or confidence is out of range (a malformed model answer).
        """
        return _from(cls, data)


SURVIVE_UNCERTAIN_MIN_CONFIDENCE = 5
"""An "uncertain" answer keeps a candidate only at this confidence (0-10) or above."""


def survives(answer: ModelAnswer) -> bool:
    """True when an answer keeps its candidate in the pipeline: "vulnerable", or "uncertain"
    with confidence at least ``SURVIVE_UNCERTAIN_MIN_CONFIDENCE``. Every model's answers, the
    first pass's and the sceptical pass's, are judged by this one rule."""
    if answer.verdict == "vulnerable":
        return True
    return answer.verdict == "uncertain" and answer.confidence >= SURVIVE_UNCERTAIN_MIN_CONFIDENCE


@dataclass(frozen=True, kw_only=True)
class Finding:
    """A candidate that survived the pipeline, as exported.

    Attributes:
        candidate: Where and what the detector flagged.
        investigation: The first pass's answer.
        severity: ``critical``/``high``/``medium``/``low``/``info`` from triage.
        severity_reason: Why triage chose that severity.
        revalidation: The sceptical pass's answer (its verdict is ``"vulnerable"`` or
            ``"uncertain"`` for a finding that is kept).
        fix: What the fix sprint recorded for it, or None (no fix sprint, or not reached):
            ``{"proposal": fixes.Proposal.to_json(), "validation": fixes.Validation.to_json()
            or None, "worker": the worker that proposed it}``. Only a validation with ``ok``
            exports the patch as a fix.
    """

    candidate: Candidate
    investigation: ModelAnswer
    severity: Severity
    severity_reason: str
    revalidation: ModelAnswer
    fix: dict[str, Any] | None = None

    @property
    def validated_fix(self) -> dict[str, Any] | None:
        """The recorded fix when its patch passed every check (exported as a fix), else None."""
        fix = self.fix
        return fix if fix and fix.get("proposal", {}).get("diff") and (fix.get("validation") or {}).get("ok") else None

    def to_json(self) -> dict[str, Any]:
        """Returns the finding as a JSON-ready dict (read-only)."""
        return {
            "candidate": self.candidate.to_json(),
            "investigation": self.investigation.to_json(),
            "severity": self.severity,
            "severity_reason": self.severity_reason,
            "revalidation": self.revalidation.to_json(),
            **({"fix": self.fix} if self.fix is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Finding":
        """Builds a finding from ``to_json()`` output."""
        return cls(
            candidate=Candidate.from_json(data["candidate"]),
            investigation=ModelAnswer.from_json(data["investigation"]),
            severity=data["severity"],
            severity_reason=data["severity_reason"],
            revalidation=ModelAnswer.from_json(data["revalidation"]),
            fix=data.get("fix"),
        )


@dataclass(frozen=True, kw_only=True)
class Gap:
    """A candidate the pipeline did not judge to the end, kept in every output with the reason.

    Attributes:
        candidate: Where and what the detector flagged (its verdict is all there is).
        stage: The step that was not done: ``"investigate"``, ``"triage"`` or ``"revalidate"``.
        reason: Why: the last failure recorded for the step, or why it did not run.
        failures: ``step.failed`` records of the step, over every session.
        retry: True when the same command run again will try the step again (its cause may
            have cleared and the bound of ``retry.rounds_for`` is not reached).
    """

    candidate: Candidate
    stage: str
    reason: str
    failures: int = 0
    retry: bool = False

    @property
    def status(self) -> str:
        """``"not investigated"``, ``"not triaged"`` or ``"not revalidated"``."""
        return {"investigate": "not investigated", "triage": "not triaged"}.get(self.stage, "not revalidated")

    def to_json(self) -> dict[str, Any]:
        """Returns the gap as a JSON-ready dict (read-only)."""
        return {"candidate": self.candidate.to_json(), "stage": self.stage, "status": self.status,
                "reason": self.reason, "failures": self.failures, "retry": self.retry}


@dataclass(frozen=True, kw_only=True)
class ScanReport:
    """Everything export needs, computed from the ledger's fold (never from memory).

    Attributes:
        run_id: The run's id, e.g. ``"scan-3f2a9c"``.
        target: Absolute path of the scanned root.
        findings: Surviving findings, any order (export sorts).
        files: Every file the plan covered with what detect learned (skipped ones included).
        complete: True when every sprint before export finished; False for a halted or
            aborted run's partial export.
        halt_reason: Why the run stopped early, or None.
        dismissed: Number of candidates thrown out by investigate or revalidate.
        tool_version: fleetledger's version string.
        started_utc: ISO-8601 UTC start of the run (``"2026-11-29T11:45:00Z"``).
        exclusions: What each exclusion rule did: the files the repository's rules or the
            user's policy left out, and those a repository rule would have hidden but the
            policy refused (``exclusions.Exclusion``), repository rules first.
        code: Every identity of the code that contributed to the run (``identity``), in the
            order its sessions first used it: one, unless the run was continued under other
            code on purpose.
        gaps: Candidates not judged to the end (``Gap``), in candidate order; a report with
            any is not complete.
        export: How the reports are written for code scanning (``ExportOptions``: repository
            root, category, nosec, baseline); None: the defaults.
    """

    run_id: str
    target: str
    findings: tuple[Finding, ...]
    files: tuple[FileReport, ...]
    complete: bool
    halt_reason: str | None = None
    dismissed: int = 0
    tool_version: str = "0"
    started_utc: str | None = None
    exclusions: tuple["Exclusion", ...] = ()
    code: tuple[dict[str, str], ...] = ()
    gaps: tuple[Gap, ...] = ()
    export: "ExportOptions | None" = None
