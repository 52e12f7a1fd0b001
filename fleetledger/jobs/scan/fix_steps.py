"""The fix sprint on the worker: for each confirmed finding, propose a patch (step
``fix:<finding>``), then validate it on a scratch copy (step ``fix-check:<finding>``).

The two are separate recorded steps, so a worker killed between them resumes with the
proposal as recorded (the coordinator hands it back in the task's context, ``proposals``) and
runs only the validation: neither is lost nor done twice. Both read the file inside the
sandbox; the patch is applied only to a scratch copy in a temporary folder, never the
repository.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

from ... import faults
from ...ledger.records import canonical_json
from ...steps import TaskContext, each, input_hash
from .fixes import Proposal, propose, validate
from .shapes import Candidate

FIXER_VERSION = "1"
"""The offline fixer's version, part of every fix step's input hash: a changed rewrite library
proposes again."""


def proposal_step(item: dict[str, Any], file_sha: str) -> tuple[str, str]:
    """Returns the name and input hash of a finding's proposal step (the finding, its file's
    planned hash, the fixer's version)."""
    candidate = item["candidate"]
    return (f"fix:{candidate['id']}",
            input_hash("fix", FIXER_VERSION, canonical_json(candidate), file_sha))


def check_step(proposal: dict[str, Any], run_tests: bool = False) -> tuple[str, str]:
    """Returns the name and input hash of a proposal's validation step (the proposal itself,
    and whether the repository's tests may run)."""
    parts = ("fix-check", FIXER_VERSION, canonical_json(proposal)) + (("tests",) if run_tests else ())
    return (f"fix-check:{proposal['finding']}", input_hash(*parts))


def model_step(item: dict[str, Any], file_sha: str, model: str) -> tuple[str, str]:
    """Returns the name and input hash of a finding's model proposal step (asked of a paid
    model where no rule rewrite is known): the finding, its file, the model and the prompt."""
    from ...models.passes import FIX_PROMPT_VERSION

    candidate = item["candidate"]
    return (f"fix-model:{candidate['id']}",
            input_hash("fix-model", FIX_PROMPT_VERSION, model, canonical_json(candidate), file_sha))


def run_fix(ctx: TaskContext) -> dict[str, Any]:
    """Runs one fix task: a proposal and its validation per finding. The offline fixer's rule
    rewrites come first; where none is known and the job's model is a paid one, the model is
    asked (through the coordinator, which holds the credentials) for a patch in the same shape.

    Returns:
        The task's summary (``steps``, ``failed``).
    """
    from ...models import parse_spec

    root = Path(ctx.context["root"])
    recorded: dict[str, dict[str, Any]] = ctx.context.get("proposals", {})
    readable = set(ctx.context.get("readable", []))
    files: dict[str, str] = ctx.inputs["files"]
    model = ctx.context.get("model", "offline")
    remote = not parse_spec(model).runs_locally
    run_tests = bool(ctx.context.get("run_tests"))
    not_run = ctx.context.get("tests_not_run")  # why the policy's pytest is not honoured (no sandbox)

    def one(item: dict[str, Any]) -> None:
        candidate = Candidate.from_json(item["candidate"])
        planned = files.get(candidate.path, "")

        def make(key: str) -> dict[str, Any]:
            faults.hit("scan.fix.propose")
            data = (root / candidate.path).read_bytes()
            if hashlib.sha256(data).hexdigest() != planned:
                return Proposal(finding=candidate.id, path=candidate.path, base_sha256=hashlib.sha256(data).hexdigest(),
                                author="rule", rationale="no safe rewrite known: the file changed since the scan "
                                                         f"(planned sha256 {planned[:12]}); start a new run").to_json()
            return propose(candidate, data).to_json()

        name, inputs = proposal_step(item, planned)
        proposal = ctx.step(name, inputs, make, why=f"propose a patch for {candidate.rule_id} at "
                                                   f"{candidate.path}:{candidate.line}",
                            outcome=lambda p: (f"proposed by {p['author']}" if p.get("diff")
                                               else p["rationale"][:300]))
        if proposal is None:
            proposal = recorded.get(name)
            if proposal is None:  # denied, given up, or recorded but not handed back: nothing to check
                return
        if not proposal.get("diff") and remote and proposal["base_sha256"] == planned:
            name, inputs = model_step(item, planned, model)
            asked = ctx.step(name, inputs, lambda key: _ask_model(ctx, key, candidate, root, model, planned),
                             spends_call=True, why=f"ask {model} for a patch for {candidate.rule_id} at "
                                                   f"{candidate.path}:{candidate.line} (no rule rewrite is known)",
                             outcome=lambda p: (f"proposed by {p['author']}" if p.get("diff")
                                                else p["rationale"][:300]))
            proposal = asked if asked is not None else recorded.get(name, proposal)
        if not proposal.get("diff"):
            return
        faults.hit("scan.fix.before_check")  # a proposal with a patch is recorded, its validation not begun

        def check(key: str) -> dict[str, Any]:
            data = (root / candidate.path).read_bytes()
            context = {}
            for path in item.get("context", ()):
                if path in readable and path != candidate.path:
                    try:
                        context[path] = (root / path).read_bytes()
                    except OSError:
                        continue
            with tempfile.TemporaryDirectory(prefix="fleetledger-fix-") as scratch:
                result = validate(Proposal.from_json(proposal), candidate, data, scratch=Path(scratch),
                                  context=context, local=lambda module: _local(root, module),
                                  tests=(lambda after: _tests(root, candidate.path, after)) if run_tests
                                  else (lambda after: not_run) if not_run else None)
            return {"finding": candidate.id, **result.to_json()}

        name, inputs = check_step(proposal, run_tests)
        ctx.step(name, inputs, check, why=f"validate the patch for {candidate.id} on a scratch copy",
                 outcome=lambda v: "validated: all checks passed" if v["ok"] else f"rejected: {v['reason']}"[:300])

    each(ctx.inputs["items"], one)
    return {"steps": ctx.ran_steps, "failed": len(ctx.failed_steps)}


