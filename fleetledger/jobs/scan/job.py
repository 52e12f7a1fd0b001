"""The scan job on the coordinator: identity, planning of each sprint, export.

Sprints: ``detect`` (bandit and file hygiene over every file, plus the repository brief) ->
``investigate`` (the model judges each candidate) -> ``triage`` (severity) -> ``revalidate``
(a sceptical second look at the survivors) -> ``export`` (SARIF 2.1.0, Markdown, JSON; an
idempotent effect, run on the coordinator). The workers' side is ``tasks.py`` (the model passes:
``investigate.py``).
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ... import effects
from ...version import __version__
from ...gate import Action
from ...ledger.records import canonical_json
from ..base import Job, JobOutcome, KnownTask, TaskSpec, task_name
from . import export, fix_plan, report
from .brief import BRIEF_FILES
from .export import OUTPUT_NAMES
from .export_options import ExportOptions
from .fix_export import patch_files
from .detect_version import detect_version
from .plan import (MAX_TEMPLATE_BYTES, SOURCE_SUFFIXES, TEMPLATE_SUFFIXES, Hashed, blocks,
                   candidate_blocks, discover, nothing_to_scan)
from .shapes import Candidate, survives

if TYPE_CHECKING:
    from ...coordinator import HostContext
    from ...reader import RunReader

SPRINTS = ("detect", "investigate", "triage", "revalidate", "export")
FIX_SPRINTS = ("detect", "investigate", "triage", "revalidate", "fix", "export")
"""The sprints of a scan asked to propose patches (``--fix``): ``fix`` after revalidation."""

SPRINT_CODE: dict[str, frozenset[str]] = {
    "detect": frozenset({"job", "detect", "bandit"}),
    "investigate": frozenset({"job", "analyst", "model", "prompt"}),
    "triage": frozenset({"job", "triage"}),
    "revalidate": frozenset({"job", "analyst", "model", "prompt"}),
    "fix": frozenset({"job", "fix"}),
    "export": frozenset({"job", "export"}),
}
"""The parts of the scan's code identity (``ScanJob.code_identity``) that decide each sprint's
results (``Job.sprint_code``); fleetledger's version alone decides none (its code does)."""


def code_parts() -> dict[str, frozenset[str]]:
    """Returns the package files (relative paths) of each code part of the scan's identity:
    ``job`` (the step runtime, the planner and the worker's dispatch, which every sprint runs),
    ``detect`` (bandit's driver, the taint engine, the file walk and the brief), ``analyst`` (the
    investigate and revalidate passes, the model providers, the offline analyst and the prompts),
    ``triage``, ``export`` (the reports) and ``fix`` (its planning, the rewrites and their
    validation, imported by name), each with what it imports (``identity.closure``). Every
    module a worker can import is in some part (a test checks it).

    Raises:
        OSError, SyntaxError: a file of the package cannot be read or parsed.
    """
    from ...identity import closure

    return {
        "job": closure("steps.py") | {"jobs/base.py", "jobs/scan/job.py", "jobs/scan/tasks.py", "jobs/scan/report.py",
                                      "jobs/scan/retry.py", "jobs/scan/step_inputs.py"},
        "detect": closure("jobs/scan/detect.py", "jobs/scan/brief.py", "jobs/scan/plan.py"),
        "analyst": closure("models", "jobs/scan/investigate.py"),
        "triage": closure("jobs/scan/triage.py"),
        "export": closure("jobs/scan/export.py", "jobs/scan/report.py"),
        "fix": closure("jobs/scan/fix_steps.py", "jobs/scan/fix_plan.py"),
    }


