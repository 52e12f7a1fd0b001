"""Issue 16, item 1: a new run of a changed tree reuses exactly the results whose inputs, code
and policy are unchanged (counted in the ledger), reports the whole tree, and its report
equals a fresh full scan's; a shared result cache serves another workspace."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetledger.jobs.scan.detect import detect_file
from fleetledger.jobs.scan.plan import BLOCK_MIN_FILES
from fleetledger.jobs.scan.modules import python_paths, still_holds

from e2e import REPO_ROOT, _env, cli_from, installed_copy, records, run_cli

DEMO = REPO_ROOT / "fleetledger" / "demo_repo"

QUERIES = textwrap.dedent('''
    import sqlite3


    def lookup(name):
        conn = sqlite3.connect("shop.db")
        return conn.execute("SELECT * FROM items WHERE name = '%s'" % name).fetchall()
''').lstrip()

SEARCH = textwrap.dedent('''
    from flask import request

    from shop.queries import lookup


    def search():
        return str(lookup(request.args["q"]))
''').lstrip()


# -- the engine's dependencies -----------------------------------------------------------------

def _shas(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.py"))}


def _fresh() -> None:
    from fleetledger.analysis import program, summary_sharing
    from fleetledger.jobs.scan import modules

    summary_sharing._SHARED.clear()
    program._SHARED_MODULES.clear()
    modules._parsed.clear()
    modules._UNREAD.clear()


def _cross_file_repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "low.py").write_text("import os\n\n\ndef run(text):\n    os.system(text)\n")
    (root / "pkg" / "mid.py").write_text("from pkg.low import run\n\n\ndef relay(text):\n    run(text)\n")
    (root / "pkg" / "first.py").write_text("from flask import request\nfrom pkg.mid import relay\n\n\n"
                                           "def a():\n    relay(request.args['x'])\n")
    (root / "pkg" / "second.py").write_text("from flask import request\nfrom pkg.mid import relay\n\n\n"
                                            "def b():\n    relay(request.form['y'])\n")
    return root


def test_a_files_dependencies_do_not_depend_on_what_the_process_analysed_before(tmp_path: Path) -> None:
    """``second.py``'s flow goes through ``mid.relay`` into ``low.run``. Analysed after
    ``first.py``, it takes ``relay``'s summary from the process's shared cache without reading
    ``low.py``; its recorded dependencies must still name ``low.py`` (the summary carries what
    it depended on), or a later change to ``low.py`` would reuse a stale result."""
    root = _cross_file_repo(tmp_path / "repo")
    shas = _shas(root)
    _fresh()
    alone = detect_file(root, "pkg/second.py", readable=shas)
    _fresh()
    detect_file(root, "pkg/first.py", readable=shas)
    after = detect_file(root, "pkg/second.py", readable=shas)
    assert alone.depends == after.depends
    assert set(after.depends["files"]) == {"pkg/low.py", "pkg/mid.py"}, after.depends
    assert after.depends["files"]["pkg/low.py"] == shas["pkg/low.py"]
    assert after.depends["names"]["pkg.mid"] == "pkg/mid.py" and after.depends["names"]["flask"] is None
    assert [c.rule_id for c in after.candidates] == [c.rule_id for c in alone.candidates] != []


def test_a_recorded_result_holds_only_while_what_it_read_and_looked_up_is_unchanged(tmp_path: Path) -> None:
    root = _cross_file_repo(tmp_path / "repo")
    shas = _shas(root)
    _fresh()
    result = detect_file(root, "pkg/second.py", readable=shas).to_json()
    planned = {"path": "pkg/second.py", "sha256": shas["pkg/second.py"]}

    def holds(readable: dict[str, str]) -> bool:
        return still_holds(result, planned, readable, python_paths(readable))

    assert holds(shas)
    assert not holds({**shas, "pkg/low.py": "0" * 64}), "a file it read changed (two imports away)"
    assert not holds({p: h for p, h in shas.items() if p != "pkg/low.py"}), "a file it read is gone"
    assert not holds({**shas, "flask.py": "1" * 64}), "a name that resolved to no file of the repository now does"
    assert holds({**shas, "pkg/unrelated.py": "2" * 64}), "a file it never looked up was added"
    assert result["depends"]["modules"]["pkg/second.py"] == "pkg.second"
    renamed = {**result, "depends": {**result["depends"], "modules": {"pkg/second.py": "src.pkg.second"}}}
    assert not still_holds(renamed, planned, shas, python_paths(shas)), "a module it loaded has another import name now"
    assert not still_holds(result, {**planned, "sha256": "3" * 64}, shas, python_paths(shas)), "its own file changed"
    changed_during = {**result, "sha256": "4" * 64}
    assert not still_holds(changed_during, planned, shas, python_paths(shas)), "read at another hash than planned"


def test_a_worker_cannot_file_a_result_under_another_key_or_claim_a_reuse_it_was_not_offered() -> None:
    """A taken-over worker could record a made-up result as "reused" to hide a finding, or file
    its result under another salt or inputs to poison a later run; the coordinator refuses any
    key that is not the sent salt's and the step's own inputs', and any claim whose result, key
    or origin differs from what it offered."""
    from fleetledger.reuse import record_problem
    from fleetledger.steps import reuse_key

    inputs = "ab" * 32
    key = reuse_key("s", "detect:a.py", inputs)
    offer = {"key": key, "result": {"status": "scanned", "candidates": [1]}, "from": {"run": "scan-a", "seq": 7}}
    sent = {"salt": "s", "offers": {"detect:a.py": [offer]}}
    fresh = {"name": "detect:a.py", "input_hash": inputs[:16], "result": {"status": "scanned", "candidates": []},
             "reuse": {"salt": "s", "inputs": inputs, "key": key}}
    claim = {**fresh, "result": offer["result"], "reused": offer["from"]}
    assert record_problem(fresh, sent) is None and record_problem(claim, sent) is None
    assert record_problem({**fresh, "reuse": {**fresh["reuse"], "salt": "t"}}, sent), "another salt"
    assert record_problem({**fresh, "reuse": {**fresh["reuse"], "key": reuse_key("s", "detect:a.py", "cd" * 32)}}, sent)
    assert record_problem({**fresh, "input_hash": "cd" * 8}, sent), "inputs that are not the step's"
    assert record_problem(fresh, None), "a key where no salt was sent"
    assert record_problem({**claim, "result": {"status": "scanned", "candidates": []}}, sent), "another result"
    assert record_problem({**claim, "reused": {"run": "scan-b", "seq": 7}}, sent), "another origin"
    assert record_problem({"name": "detect:a.py", "result": {}, "reused": offer["from"]}, sent), "a claim without a key"
    assert record_problem({"name": "detect:a.py", "result": {}}, None) is None, "a step of a sprint that is not keyed"


def test_a_run_where_a_worker_was_caught_offers_nothing_and_each_step_offers_its_latest_results(tmp_path: Path) -> None:
    from fleetledger.ledger import NewRecord, open_storage
    from fleetledger.result_cache import ResultCache
    from fleetledger.reuse import Offers

    def done(run: str, task: str, key: str, result: dict[str, Any]) -> NewRecord:
        return NewRecord(run_id=run, actor="w01", kind="step.done", key=f"{task}/detect:a.py@{key[:16]}", task=task,
                         payload={"name": "detect:a.py", "input_hash": key[:16], "result": result,
                                  "reuse": {"salt": "s", "inputs": key, "key": key}})

    with open_storage(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as storage:
        for run, results in (("scan-a", [("1" * 64, {"v": "old"}), ("2" * 64, {"v": "a2"})]),
                             ("scan-b", [("1" * 64, {"v": "new"})]), ("scan-c", [("3" * 64, {"v": "forged"})])):
            storage.append([NewRecord(run_id=run, actor="coordinator", kind="run.started", key=run,
                                      payload={"job": {"kind": "scan"}, "sprints": ["detect"]})], now_ms=1)
            storage.append([done(run, "detect-0001", key, result) for key, result in results], now_ms=2)
        storage.append([NewRecord(run_id="scan-c", actor="coordinator", kind="policy.denied", why="caught",
                                  payload={"action": "worker message", "target": "w01"})], now_ms=3)
        offers = Offers(storage).offers("s", ["detect:a.py", "detect:b.py"])
        with_texts = Offers(storage).offers("s", ["detect:a.py"], texts=True)
        # Which salts the coordinator need not settle tasks for (``none_for``): a salt no result
        # carries, unless a cache may hold some.
        nothing = (Offers(storage).none_for("s"), Offers(storage).none_for("t"),
                   Offers(storage, ResultCache(tmp_path / "cache")).none_for("t"))
    assert nothing == (False, True, False)
    assert all(set(o) == {"key", "result", "from"} for o in offers["detect:a.py"]), "what a worker is sent"
    assert all(set(o) == {"key", "result", "from", "stored"} for o in with_texts["detect:a.py"])
    assert list(offers) == ["detect:a.py"]
    assert [(o["key"][0], o["result"]["v"], o["from"]["run"]) for o in offers["detect:a.py"]] == \
        [("1", "new", "scan-b"), ("2", "a2", "scan-a")], "the latest result per key, none of the caught run's"


# -- whole runs ----------------------------------------------------------------------------------

def _repo(root: Path) -> Path:
    shutil.copytree(DEMO, root)
    (root / "shop" / "queries.py").write_text(QUERIES)
    (root / "shop" / "search.py").write_text(SEARCH)
    return root


def _scan(repo: Path, ws: Path, *args: str) -> str:
    done = run_cli("scan", str(repo), "--workspace", str(ws), "--no-progress", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _last_run(ws: Path) -> tuple[str, dict[str, str]]:
    """The workspace's last run id, and how each of its steps was done: ``{step name:
    "reused" | "new"}``."""
    recs = records(ws)
    run = [r for r in recs if r.kind == "run.started"][-1].run_id
    return run, {r.payload["name"]: "reused" if "reused" in r.payload else "new"
                 for r in recs if r.run_id == run and r.kind == "step.done"}


def _findings(ws: Path) -> list[Any]:
    body = json.loads((ws / "findings.json").read_text())
    return sorted((f["candidate"]["path"], f["candidate"]["line"], f["candidate"]["rule_id"], f["severity"],
                   f["verdict"]) for f in body["findings"])


def _files(ws: Path) -> list[tuple[str, str]]:
    return sorted((f["path"], f["status"]) for f in json.loads((ws / "findings.json").read_text())["files"])


def _fingerprints(ws: Path) -> set[tuple[str, str, str]]:
    """(path, primaryLocationLineHash, our fingerprint) of each SARIF result."""
    results = json.loads((ws / "findings.sarif").read_text())["runs"][0]["results"]
    return {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             r["partialFingerprints"]["primaryLocationLineHash"], r["partialFingerprints"]["fleetledgerFingerprint/v1"])
            for r in results}


def _run_ok(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Runs a command of an installed copy to its end; it must exit 0."""
    done = subprocess.run(argv, env=_env({}), capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _append(path: Path, line: str) -> None:
    """Changes a file of an installed copy (an upgrade in place) by appending a comment line."""
    path.write_text(path.read_text() + f"\n{line}\n")


def _new(steps: dict[str, str], prefix: str = "") -> set[str]:
    return {name for name, how in steps.items() if how == "new" and name.startswith(prefix)}


@pytest.mark.slow
def test_each_change_reruns_exactly_what_it_touches_and_the_report_is_the_whole_trees(tmp_path: Path) -> None:
    repo, ws = _repo(tmp_path / "repo"), tmp_path / "ws"
    _scan(repo, ws)
    first, steps = _last_run(ws)
    assert _new(steps) == set(steps) and any(n.startswith("investigate:") for n in steps)
    assert "already finished" in _scan(repo, ws), "an unchanged tree is not scanned again"

    # Add a file in a subfolder (the brief, which every model step reads, lists only the top level).
    (repo / "shop" / "extra.py").write_text("import os\nfrom flask import request\n\n\ndef run():\n"
                                            "    os.system(request.args['c'])\n")
    out = _scan(repo, ws)
    assert "the tree: 1 file(s) added (first: shop/extra.py)" in out and "carried over from earlier runs" in out
    second, steps = _last_run(ws)
    assert second != first
    assert _new(steps, "detect:") == {"detect:shop/extra.py"}
    extra = {name.split(":", 1)[1] for name in _new(steps, "investigate:")}
    assert extra and all(name.split(":", 1)[1] in extra for name in _new(steps) if not name.startswith(("detect:", "brief")))
    assert ("shop/extra.py", "scanned") in _files(ws) and len(_files(ws)) == 7

    # Change a file another file's analysis read: both are analysed again, nothing else.
    (repo / "shop" / "queries.py").write_text(QUERIES.replace("return conn", "rows = 0\n    return conn"))
    _scan(repo, ws)
    _, steps = _last_run(ws)
    assert _new(steps, "detect:") == {"detect:shop/queries.py", "detect:shop/search.py"}

    before_move = _findings(ws)
    # Move lines above findings: only that file's steps run again, and every finding keeps its
    # SARIF fingerprints (GitHub keeps the alerts and their dismissals).
    prints = _fingerprints(ws)
    app = repo / "shop" / "app.py"
    app.write_text("# a comment moves every line below it\n\n" + app.read_text())
    _scan(repo, ws)
    _, steps = _last_run(ws)
    assert _new(steps, "detect:") == {"detect:shop/app.py"}
    moved = _findings(ws)
    assert _fingerprints(ws) == prints and any(path == "shop/app.py" for path, *_ in prints)
    assert [line + 2 if path == "shop/app.py" else line for path, line, *_ in before_move] == [line for _, line, *_ in moved]

    # Delete a file: every other result is reused, and the report no longer has it.
    (repo / "shop" / "extra.py").unlink()
    _scan(repo, ws)
    _, steps = _last_run(ws)
    assert _new(steps, "detect:") == set() and not [n for n in _new(steps) if n != "brief"]
    assert all(path != "shop/extra.py" for path, *_ in _findings(ws))
    assert [f for f in moved if f[0] != "shop/extra.py"] == _findings(ws)

    # The incremental report is a fresh full scan's.
    fresh = tmp_path / "fresh"
    _scan(repo, fresh, "--no-reuse")
    assert _findings(fresh) == _findings(ws) and _files(fresh) == _files(ws)
    _, steps = _last_run(fresh)
    assert _new(steps) == set(steps)


@pytest.mark.slow
def test_a_shared_cache_serves_another_workspace_and_a_damaged_entry_is_never_used(tmp_path: Path) -> None:
    repo, cache = _repo(tmp_path / "repo"), tmp_path / "cache"
    _scan(repo, tmp_path / "ws1", "--cache", str(cache))
    origin, _ = _last_run(tmp_path / "ws1")
    entries = sorted(cache.rglob("*.json"))
    assert entries
    damaged = next(e for e in entries if '"name":"detect:shop/app.py"' in e.read_text())
    damaged.write_text(damaged.read_text().replace('"status":"scanned"', '"status":"skipped"'))

    _scan(repo, tmp_path / "ws2", "--cache", str(cache))
    _, steps = _last_run(tmp_path / "ws2")
    assert _new(steps, "detect:") == {"detect:shop/app.py"}, "the damaged entry is a miss, not a result"
    reused = [r for r in records(tmp_path / "ws2") if r.kind == "step.done" and "reused" in r.payload]
    assert reused and all(r.payload["reused"]["run"] == origin and r.payload["reused"]["cache"] == str(cache)
                          for r in reused)
    assert _findings(tmp_path / "ws1") == _findings(tmp_path / "ws2")


@pytest.mark.slow
def test_a_new_analyst_version_reruns_the_model_passes_and_reuses_detection(tmp_path: Path) -> None:
    """The analyst changes (an upgrade in place) after a finished run: the same command says the
    code changed and starts a new run; detection and triage (whose code did not change, on the
    same answers) are reused, every investigate and revalidate step runs again."""
    install, repo, ws = installed_copy(tmp_path), _repo(tmp_path / "repo"), tmp_path / "ws"
    scan = cli_from(install, "scan", str(repo), "--workspace", str(ws), "--no-progress")
    _run_ok(scan)
    before = _findings(ws)
    _append(install / "fleetledger" / "models" / "offline.py", "# the analyst changed")
    again = _run_ok(scan)
    assert "the code: analyst: " in again.stderr, again.stderr
    _, steps = _last_run(ws)
    assert not _new(steps, "detect:") and not _new(steps, "triage:")
    model = {n for n in steps if n.startswith(("investigate:", "revalidate:"))}
    assert model and _new(steps) == model
    assert _findings(ws) == before


VIEW_RENDERS = textwrap.dedent('''
    from flask import Flask, render_template, request

    app = Flask(__name__)


    @app.route("/")
    def index():
        return render_template("page.html", name=request.args["n"])
''').lstrip()

HELPER_SINK = "import os\n\n\ndef run(text):\n    os.system(text)\n"
HELPER_CALLER = "from flask import request\n\nfrom pkg.helpers import run\n\n\ndef view():\n    run(request.args['c'])\n"


def _same_as_fresh(repo: Path, ws: Path, fresh: Path, *args: str) -> None:
    """The workspace's report is a fresh full scan's (``--no-reuse``, a new workspace)."""
    _scan(repo, fresh, "--no-reuse", *args)
    assert (_findings(ws), _files(ws)) == (_findings(fresh), _files(fresh))


@pytest.mark.slow
def test_a_template_changed_alone_starts_a_new_run_and_its_views_are_analysed_again(tmp_path: Path) -> None:
    """Only a template changes (``|safe`` added), then a template of the same name appears where
    a view finds it first: no source file changed, but the taint engine reads the templates, so
    the finished run's report is stale; the same command must start a new run that analyses
    the views that render them again (and reuses the rest)."""
    repo, ws = tmp_path / "repo", tmp_path / "ws"
    (repo / "templates").mkdir(parents=True)
    (repo / "app.py").write_text(VIEW_RENDERS)
    (repo / "other.py").write_text("x = 1\n")
    (repo / "templates" / "page.html").write_text("<p>{{ name }}</p>\n")
    _scan(repo, ws)
    assert _findings(ws) == []

    (repo / "templates" / "page.html").write_text("<p>{{ name|safe }}</p>\n")
    out = _scan(repo, ws)
    assert "already finished" not in out and "templates/page.html" in out, out
    _, steps = _last_run(ws)
    assert _new(steps, "detect:") == {"detect:app.py"}
    assert [f[:3] for f in _findings(ws)] == [("app.py", 8, "FLT-xss")]
    _same_as_fresh(repo, ws, tmp_path / "fresh1")

    (repo / "templates" / "page.html").write_text("<p>{{ name }}</p>\n")
    assert _findings(ws) != [] and "already finished" not in _scan(repo, ws)
    assert _findings(ws) == []
    (repo / "web" / "templates").mkdir(parents=True)  # the same name, found first (under "templates", shorter)
    (repo / "templates" / "page.html").rename(repo / "web" / "templates" / "page.html")
    (repo / "templates" / "page.html").write_text("<p>{{ name|safe }}</p>\n")
    assert "already finished" not in _scan(repo, ws)
    _same_as_fresh(repo, ws, tmp_path / "fresh2")


@pytest.mark.slow
def test_a_changed_policy_or_repository_rule_alone_starts_a_new_run(tmp_path: Path) -> None:
    """The policy decides results (it is part of every reuse key): a finished run whose policy
    changed since, the user's or the repository's own rules (``.fleetledger.toml``, a file of
    the scanned tree that is not a source file), is not "already finished"; the same command
    starts a new run under the policy in force, whose report is a fresh scan's."""
    repo, ws, policy = tmp_path / "repo", tmp_path / "ws", tmp_path / "policy.toml"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "helpers.py").write_text(HELPER_SINK)
    (repo / "pkg" / "view.py").write_text(HELPER_CALLER)
    policy.write_text("[policy]\nrepository_may_exclude = true\n")
    _scan(repo, ws, "--policy", str(policy))
    assert [f[0] for f in _findings(ws)] == ["pkg/helpers.py", "pkg/view.py"]  # the sink, and the call to it

    (repo / ".fleetledger.toml").write_text('[rules]\nexclude = ["pkg/helpers.py"]\n')
    out = _scan(repo, ws, "--policy", str(policy))
    assert "already finished" not in out and "the policy" in out, out
    _same_as_fresh(repo, ws, tmp_path / "fresh1", "--policy", str(policy))
    assert _findings(ws) == []

    policy.write_text("[policy]\nrepository_may_exclude = false\n")
    assert "already finished" not in _scan(repo, ws, "--policy", str(policy))
    _same_as_fresh(repo, ws, tmp_path / "fresh2", "--policy", str(policy))
    assert [f[0] for f in _findings(ws)] == ["pkg/helpers.py", "pkg/view.py"]  # the sink, and the call to it
    assert "already finished" in _scan(repo, ws, "--policy", str(policy)), "nothing changed since"