def _ask_model(ctx: TaskContext, key: str, candidate: Candidate, root: Path, model: str, planned: str) -> dict[str, Any]:
    """A paid model's proposal for a finding, as a ``Proposal`` (its diff, or none with why).

    Raises:
        ValueError: the file changed since it was planned.
    """
    from ...models import request_to_json
    from ...models.passes import build_fix_prompt
    from .fixes.propose import decode
    from .fixes.text import canonical_diff
    from .shapes import ModelRequest

    data = (root / candidate.path).read_bytes()
    if hashlib.sha256(data).hexdigest() != planned:
        raise ValueError(f"{candidate.path} changed since it was planned")
    text, encoding = decode(data)
    request = ModelRequest(candidate=candidate, source=text, brief=ctx.context.get("brief", ""), pass_name="fix")
    author = f"model:{model}"
    try:
        build_fix_prompt(request)
    except ValueError as exc:  # nothing asked, nothing spent beyond the allowance
        return Proposal(finding=candidate.id, path=candidate.path, base_sha256=planned, encoding=encoding,
                        author=author, rationale=f"no safe rewrite known: {exc}").to_json()
    answer = ctx.ask_model(key, request_to_json(request))
    diff = (answer.get("signals") or {}).get("diff") or None
    rationale = answer.get("rationale", "")
    if diff:  # recorded as the change it makes to this file alone; else as given, for validation to refuse
        try:
            diff = canonical_diff(candidate.path, text, diff) or None
        except ValueError:
            pass
    return Proposal(finding=candidate.id, path=candidate.path, base_sha256=planned, encoding=encoding, author=author,
                    rationale=rationale if diff else f"no safe rewrite known: {rationale}", diff=diff).to_json()


_unpatched: dict[str, Any] = {}
"""The suite's run on the unpatched tree, per root: once per worker process (the tree is the
planned one: every step checks its file's hash)."""


def _tests(root: Path, path: str, after: bytes) -> str:
    """Runs the repository's tests on a scratch copy with the patched file, and without it
    (once per process), and says what they say about the patch (``repo_tests.compare``)."""
    from .fixes import repo_tests

    if not repo_tests.pytest_available():
        return "not run: pytest is not installed where the workers run"
    if not repo_tests.has_tests(root):
        return "not run: the repository has no pytest tests (test_*.py, *_test.py)"
    with tempfile.TemporaryDirectory(prefix="fleetledger-tests-") as scratch:
        tree = Path(scratch) / "tree"
        too_large = repo_tests.copy_tree(root, tree)
        if too_large is not None:
            return f"not run: {too_large}"
        if str(root) not in _unpatched:
            _unpatched[str(root)] = repo_tests.run_suite(tree)
        (tree / path).write_bytes(after)
        return repo_tests.compare(_unpatched[str(root)], repo_tests.run_suite(tree))


def _local(root: Path, module: str) -> bool:
    """True when a module's top-level name is a file or package of the repository (at its root
    or under ``src/``): importing it runs the repository's code, not a library's. A folder
    without ``__init__.py`` named like a standard module (``html/`` of templates) does not
    shadow it, so it does not count."""
    import sys

    top = module.split(".")[0]
    return any((base / f"{top}.py").is_file() or (base / top / "__init__.py").is_file()
               or ((base / top).is_dir() and top not in sys.stdlib_module_names) for base in (root, root / "src"))
