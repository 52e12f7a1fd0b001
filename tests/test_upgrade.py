"""``resume --upgrade`` (issue 14, item 5): which sprints keep their results under changed code
(``upgrade.plan``), and the static import closure each part of the scan's code identity covers
(``identity.closure``). The end-to-end runs are in test_versions.py."""

from __future__ import annotations

from fleetledger.identity import closure
from fleetledger.jobs.scan.job import FIX_SPRINTS, SPRINT_CODE, SPRINTS, ScanJob, code_parts
from fleetledger.replay import RunView
from fleetledger.replay_rules import SprintView
from fleetledger.upgrade import plan

CODE = {"fleetledger": "1", "job": "j", "detect": "d", "analyst": "a", "triage": "t", "export": "e", "bandit": "b",
        "model": "offline", "prompt": "p"}


def in_investigation() -> RunView:
    view = RunView(run_id="scan-1")
    view.sprints = {"detect": SprintView(id="detect", status="completed", tasks=["detect-0001"]),
                    "investigate": SprintView(id="investigate", status="in_progress", tasks=["investigate-0001"])}
    return view


def upgraded(**changes: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    decided = plan(in_investigation(), CODE, {**CODE, **changes}, SPRINTS, SPRINT_CODE)
    return decided.kept, decided.redone


def test_the_first_sprint_a_changed_part_decides_and_every_begun_one_after_it_are_redone() -> None:
    assert upgraded(analyst="a2") == (("detect",), ("investigate",))
    assert upgraded(bandit="b2") == ((), ("detect", "investigate"))
    assert upgraded(job="j2") == ((), ("detect", "investigate"))


def test_a_part_that_decides_no_begun_sprint_keeps_everything() -> None:
    assert upgraded(triage="t2") == (("detect", "investigate"), ()), "triage has not begun: it runs under the new code"
    assert upgraded(fleetledger="2") == (("detect", "investigate"), ()), "a version number alone decides nothing"


def test_a_job_that_names_no_deciding_parts_redoes_every_begun_sprint() -> None:
    decided = plan(in_investigation(), CODE, {**CODE, "prompt": "p2"}, SPRINTS, {})
    assert decided.redone == ("detect", "investigate") and decided.changed == ("prompt",)
    assert "prompt: p -> p2" in decided.summary() and "results kept: nothing" in decided.summary()


def test_a_part_missing_from_the_recorded_identity_counts_as_changed() -> None:
    old = {k: v for k, v in CODE.items() if k != "detect"}
    assert plan(in_investigation(), old, CODE, SPRINTS, SPRINT_CODE).redone == ("detect", "investigate")


def test_the_closure_follows_relative_absolute_and_function_level_imports_and_nothing_else() -> None:
    triage = closure("jobs/scan/triage.py")
    assert "jobs/scan/shapes.py" in triage and "coordinator.py" not in triage
    assert "models/failures.py" in closure("steps.py"), "imported inside a function"
    assert "models/anthropic_provider.py" not in closure("models/__init__.py"), "imported with importlib by name"
    assert "models/anthropic_provider.py" in closure("models"), "a folder entry covers it"
    assert "jobs/scan/triage.py" not in closure("jobs/scan/detect.py")


def test_every_module_a_scan_worker_imports_is_in_some_part_of_the_identity() -> None:
    covered = frozenset().union(*code_parts().values())
    assert closure("jobs/scan/tasks.py") <= covered
    assert set(SPRINT_CODE) == set(FIX_SPRINTS) >= set(SPRINTS)
    identity = ScanJob.__new__(ScanJob)
    identity.model = "offline"
    names = set(identity.code_identity())
    assert all(parts <= names for parts in SPRINT_CODE.values()), "every deciding part is recorded"


def test_the_import_statements_kept_between_processes_give_the_closure_a_parse_gives(tmp_path, monkeypatch) -> None:
    """A code identity's closures are the same from a cold cache of import statements, from a
    warm one, and from one whose entries were damaged (each such entry is parsed again)."""
    import json

    from fleetledger import identity

    def fresh() -> dict[str, frozenset[str]]:
        identity.closure.cache_clear()
        identity._imports.cache_clear()
        identity._CACHE_STATE.update(entries=None, dirty=False)
        return {name: identity.closure(*entries) for name, entries in
                (("detect", ("jobs/scan/detect.py",)), ("analyst", ("models", "jobs/scan/investigate.py")))}

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cold = fresh()
    cache = identity.statements_cache()
    assert cache.is_file() and cache.is_relative_to(tmp_path)
    assert fresh() == cold
    body = json.loads(cache.read_text())
    body["entries"] = {key: [[0, "x", "not names"]] for key in body["entries"]}
    cache.write_text(json.dumps(body))
    assert fresh() == cold
    identity.closure.cache_clear()
    identity._imports.cache_clear()
    identity._CACHE_STATE.update(entries=None, dirty=False)