def test_a_recorded_brief_holds_only_while_what_it_read_is_unchanged(tmp_path: Path) -> None:
    """The brief's key holds the listing of the Python files only; the README, the packaging
    files and the top level it reads must be checked before a recorded brief is reused."""
    from fleetledger.jobs.scan.brief import BRIEF_FILES, brief_holds, derive_brief

    root = tmp_path / "repo"
    root.mkdir()
    (root / "README.md").write_text("An internal batch tool.\n")
    (root / "a.py").write_text("x = 1\n")
    brief = derive_brief(root, BRIEF_FILES)
    assert brief_holds(brief, root, BRIEF_FILES)
    assert not brief_holds({k: v for k, v in brief.items() if k != "depends"}, root, BRIEF_FILES), "recorded without"
    assert not brief_holds(brief, root, [n for n in BRIEF_FILES if n != "README.md"]), "the README is no longer readable"
    (root / "README.md").write_text("A public web service.\n")
    assert not brief_holds(brief, root, BRIEF_FILES), "the README changed"
    brief = derive_brief(root, BRIEF_FILES)
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\ndependencies = ["flask"]\n')
    assert not brief_holds(brief, root, BRIEF_FILES), "a packaging file it looked for appeared"
    brief = derive_brief(root, BRIEF_FILES)
    (root / "docs").mkdir()
    assert not brief_holds(brief, root, BRIEF_FILES), "the top level it lists changed"