class ScanJob(Job):
    """A multi-worker vulnerability scan of one source tree.

    Args:
        target: The folder to scan (made absolute).
        workspace: The workspace folder (left out of the scan when inside the target).
        argv: The command line that started it (recorded so an agent can run it again).
        model: Model spec: ``"offline"`` (the default, runs in the workers), ``"openai:MODEL"``
            or ``"anthropic:MODEL"`` (called on the coordinator's host). Part of the job's
            identity: a scan with another model is another run.
        export: How the reports are written for code scanning (``ExportOptions``); recorded
            in ``describe()["options"]["export"]`` (non-default values only), never in the
            identity: it changes no step's result.
        fix: Propose a patch for each confirmed finding (the ``fix`` sprint, before export).
            Part of the identity when true: a scan with fixes is another run than one without.

    Raises:
        UsageError: ``target`` is not a folder, or ``model`` names no known provider.
    """

    kind = "scan"
    reruns_when_changed = True
    sprints = SPRINTS
    host_sprints = frozenset({"export"})
    worker_module = "fleetledger.jobs.scan.tasks"

    def __init__(self, target: Path, *, workspace: Path, argv: list[str], model: str = "offline",
                 export: ExportOptions | None = None, fix: bool = False) -> None:
        from ...errors import UsageError
        from ...models import parse_spec

        parse_spec(model)
        self.target = Path(target).expanduser().resolve()
        if not self.target.is_dir():
            raise UsageError(f"scan target {target} is not a folder; give the path of a source repository")
        self.workspace = Path(workspace).resolve()
        self.argv = list(argv)
        self.model = model
        self.export = export or ExportOptions()
        self.fix = fix
        self.sprints = FIX_SPRINTS if fix else SPRINTS
        self.export.prefix(str(self.target))  # UsageError now, not at the end of the run
        self._modules_cache: tuple[str, dict[str, str]] | None = None
        self._reads_cache: tuple[dict[str, str], dict[str, str]] | None = None
        self._listings: dict[tuple[str, ...], list[Any]] = {}
        self._hashed: dict[str, Hashed] = {}  # what discover hashed: step_inputs.current_hashes
        self._sarif: tuple[Any, dict[str, Any]] | None = None  # (report, its SARIF log): _sarif_of

    def describe(self) -> dict[str, Any]:
        identity = {"kind": "scan", "target": str(self.target), "detect": detect_version(), "model": self.model}
        options: dict[str, Any] = {"model": self.model}
        if self.export.to_json():
            options["export"] = self.export.to_json()
        if self.fix:  # another run than a scan without fixes
            identity["fix"] = options["fix"] = True
        return {"kind": "scan", "target": str(self.target), "argv": self.argv, "identity": identity, "options": options}

    def code_identity(self) -> dict[str, str]:
        """fleetledger's version; a digest of the code of each part (``code_parts``); bandit's
        version, the model and the prompt version."""
        from importlib.metadata import PackageNotFoundError, version

        from ...identity import source_digest
        from ...models.prompts import PROMPT_VERSION

        try:
            bandit = version("bandit")
        except PackageNotFoundError:
            bandit = "missing"
        return {"fleetledger": __version__, **{name: source_digest(*sorted(files)) for name, files in code_parts().items()},
                "bandit": bandit, "model": self.model, "prompt": PROMPT_VERSION}

    def sprint_code(self) -> dict[str, frozenset[str]]:
        return dict(SPRINT_CODE)

    def read_only_paths(self) -> list[str]:
        return [str(self.target)]

    # -- planning -----------------------------------------------------------------------

    def plan(self, sprint: str, run: "RunReader") -> list[TaskSpec]:
        if sprint == "detect":
            return self._plan_detect()
        if sprint == "fix":
            return self._plan_items("fix", fix_plan.plan_items(run), run, first_number=len(run.view.sprints["fix"].tasks) + 1)
        if sprint not in ("investigate", "triage", "revalidate"):
            return []
        # A sprint planned again (a later round, ``retry_sprint``) plans only what its earlier
        # rounds did not: the steps to try again, and what they led to.
        earlier = report.planned_items(run, sprint) if run.view.sprints[sprint].tasks else set()
        by_id = {c.id: c for c in report.candidates(run)}
        first = report.answers(run, "investigate")
        if sprint == "investigate":
            wanted = set(report.retryable(run, sprint, set(first))) if earlier else set(by_id)
            items = [{"candidate": c.to_json()} for c in by_id.values() if c.id in wanted]
        elif sprint == "triage":
            items = [{"candidate": by_id[cid].to_json(), "answer": a.to_json()}
                     for cid, a in first.items() if cid in by_id and survives(a) and cid not in earlier]
        else:
            triaged = report.severities(run)
            again = set(report.retryable(run, sprint, set(report.answers(run, sprint)))) if earlier else set()
            items = [{"candidate": by_id[cid].to_json(), "answer": first[cid].to_json(), "severity": triaged[cid][0]}
                     for cid in triaged if cid in by_id and cid in first and (cid not in earlier or cid in again)]
        return self._plan_items(sprint, items, run, first_number=len(run.view.sprints[sprint].tasks) + 1)

    def retry_sprint(self, run: "RunReader") -> tuple[str, str] | None:
        """Returns the first model sprint with steps a later session tries again (their last
        failure may clear and ``retry.may_retry`` allows another round), and what to tell the
        person; None when there are none (read-only)."""
        for sprint in ("investigate", "revalidate"):
            if sprint not in run.view.sprints or not run.view.sprints[sprint].tasks:
                continue
            ids = report.retryable(run, sprint, set(report.answers(run, sprint)))
            if ids:
                failed = report.step_failures(run, sprint)
                last = failed[f"{sprint}:{ids[0]}"][2]
                status = "not investigated" if sprint == "investigate" else "not revalidated"
                return sprint, (f"{len(ids)} candidate(s) {status}: their {sprint} step failed for a cause that may "
                                f"clear (last: {last[:300]}); run the same command to try them again")
        return None

    def _discover(self, suffixes: tuple[str, ...] | None = None) -> list[Any]:
        """The target's files (``plan.discover``; the source files, or those with ``suffixes``),
        the workspace left out; listed and hashed once per process, so that comparing the tree
        with a finished run and planning the next one see the same listing.

        Raises:
            OSError: the target cannot be listed.
        """
        key = suffixes or ()
        if key not in self._listings:
            exclude = (self.workspace,) if self.workspace.is_relative_to(self.target) else ()
            self._listings[key] = discover(self.target, exclude=exclude, hashed=self._hashed,
                                           **({"suffixes": suffixes} if suffixes else {}))
        return self._listings[key]

    def _plan_detect(self) -> list[TaskSpec]:
        files = self._discover()
        listing = hashlib.sha256(canonical_json([f.to_json() for f in files]).encode()).hexdigest()
        # The templates the taint engine may read are recorded with the plan (the brief's task
        # is the one task of the whole tree), so that every session of the run reads the same
        # ones and a later scan sees a changed template as a changed tree (``changed_since``).
        specs = [TaskSpec(id="brief", inputs={"kind": "brief", "listing_sha": listing, "templates": self._templates()},
                          why="derive the repository brief from README, packaging and layout")]
        for n, block in enumerate(blocks(files), start=1):
            folder = block[0].path.rsplit("/", 1)[0] if "/" in block[0].path else "."
            specs.append(TaskSpec(id=f"detect-{n:04d}", inputs={"kind": "detect", "files": [f.to_json() for f in block]},
                                  why=f"detect {len(block)} file(s) in {folder}"))
        return specs

    def join_problems(self, run: "RunReader") -> list[str] | None:
        """Compares this host's checkout with the files the run planned (path and SHA-256 of
        each file a detect task covers); None until the detect sprint is planned."""
        diff = self._tree_diff(run)
        if diff is None:
            return None
        planned, here = diff
        problems = [f"{path}: missing here" if path not in here else f"{path}: sha256 {here[path][:12]} here, "
                    f"{f['sha256'][:12]} in the run" for path, f in planned.items() if here.get(path) != f["sha256"]]
        problems += [f"{path}: not in the run" for path in here if path not in planned]
        return problems

    def changed_since(self, run: "RunReader") -> str | None:
        """``"N file(s) added, N changed, N deleted (first: path, ...)"`` between the files the
        run planned and the tree now (paths and SHA-256), or None when they are equal."""
        diff = self._tree_diff(run)
        if diff is None:
            return None
        planned, here = diff
        kinds = {"added": sorted(p for p in here if p not in planned),
                 "changed": sorted(p for p in planned if p in here and here[p] != planned[p]["sha256"]),
                 "deleted": sorted(p for p in planned if p not in here)}
        if not any(kinds.values()):
            return None
        first = [p for paths in kinds.values() for p in paths][:3]
        return (", ".join(f"{len(paths)} file(s) {kind}" for kind, paths in kinds.items() if paths)
                + f" (first: {', '.join(first)})")

    def _tree_diff(self, run: "RunReader") -> tuple[dict[str, dict[str, Any]], dict[str, str]] | None:
        """The run's planned files (path -> planned file) and the tree's files now (path ->
        SHA-256), the template files the taint engine reads included when the run recorded
        them (``planned_templates``); None until the detect sprint is planned."""
        planned = report.planned_files(run)
        if not planned:
            return None
        here = {f.path: f.sha256 for f in self._discover()}
        templates = report.planned_templates(run)
        if templates is not None:
            planned = {**planned, **{path: {"path": path, "sha256": sha} for path, sha in templates.items()}}
            here.update(self._templates())
        return planned, here

    def _templates(self) -> dict[str, str]:
        """``{path: sha256}`` of the tree's template files that a view may render (read, not
        scanned: not links, not over ``MAX_TEMPLATE_BYTES``); {} when the tree cannot be listed."""
        try:
            return {f.path: f.sha256 for f in self._discover(TEMPLATE_SUFFIXES)
                    if not f.link and not f.skip_reason and f.size_bytes <= MAX_TEMPLATE_BYTES}
        except OSError:
            return {}

    def _plan_items(self, kind: str, items: list[dict[str, Any]], run: "RunReader", *,
                    first_number: int = 1) -> list[TaskSpec]:
        shas = {p: f["sha256"] for p, f in report.planned_files(run).items()}

        by_id = {it["candidate"]["id"]: it for it in items}
        specs = []
        for n, block in enumerate(candidate_blocks([Candidate.from_json(it["candidate"]) for it in items]),
                                  start=first_number):
            paths = sorted({c.path for c in block})
            specs.append(TaskSpec(
                id=f"{kind}-{n:04d}",
                inputs={"kind": kind, "items": [by_id[c.id] for c in block], "files": {p: shas[p] for p in paths}},
                why=f"{kind} {len(block)} candidate(s) in {len(paths)} file(s)"))
        return specs

    # -- what tasks need ----------------------------------------------------------------

    def calls_needed(self, task: TaskSpec, run: "RunReader") -> int:
        if task.inputs.get("kind") == "fix":  # a paid model proposes where no rule does: one call at most each
            return fix_plan.calls_needed(task, run) if self.model != "offline" else 0
        if task.inputs.get("kind") not in ("investigate", "revalidate"):
            return 0
        return max(0, len(task.inputs["items"]) - run.view.tasks[task.id].steps_done)

    def actions(self, task: TaskSpec) -> list[Action]:
        kind = task.inputs.get("kind")
        read = Action(kind="read", target=str(self.target))
        if kind == "brief":
            return [Action(kind="tool", target="brief"), read]
        if kind == "detect":
            return [Action(kind="tool", target="bandit"), read]
        if kind in ("investigate", "revalidate", "fix"):  # the offline fixer is the analyst's own work
            return [Action(kind="tool", target="analyst"), Action(kind="model", target=self.model), read]
        return []

    def step_names(self, task: TaskSpec) -> frozenset[str] | None:
        kind = task.inputs.get("kind")
        if kind == "brief":
            return frozenset({"brief"})
        if kind == "detect":
            return frozenset(f"detect:{f['path']}" for f in task.inputs["files"])
        if kind in ("investigate", "triage", "revalidate"):
            return frozenset(f"{kind}:{it['candidate']['id']}" for it in task.inputs["items"])
        if kind == "fix":  # a proposal without a diff has no check step: at most these
            return fix_plan.step_names(task)
        return None

    def step_reads(self, task: TaskSpec) -> dict[str, str]:
        kind = task.inputs.get("kind")
        if kind == "brief":  # each file the brief would read, so that the gate sees each
            return {f"brief:{name}": str(self.target / name) for name in BRIEF_FILES if (self.target / name).is_file()}
        if kind == "detect":
            return {f"detect:{f['path']}": str(self.target / f["path"]) for f in task.inputs["files"]}
        if kind in ("investigate", "revalidate"):
            return {f"{kind}:{it['candidate']['id']}": str(self.target / it["candidate"]["path"]) for it in task.inputs["items"]}
        if kind == "fix":
            return fix_plan.step_reads(task, self.target)
        return {}

    def known_steps(self, tasks: Sequence[tuple[TaskSpec, dict[str, Any]]], run: "RunReader") -> dict[str, KnownTask]:
        """Keys detect, investigate, triage and revalidate tasks as their workers do
        (``step_inputs.known_steps``); the brief is left to a worker."""
        from .step_inputs import known_steps

        return known_steps(self.target, self.model, tasks, hashed=self._hashed)

    def analyses(self, path: str) -> bool:
        """Source files and the templates the taint engine reads: what a repository's exclude
        rule may hide only when the policy allows it (``Policy.repository_may_exclude``)."""
        return path.endswith(SOURCE_SUFFIXES + TEMPLATE_SUFFIXES)

    def repository(self) -> str | None:
        return str(self.target)

    def task_context(self, task: TaskSpec, run: "RunReader") -> dict[str, Any]:
        context: dict[str, Any] = {"root": str(self.target)}
        if task.inputs.get("kind") in ("investigate", "revalidate", "fix"):
            context["brief"] = brief_text(run)
            context["model"] = self.model
        if task.inputs.get("kind") == "detect":
            context["shas"] = self._modules(run)
        if task.inputs.get("kind") == "fix":  # recorded proposals (a resumed task validates them); may tests run?
            context.update(fix_plan.task_context(task, run))
        return context

    def context_reads(self, task: TaskSpec, run: "RunReader") -> dict[str, str]:
        """For a detect task: every Python file the run planned and every template file, which
        the taint engine may read to follow a file's imports and see what its views render
        unescaped (the gate decides which it may)."""
        if task.inputs.get("kind") == "fix":
            return fix_plan.context_reads(task, self.target)
        if task.inputs.get("kind") != "detect":
            return {}
        modules = self._modules(run)
        cached = self._reads_cache
        if cached is None or cached[0] is not modules:  # one mapping per session: the gate checks it once
            cached = (modules, {path: str(self.target / path) for path in modules})
            self._reads_cache = cached
        return cached[1]

    def _modules(self, run: "RunReader") -> dict[str, str]:
        """``{path: sha256}`` of the planned Python files and of the template files the run
        planned (``planned_templates``; those of the tree now for a run that recorded none),
        computed once per session of a run."""
        cached = self._modules_cache
        if cached is None or cached[0] != run.view.run_id:
            planned = report.planned_files(run)
            modules = {path: f["sha256"] for path, f in planned.items()
                       if not f.get("link") and not f.get("skip_reason") and path.endswith(".py")}
            templates = report.planned_templates(run)  # the templates a view may render: read, not scanned
            modules.update(self._templates() if templates is None else templates)
            cached = (run.view.run_id, modules)
            self._modules_cache = cached
        return cached[1]

    # -- export -------------------------------------------------------------------------

    def run_host_sprint(self, sprint: str, host: "HostContext") -> None:
        self._export(host, final=True)

    def on_halt(self, host: "HostContext") -> None:
        """Writes partial outputs, unless the final ones are written already: a halt after the
        export (a full disk at the last head, steps to try again) must not replace complete
        reports with "partial" ones that no later export would replace, since the final
        export is recorded done."""
        if any(key.startswith("export:final:") and effect.get("done") is not None
               for key, effect in host.view.effects.items()):
            return
        self._export(host, final=False)

    def _export(self, host: "HostContext", *, final: bool) -> None:
        scan = dataclasses.replace(report.build_report(host.run, tool_version=__version__), export=self.export)
        body = export.to_json(scan)
        digest = hashlib.sha256(canonical_json(body).encode()).hexdigest()[:16]
        key = f"export:{'final' if final else 'partial'}:{digest}"
        workspace = host.workspace.root
        for name in (*OUTPUT_NAMES, *patch_files(scan.findings)):
            decision = host.gate.check(Action(kind="write", target=str(workspace / name)))
            if not decision.allowed:
                host.record("policy.denied", why=decision.rule, payload={"action": "write", "target": str(workspace / name)})
                raise effects.EffectDenied(f"writing {workspace / name} denied: {decision.rule}")
        effects.perform(host, key, lambda k: {"files": export.write_outputs(scan, workspace, log=self._sarif_of(scan))},
                        kind="export",
                        why=f"write {', '.join(OUTPUT_NAMES)} ({len(scan.findings)} findings, "
                            f"{'complete' if scan.complete else 'partial'})",
                        intent={"files": list(OUTPUT_NAMES), "findings": len(scan.findings), "complete": scan.complete},
                        idempotent=True)

    def outcome(self, run: "RunReader", workspace: str) -> JobOutcome:
        scan = dataclasses.replace(report.build_report(run, tool_version=__version__), export=self.export)
        counts: dict[str, int] = {}
        for f in scan.findings:
            counts[f.severity] = counts.get(f.severity, 0) + 1
        by_sev = ", ".join(f"{counts[s]} {s}" for s in ("critical", "high", "medium", "low", "info") if s in counts)
        skipped = sum(1 for f in scan.files if f.status == "skipped")
        partly = sum(1 for f in scan.files if f.status == "scanned" and (f.detectors_not_run or f.not_analysed))
        outputs = {name: str(Path(workspace) / name) for name in OUTPUT_NAMES}
        nothing = nothing_to_scan(self.target, self.workspace, len(scan.files), skipped) if scan.complete else None
        coverage = (nothing if nothing else
                    f"{len(scan.files) - skipped} file(s) scanned, {skipped} skipped (incomplete: see the skip "
                    f"reasons in findings.md)" if skipped
                    else f"all {len(scan.files)} file(s) scanned" if not scan.gaps else f"{len(scan.files)} file(s) scanned")
        if scan.gaps:  # never "complete": what was not judged, and why
            by_status: dict[str, int] = {}
            for gap in scan.gaps:
                by_status[gap.status] = by_status.get(gap.status, 0) + 1
            retried = sum(g.retry for g in scan.gaps)
            coverage = (f"INCOMPLETE: {', '.join(f'{n} candidate(s) {status}' for status, n in by_status.items())} "
                        f"(first: {scan.gaps[0].candidate.path}:{scan.gaps[0].candidate.line}: {scan.gaps[0].reason[:200]}; "
                        f"{'the same command tries ' + str(retried) + ' of them again' if retried else 'not tried again'}; "
                        f"see Coverage in findings.md); {coverage}")
        if partly:
            coverage += f", {partly} of them analysed in part (see File problems in findings.md)"
        for exclusion in scan.exclusions:  # never silent: the rule, how many files, which
            coverage += f"; {exclusion.describe(max_paths=5)}"
        if self.fix:
            outputs["patches"] = str(Path(workspace) / "patches")
            coverage += f"; {len(patch_files(scan.findings))} of {len(scan.findings)} finding(s) with a validated " \
                        f"patch in {outputs['patches']}"
        summary = (f"{len(scan.findings)} finding(s){f' ({by_sev})' if by_sev else ''}; {coverage}; "
                   f"{scan.dismissed} candidate verdict(s) dismissed; reports: {outputs['findings.sarif']}, "
                   f"{outputs['findings.md']}, {outputs['findings.json']}")
        warnings, new = self._code_scanning_notes(scan)
        if new is not None:
            summary += f"; {new} new against the baseline"
        return JobOutcome(summary=summary, outputs=outputs, nothing_to_do=nothing, warnings=warnings,
                          new_findings=new if self.export.only_new else None)

    def _code_scanning_notes(self, scan: Any) -> tuple[tuple[str, ...], int | None]:
        """What the SARIF export left out to fit GitHub's limits (warnings) and how many results
        are new against the baseline (None without one). Reads the log built for the report
        (``_sarif_of``), never the file, which a person may have changed."""
        if not scan.findings and not scan.gaps and self.export.baseline is None:
            return (), None
        run = self._sarif_of(scan)["runs"][0]
        warnings = tuple(f"findings.sarif trimmed to fit GitHub code scanning's limits: {line}"
                         for line in run["properties"]["trimmed"])
        baseline = run["properties"].get("baseline")
        return warnings, (baseline["new"] if baseline else None)

    def _sarif_of(self, scan: Any) -> dict[str, Any]:
        """``sarif.to_sarif(scan)``, built once for equal reports (the export's and the
        outcome's are built apart from the same records)."""
        from .sarif import to_sarif

        if self._sarif is None or self._sarif[0] != scan:
            self._sarif = (scan, to_sarif(scan))
        return self._sarif[1]


def brief_text(run: "RunReader") -> str:
    """Returns the recorded repository brief text ("" before the brief step ran; read-only,
    kept by the reader while the brief tasks' step counts are unchanged)."""
    detect = run.view.sprints.get("detect")
    brief = [t for t in (detect.tasks if detect is not None else ()) if task_name(t) == "brief"]

    def read() -> str:
        for result in run.results(brief):
            return result.get("text", "")
        return ""

    return run.memo("scan.brief_text", tuple((t, run.view.tasks[t].steps_done) for t in brief), read)