@pytest.mark.slow
def test_a_brief_is_not_reused_after_its_readme_changed(tmp_path: Path) -> None:
    """README A with files T, then README B with T and one more file, then README B with T: the
    last run's brief key (T's listing) is the first run's, but its README is not."""
    repo, ws = tmp_path / "repo", tmp_path / "ws"
    repo.mkdir()
    (repo / "README.md").write_text("An internal batch tool.\n")
    (repo / "a.py").write_text("x = 1\n")
    _scan(repo, ws)
    (repo / "README.md").write_text("A public web service facing the internet.\n")
    (repo / "b.py").write_text("y = 2\n")
    _scan(repo, ws)
    (repo / "b.py").unlink()
    _scan(repo, ws)
    run, _ = _last_run(ws)
    brief = [r.payload["result"]["text"] for r in records(ws)
             if r.run_id == run and r.kind == "step.done" and r.payload["name"] == "brief"]
    assert len(brief) == 1 and "public web service" in brief[0], brief


class _Sent:
    """A worker's channel that keeps what it sends."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.messages.append(message)


def test_a_result_is_not_reused_for_a_file_changed_since_the_run_was_planned(tmp_path: Path) -> None:
    """A run is planned, killed, a file changes, the same command resumes it: the detect step
    of the changed file (and of a file whose analysis read it) is keyed by the planned hash,
    and an earlier run recorded a result under that key. Analysed now, the file would be
    reported as changed during the scan (and the other one analysed without it); a reused
    result must not report the planned content as scanned instead."""
    import threading

    from fleetledger.jobs.scan import tasks
    from fleetledger.jobs.scan.detect_version import detect_version
    from fleetledger.steps import TaskContext, input_hash, reuse_key

    root = _cross_file_repo(tmp_path / "repo")
    shas = _shas(root)
    _fresh()
    recorded = {p: detect_file(root, p, readable=shas).to_json() for p in ("pkg/low.py", "pkg/mid.py")}
    files = [{"path": p, "sha256": shas[p], "size_bytes": len((root / p).read_bytes())} for p in recorded]
    offers = {f"detect:{p}": [{"key": reuse_key("s", f"detect:{p}", input_hash(p, shas[p], detect_version())),
                               "result": recorded[p], "from": {"run": "scan-a", "seq": 1}}] for p in recorded}

    def run_task() -> dict[str, str]:
        sent = _Sent()
        ctx = TaskContext(sent, "w01", {"task": "detect-0001", "epoch": 1, "sprint": "detect",
                                        "inputs": {"kind": "detect", "files": files},
                                        "context": {"root": str(root), "shas": dict(shas), "readable": sorted(shas)},
                                        "reuse": {"salt": "s", "offers": offers}}, threading.Event())
        tasks.run_task(ctx)
        return {m["payload"]["name"]: ("reused " if "reused" in m["payload"] else "") + m["payload"]["result"]["status"]
                for m in sent.messages if m["kind"] == "step.done"}

    assert run_task() == {"detect:pkg/low.py": "reused scanned", "detect:pkg/mid.py": "reused scanned"}
    (root / "pkg" / "low.py").write_text("import subprocess\n\n\ndef run(text):\n    subprocess.call(text, shell=True)\n")
    assert run_task() == {"detect:pkg/low.py": "skipped", "detect:pkg/mid.py": "scanned"}, "analysed again"
    from fleetledger.jobs.scan.modules import disk_hashes

    assert disk_hashes(root, 1 << 20)("pkg/low.py") != shas["pkg/low.py"]
    assert disk_hashes(root, 1 << 20)("pkg/gone.py") == ""


def test_a_verdict_is_not_reused_for_a_file_changed_since_it_was_detected(tmp_path: Path) -> None:
    """The investigate step's key holds the file's planned hash; run now on a file that changed
    since, the step fails ("changed since it was detected"). A verdict recorded under the key
    must not be taken instead."""
    import threading

    from fleetledger.jobs.scan import tasks
    from fleetledger.steps import TaskContext

    root = _cross_file_repo(tmp_path / "repo")
    shas = _shas(root)
    _fresh()
    candidate = next(c for c in detect_file(root, "pkg/low.py", readable=shas).candidates)
    inputs = {"kind": "investigate", "items": [{"candidate": candidate.to_json()}],
              "files": {"pkg/low.py": shas["pkg/low.py"]}}

    def run_task(offers: dict[str, Any]) -> list[dict[str, Any]]:
        sent = _Sent()
        ctx = TaskContext(sent, "w01", {"task": "investigate-0001", "epoch": 1, "sprint": "investigate",
                                        "inputs": inputs, "context": {"root": str(root), "model": "offline", "brief": ""},
                                        "calls_allowed": 1, "reuse": {"salt": "s", "offers": offers}}, threading.Event())
        tasks.run_task(ctx)
        return [m for m in sent.messages if m["kind"] in ("step.done", "step.failed")]

    first = run_task({})
    assert [m["kind"] for m in first] == ["step.done"]
    payload = first[0]["payload"]
    offers = {payload["name"]: [{"key": payload["reuse"]["key"], "result": payload["result"],
                                 "from": {"run": "scan-a", "seq": 1}}]}
    assert "reused" in run_task(offers)[0]["payload"]
    (root / "pkg" / "low.py").write_text((root / "pkg" / "low.py").read_text() + "# changed\n")
    again = run_task(offers)
    assert [m["kind"] for m in again] == ["step.failed"] and "changed since it was detected" in again[0]["why"]


@pytest.mark.slow
def test_a_result_cache_inside_the_scanned_folder_is_refused(tmp_path: Path) -> None:
    """A repository ships a result cache whose entry for its vulnerable file has no candidate
    (the digest is a plain SHA-256, anyone can fix it): a user who points ``--cache`` there
    (``FLEETLEDGER_CACHE=.cache`` and a scan of the checkout) must not get the forged result.
    A cache in the workspace (made here) is accepted."""
    from fleetledger.ledger.records import canonical_json

    repo, cache = tmp_path / "repo", tmp_path / "cache"
    repo.mkdir()
    (repo / "app.py").write_text("import os\nfrom flask import request\n\n\ndef v():\n    os.system(request.args['c'])\n")
    _scan(repo, tmp_path / "attacker", "--cache", str(cache))
    for entry in cache.rglob("*.json"):
        body = json.loads(entry.read_text())
        if body["name"] == "detect:app.py":
            body.pop("digest")
            body["result"]["candidates"] = []
            body["digest"] = hashlib.sha256(canonical_json(body).encode()).hexdigest()
            entry.write_text(canonical_json(body))
    shutil.copytree(cache, repo / ".cache")

    refused = run_cli("scan", str(repo), "--workspace", str(tmp_path / "victim"), "--no-progress",
                      "--cache", str(repo / ".cache"))
    assert refused.returncode == 2 and "inside the scanned folder" in refused.stderr, refused.stdout + refused.stderr
    assert not (tmp_path / "victim" / "findings.json").exists()

    ws = repo / ".fleetledger"
    _scan(repo, ws, "--cache", str(ws / "cache"))
    _scan(repo, ws, "--new", "--cache", str(ws / "cache"))
    assert [f[:3] for f in _findings(ws)] == [("app.py", 6, "FLT-command")]


def test_a_result_made_without_a_file_that_changed_during_its_scan_does_not_hold_for_that_file(tmp_path: Path) -> None:
    """``low.py`` changes while the run that planned it scans: ``second.py``'s analysis cannot
    use it ("changed since planned") and misses the flow through it. When ``low.py`` is back at
    its planned content in a later scan, that result must not be reused as if it had read it
    (a finding hidden), whether the analysis read ``low.py`` itself or adopted a summary that
    another analysis in the process computed without it."""
    root = _cross_file_repo(tmp_path / "repo")
    shas = _shas(root)
    planned_low = (root / "pkg" / "low.py").read_text()
    planned = {"path": "pkg/second.py", "sha256": shas["pkg/second.py"]}
    (root / "pkg" / "low.py").write_text("def run(text):\n    return text\n")  # changed during the scan
    _fresh()
    alone = detect_file(root, "pkg/second.py", readable=shas).to_json()
    _fresh()
    detect_file(root, "pkg/first.py", readable=shas)
    after = detect_file(root, "pkg/second.py", readable=shas).to_json()
    (root / "pkg" / "low.py").write_text(planned_low)  # back at the planned content
    for result in (alone, after):
        assert not [c for c in result["candidates"] if c["path"] == "pkg/low.py"], "the flow was missed"
        assert result["depends"]["files"]["pkg/low.py"] == ""
        assert not still_holds(result, planned, shas, python_paths(shas))
    _fresh()
    assert [c for c in detect_file(root, "pkg/second.py", readable=shas).candidates if c.path == "pkg/low.py"]


def test_a_run_where_a_worker_was_caught_adds_nothing_to_the_shared_cache(tmp_path: Path) -> None:
    """Its ledger offers none of its results (a worker that may have been taken over recorded
    them); once the run is resumed and finished, filling the shared cache must not pass them
    on to other workspaces either."""
    from types import SimpleNamespace

    from fleetledger.ledger import NewRecord, open_storage
    from fleetledger.result_cache import ResultCache
    from fleetledger.run.reusing import ReuseMixin

    def done(run: str) -> NewRecord:
        return NewRecord(run_id=run, actor="w01", kind="step.done", key="detect-0001/detect:a.py@" + "1" * 16,
                         task="detect-0001", payload={"name": "detect:a.py", "input_hash": "1" * 16,
                                                      "result": {"v": run}, "reuse": {"salt": "s", "inputs": "1" * 64,
                                                                                     "key": "ab" * 32}})

    with open_storage(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as storage:
        for run in ("scan-a", "scan-b"):
            storage.append([NewRecord(run_id=run, actor="coordinator", kind="run.started", key=run,
                                      payload={"job": {"kind": "scan"}, "sprints": ["detect"]}), done(run)], now_ms=1)
        storage.append([NewRecord(run_id="scan-a", actor="coordinator", kind="policy.denied", why="caught",
                                  payload={"action": "worker message", "target": "w01"})], now_ms=2)
        for run in ("scan-a", "scan-b"):
            filler = ReuseMixin()
            filler.options = SimpleNamespace(cache=str(tmp_path / f"cache-{run}"), reuse=True)  # type: ignore[attr-defined]
            filler.storage = storage  # type: ignore[attr-defined]
            filler.view = SimpleNamespace(run_id=run)  # type: ignore[attr-defined]
            filler._fill_cache()
    assert ResultCache(tmp_path / "cache-scan-a").offers("s", "detect:a.py") == []
    assert [o["result"] for o in ResultCache(tmp_path / "cache-scan-b").offers("s", "detect:a.py")] == [{"v": "scan-b"}]


@pytest.mark.slow
def test_a_finished_job_with_outside_effects_stays_finished_when_its_code_changed(tmp_path: Path) -> None:
    """Only a job that reruns cheaply and whose only effect is its reports (the scan) starts a
    new run when its code changed after it finished; the synthetic fleet delivers effects to a
    target that does not deduplicate, and a new run would deliver them all again (found by the
    chaos harness's code family)."""
    from fleetledger.jobs.synthetic import deliveries

    install, ws, target = installed_copy(tmp_path), tmp_path / "ws", tmp_path / "target"
    argv = cli_from(install, str(ws), "--tasks", "2", "--steps", "2", "--workers", "1", "--target", str(target),
                    module="fleetledger.jobs.synthetic")
    _run_ok(argv)
    delivered = deliveries(target)
    _append(install / "fleetledger" / "jobs" / "synthetic.py", "# the job's code changed after the run finished")
    again = _run_ok(argv)
    assert "already finished" in again.stdout + again.stderr, again.stdout + again.stderr
    assert deliveries(target) == delivered and sum(delivered.values()) == len(delivered) > 0
    assert len({r.run_id for r in records(ws)}) == 1


# -- tasks the coordinator settles itself --------------------------------------------------------

_FILLERS = BLOCK_MIN_FILES - 2  # with its __init__.py and views.py, a folder fills a detect task


def _two_folders(root: Path) -> Path:
    """A tree of two folders, each a detect task of its own (``plan.BLOCK_MIN_FILES`` files),
    each with a finding: a change in one leaves the other's tasks with every result reusable."""
    for folder in ("alpha", "beta"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
        for n in range(_FILLERS):
            (root / folder / f"m{n}.py").write_text(f"VALUE_{n} = {n}\n")
        (root / folder / "views.py").write_text(
            "import os\nfrom flask import request\n\n\ndef run():\n    os.system(request.args['c'])\n")
    return root


def _settled(ws: Path, run: str) -> set[str]:
    """The tasks of ``run`` the coordinator leased to itself."""
    return {r.task for r in records(ws) if r.run_id == run and r.kind == "task.assigned"
            and r.payload["worker"] == "coordinator"}


@pytest.mark.slow
def test_the_coordinator_settles_a_task_whose_every_result_still_holds_and_the_ledger_verifies(tmp_path: Path) -> None:
    """After a change in ``beta``, every task of ``alpha`` (its detect block, its candidates'
    investigate, triage and revalidate) has a reusable result for each step: the coordinator
    leases each to itself, records each step as reused with a pointer to the first run, and
    finishes it, with no worker; ``beta``'s detect task goes to a worker. The ledger verifies
    and the report is a fresh full scan's."""
    from fleetledger.ledger.records import canonical_json

    repo, ws = _two_folders(tmp_path / "repo"), tmp_path / "ws"
    _scan(repo, ws)
    first, _ = _last_run(ws)
    (repo / "beta" / "m3.py").write_text("VALUE_3 = 33\n")
    out = _scan(repo, ws)
    assert "1 file(s) changed (first: beta/m3.py)" in out
    second, steps = _last_run(ws)
    assert _new(steps) == {"brief", "detect:beta/m3.py"}, steps  # the brief's key holds the listing
    settled = _settled(ws, second)
    recs = [r for r in records(ws) if r.run_id == second]
    kinds = {r.task: r.payload["inputs"]["kind"] for r in recs if r.kind == "task.planned"}
    assert {kinds[t] for t in settled} == {"detect", "investigate", "triage", "revalidate"}, settled
    detect_alpha = next(t for t in settled if kinds[t] == "detect")
    alpha_steps = [r for r in recs if r.task == detect_alpha and r.kind == "step.done"]
    assert {r.payload["name"] for r in alpha_steps} == {f"detect:alpha/{n}" for n in
                                                        ["__init__.py", "views.py", *(f"m{i}.py" for i in range(_FILLERS))]}
    for r in recs:
        if r.task in settled and r.kind in ("step.done", "task.finished"):
            assert r.actor == "coordinator" and r.epoch == 1
        if r.task in settled and r.kind == "step.done":
            assert r.payload["reused"]["run"] == first and r.payload["reuse"]["key"]
            assert r.payload_json == canonical_json(r.payload), "a copy made from the stored text is canonical"
    assert not any(r.kind == "step.intent" and r.task in settled for r in recs)
    beta = {r.task for r in recs if r.kind == "step.done" and r.payload["name"] == "detect:beta/m3.py"}
    assert beta and not beta & settled, "the task with the changed file went to a worker"
    assert "coordinator" not in _status_workers(ws)
    verified = run_cli("verify", "--workspace", str(ws))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    _same_as_fresh(repo, ws, tmp_path / "fresh")


def _status_workers(ws: Path) -> dict[str, Any]:
    done = run_cli("status", "--workspace", str(ws), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)["workers"]


@pytest.mark.slow
@pytest.mark.parametrize("point", ["coordinator.after_settle_assign", "coordinator.after_settle"])
def test_a_crash_while_the_coordinator_settles_resumes_to_the_same_report(tmp_path: Path, point: str) -> None:
    """Killed after its leases to itself are committed (and before its steps are), or after a
    batch of settled tasks: the same command resumes the run, takes back the leases of the dead
    session, settles what is left, and reports what a fresh full scan reports; every settled
    step is recorded once and the ledger verifies."""
    repo, ws = _two_folders(tmp_path / "repo"), tmp_path / "ws"
    _scan(repo, ws)
    (repo / "beta" / "m3.py").write_text("VALUE_3 = 33\n")
    crashed = run_cli("scan", str(repo), "--workspace", str(ws), "--no-progress",
                      env={"FLEETLEDGER_FAULT": f"{point}:1:kill"})
    assert crashed.returncode == -9, crashed.stdout + crashed.stderr
    out = _scan(repo, ws)
    assert "resume after a crash" in out, out
    second, steps = _last_run(ws)
    recs = [r for r in records(ws) if r.run_id == second]
    if point == "coordinator.after_settle_assign":
        taken = {r.task for r in recs if r.kind == "lease.expired" and r.payload["worker"] == "coordinator"}
        assert taken, "the dead session's leases to itself were taken back"
    keys = [r.key for r in recs if r.kind == "step.done"]
    assert len(keys) == len(set(keys)) and _new(steps) <= {"brief", "detect:beta/m3.py"}
    verified = run_cli("verify", "--workspace", str(ws))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    _same_as_fresh(repo, ws, tmp_path / "fresh")


def test_the_coordinators_check_of_a_detect_result_reads_the_file_as_it_is_now(tmp_path: Path) -> None:
    """The coordinator keys a detect task as its worker does and checks an offered result
    against the files as they are now: a file changed since the run was planned is not covered
    by a reused result, nor is a file whose dependency changed."""
    from fleetledger.jobs.base import TaskSpec
    from fleetledger.jobs.scan.job import ScanJob
    from fleetledger.jobs.scan.step_inputs import detect_step

    root = _cross_file_repo(tmp_path / "repo")
    shas = _shas(root)
    _fresh()
    result = detect_file(root, "pkg/second.py", readable=shas).to_json()
    planned = {"path": "pkg/second.py", "sha256": shas["pkg/second.py"], "size_bytes": 1, "link": False}
    spec = TaskSpec(id="detect-0001", inputs={"kind": "detect", "files": [planned]})
    job = ScanJob(root, workspace=tmp_path / "ws", argv=[])
    context = {"root": str(root), "shas": shas, "readable": sorted(shas)}

    def known() -> Any:
        (step,) = job.known_steps([(spec, context)], run=None)[spec.id].steps  # type: ignore[arg-type]
        return step

    step = known()
    assert (step.name, step.inputs_hash) == detect_step(planned) and step.still_valid is not None
    assert step.still_valid(result)
    (root / "pkg" / "low.py").write_text(HELPER_SINK + "\n# changed after the plan\n")
    assert not known().still_valid(result), "a file its analysis read is no longer at its planned hash"
    (root / "pkg" / "low.py").write_text((root / "pkg" / "low.py").read_text().replace("\n# changed after the plan\n", ""))
    (root / "pkg" / "second.py").write_text("# changed\n")
    assert not known().still_valid(result), "the file itself is no longer at its planned hash"


@settings(max_examples=60, deadline=None)
@given(name=st.text(max_size=12), result=st.dictionaries(st.text(max_size=6), st.one_of(
    st.integers(), st.text(max_size=10), st.none(), st.lists(st.text(max_size=4), max_size=3),
    st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3)), max_size=5),
    reused=st.booleans(), extra=st.booleans())
def test_a_stored_results_text_is_cut_from_its_record_and_copied_unchanged(name: str, result: dict[str, Any],
                                                                             reused: bool, extra: bool) -> None:
    """``stored_step`` reads a stored ``step.done`` without decoding its result, and a reused
    copy's text made from the stored one (``reused_payload_text``: a computed result's, or a
    copy's) is what encoding its payload gives, whatever the step's name and result hold
    (quotes, escapes, keys named like the payload's); a payload of another layout is decoded
    instead."""
    from fleetledger.ledger.records import canonical_json
    from fleetledger.reuse import reused_from, stored_step
    from fleetledger.steps import reuse_claim, reused_payload, reused_payload_text

    claim = reuse_claim("a" * 64, name, "b" * 64)
    payload: dict[str, Any] = {"name": name, "input_hash": "b" * 16, "result": result, "reuse": claim}
    if reused:
        payload["reused"] = {"run": "scan-1", "seq": 7}
    if extra:
        payload["ret"] = {"reuse": claim}  # sorts between "result" and "reuse"
    text = canonical_json(payload)
    got = stored_step(text)
    assert got is not None
    got_name, key, salt, origin, result_text = got
    assert (got_name, key, salt, origin) == (name, claim["key"], "a" * 64, payload.get("reused"))
    assert reused_from(text) == payload.get("reused")
    if not extra:
        assert result_text == canonical_json(result)
        offer = {"key": claim["key"], "result": result, "from": payload.get("reused") or {"run": "scan-9", "seq": 11}}
        _, copy = reused_payload(name, "b" * 64, claim, offer)
        assert reused_payload_text(text, offer["from"]) == canonical_json(copy)


def test_a_file_hashed_while_planning_is_known_by_its_lstat_until_it_changes(tmp_path: Path) -> None:
    """``current_hashes`` takes the hash ``discover`` took when the file's ``lstat`` is the
    same and its last change was well before that look; a file written since, or changed just
    before the look (a write in the same clock tick leaves the times alone), is read again."""
    import os
    import time

    from fleetledger.jobs.scan.plan import Hashed, file_signature
    from fleetledger.jobs.scan.step_inputs import RECENT_NS, current_hashes

    (tmp_path / "a.py").write_text("A = 1\n")
    real = hashlib.sha256(b"A = 1\n").hexdigest()
    signature = file_signature(os.lstat(tmp_path / "a.py"))
    later = time.time_ns() + 2 * RECENT_NS
    assert current_hashes(tmp_path, {"a.py": Hashed(signature=signature, sha256="f" * 64, looked_ns=later)})("a.py") \
        == "f" * 64, "known by its lstat: not read"
    assert current_hashes(tmp_path, {"a.py": Hashed(signature=signature, sha256="f" * 64, looked_ns=time.time_ns())})(
        "a.py") == real, "changed just before the look: read again"
    (tmp_path / "a.py").write_text("A = 22\n")
    assert current_hashes(tmp_path, {"a.py": Hashed(signature=signature, sha256="f" * 64, looked_ns=later)})("a.py") \
        == hashlib.sha256(b"A = 22\n").hexdigest(), "written since: read again"
    (tmp_path / "a.py").unlink()
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    assert current_hashes(tmp_path, {"a.py": Hashed(signature=signature, sha256="f" * 64, looked_ns=later)})("a.py") == ""


def test_offers_read_each_result_once_however_many_runs_copied_it(tmp_path: Path) -> None:
    """A result reused run after run is stored once per run; the offers hold it once, with the
    pointer to where it was computed, and a result of another key is still offered."""
    from fleetledger.ledger import NewRecord, open_storage
    from fleetledger.ledger.records import canonical_json
    from fleetledger.reuse import Offers, _usual_key
    from fleetledger.steps import reuse_claim

    salt = "5" * 64
    claim = reuse_claim(salt, "detect:a.py", "6" * 64)
    other = reuse_claim(salt, "detect:a.py", "7" * 64)

    def done(run: str, reuse: dict[str, str], result: dict[str, Any], origin: dict[str, Any] | None) -> NewRecord:
        payload = {"name": "detect:a.py", "input_hash": reuse["inputs"][:16], "result": result, "reuse": reuse}
        if origin is not None:
            payload["reused"] = origin
        return NewRecord(run_id=run, actor="w01", kind="step.done", key=f"detect-0001/detect:a.py@{reuse['inputs'][:16]}",
                         task="detect-0001", payload=payload)

    with open_storage(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as storage:
        storage.append([done("scan-a", other, {"v": "other"}, None)], now_ms=1)
        storage.append([done("scan-b", claim, {"v": "first"}, None)], now_ms=1)
        for run in ("scan-c", "scan-d", "scan-e"):
            storage.append([done(run, claim, {"v": "first"}, {"run": "scan-b", "seq": 2})], now_ms=1)
        text = next(storage.kind_records("step.done")).payload_json
        offers = Offers(storage).offers(salt, ["detect:a.py"])["detect:a.py"]
    assert _usual_key(text) == claim["key"] and _usual_key(canonical_json({"a": 1})) != claim["key"]
    assert [(o["result"]["v"], o["from"]) for o in offers] == [("first", {"run": "scan-b", "seq": 2}),
                                                                ("other", {"run": "scan-a", "seq": 1})]
