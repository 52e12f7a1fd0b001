"""Policy, repository rules and the gate, as data and tables (case 06 is in test_policy_resume.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetledger import errors
from fleetledger.gate import Action, Gate
from fleetledger.policy import Policy

TARGET = Path("/src/repo")
WORKSPACE = Path("/work/.run")


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_load_reads_every_key_and_hash_changes_with_content(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.toml", '[policy]\ntools = ["bandit"]\negress = ["api.example.com:443"]\n'
                                       'max_model_calls = 7\napproval_required = ["ticket"]\n')
    policy = Policy.load(path)
    assert policy.tools == ("bandit",) and policy.egress == ("api.example.com:443",)
    assert policy.max_model_calls == 7 and policy.approval_required == ("ticket",) and policy.source == str(path)
    assert policy.hash != Policy().hash
    assert Policy.load(None) == Policy()


@pytest.mark.parametrize("body, message", [
    ("[policy]\ntoolz = []\n", "unknown keys ['toolz']"),
    ("[policy]\ntools = \"bandit\"\n", "tools must be a list of strings"),
    ("[policy]\nmax_model_calls = -1\n", "max_model_calls must be a non-negative integer"),
    ("[policy\n", "cannot read"),
    # Regressions from trying to break it: a key above the header was silently dropped (an
    # approval requirement vanished), and an infinite budget crashed every start.
    ('approval_required = ["export"]\n[policy]\ntools = ["bandit"]\n', "approval_required outside [policy]"),
    ("[policy]\nmax_cost_usd = inf\n", "max_cost_usd must be a non-negative number"),
])
def test_bad_policy_files_get_clear_errors(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(errors.PolicyError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Policy.load(_write(tmp_path / "p.toml", body))


def test_repository_rules_only_narrow(tmp_path: Path) -> None:
    rules = _write(tmp_path / ".fleetledger.toml", '[rules]\nexclude = ["vendor/**"]\nmax_model_calls = 5\n'
                                                   'tools = ["bandit", "curl"]\negress = ["evil.example:443"]\n'
                                                   'write = ["/**"]\nlet_me_in = true\n')
    narrowed = Policy(max_model_calls=10).narrowed_by(rules)
    assert narrowed.exclude == ("vendor/**",) and narrowed.max_model_calls == 5
    assert narrowed.tools == ("bandit",), "tools the policy does not allow are not added"
    assert narrowed.egress == () and narrowed.write == ("$WORKSPACE/**",)
    refused = " | ".join(narrowed.refused_rules)
    for key in ("egress", "write", "let_me_in", "tools ['curl']"):
        assert key in refused
    assert narrowed.hash != Policy(max_model_calls=10).hash


def test_repository_cannot_raise_a_budget(tmp_path: Path) -> None:
    rules = _write(tmp_path / ".fleetledger.toml", "[rules]\nmax_model_calls = 1000\n")
    narrowed = Policy(max_model_calls=10).narrowed_by(rules)
    assert narrowed.max_model_calls == 10 and "raise the budget" in narrowed.refused_rules[0]


def test_unreadable_or_linked_rules_are_not_trusted(tmp_path: Path) -> None:
    broken = _write(tmp_path / ".fleetledger.toml", "[rules\n")
    assert "ignored" in Policy().narrowed_by(broken).refused_rules[0]
    outside = _write(tmp_path / "outside.toml", '[rules]\nexclude = ["**"]\n')
    linked = tmp_path / "repo"
    linked.mkdir()
    (linked / ".fleetledger.toml").symlink_to(outside)
    assert Policy().narrowed_by(linked / ".fleetledger.toml") == Policy()
    assert Policy().narrowed_by(tmp_path / "missing.toml") == Policy()


POLICY = Policy(exclude=("vendor/**",), egress=("api.example.com:443",), approval_required=("ticket",))
GATE_TABLE = [
    ("tool", "bandit", True), ("tool", "curl", False),
    ("model", "offline", True), ("model", "openai:gpt-4o", False),
    ("read", "/src/repo/app/views.py", True), ("read", "/src/repo", True),
    ("read", "/src/repo/vendor/lib.py", False), ("read", "/etc/passwd", False), ("read", "/src/repository/x.py", False),
    ("write", "/work/.run/findings.sarif", True), ("write", "/src/repo/app/views.py", False),
    ("egress", "api.example.com:443", True), ("egress", "api.example.com:80", False), ("egress", "127.0.0.1:22", False),
    ("effect", "export", True), ("effect", "ticket", False), ("teleport", "x", False),
]


@pytest.mark.parametrize("kind, target, allowed", GATE_TABLE)
def test_gate_table(kind: str, target: str, allowed: bool) -> None:
    decision = Gate(POLICY, target=TARGET, workspace=WORKSPACE).check(Action(kind=kind, target=target))
    assert decision.allowed is allowed, decision.rule
    assert decision.rule


@pytest.mark.parametrize("body, refused", [
    ("[rules]\nmax_cost_usd = inf\n", "max_cost_usd = inf refused: a budget is a non-negative finite number"),
    ('[rules]\nexclude = ["a/**"]\n[policy]\negress = ["x.example:443"]\n', "policy outside [rules]; put every key under [rules]"),
])
def test_repository_rules_with_a_bad_budget_or_a_stray_table_are_refused(tmp_path: Path, body: str,
                                                                         refused: str) -> None:
    """Regressions: an infinite budget in a repository's rules crashed every start (the policy
    hash is JSON); a ``[policy]`` table beside ``[rules]`` was dropped without a word."""
    narrowed = Policy(max_cost_usd=5.0).narrowed_by(_write(tmp_path / ".fleetledger.toml", body))
    assert refused in " | ".join(narrowed.refused_rules)
    assert narrowed.max_cost_usd == 5.0 and narrowed.egress == () and narrowed.exclude == ()
    assert narrowed.hash  # hashing works


def test_a_target_whose_name_has_glob_characters_matches_itself() -> None:
    """Regression: ``$TARGET`` was pasted into the glob unescaped, so every read of a folder
    called ``proj[1]`` was denied (and the scan looked clean)."""
    gate = Gate(Policy(), target=Path("/src/proj[1]"), workspace=WORKSPACE)
    assert gate.check(Action(kind="read", target="/src/proj[1]/app.py")).allowed
    assert not gate.check(Action(kind="read", target="/src/proj1/app.py")).allowed


def test_the_users_policy_decides_whether_a_repository_may_exclude_source_files(tmp_path: Path) -> None:
    """Issue 13 item 7: ``exclude = ["**"]`` in a repository's rules was accepted as narrowing,
    and the scan reported 0 findings without a word."""
    rules = _write(tmp_path / ".fleetledger.toml", '[rules]\nexclude = ["**"]\nrepository_may_exclude = true\n')
    strict = Policy().narrowed_by(rules)
    assert strict.exclude == ("**",) and strict.repository_may_exclude is False
    refused = " | ".join(strict.refused_rules)
    assert "exclude ['**'] refused for the files the job analyses" in refused
    assert "repository_may_exclude refused: only the user's policy may set it" in refused
    allowing = Policy.load(_write(tmp_path / "p.toml", "[policy]\nrepository_may_exclude = true\n"))
    assert allowing.repository_may_exclude and allowing.hash != Policy().hash
    assert not any(r.startswith("exclude") for r in allowing.narrowed_by(rules).refused_rules)
    with pytest.raises(errors.PolicyError, match="repository_may_exclude must be true or false"):
        Policy.load(_write(tmp_path / "bad.toml", '[policy]\nrepository_may_exclude = "yes"\n'))


EXCLUDE_TABLE = [  # (the policy's repository_may_exclude, path read, allowed)
    (False, "/src/repo/vendor/lib.py", True),       # a source file: the repository may not hide it
    (False, "/src/repo/vendor/page.html", True),    # a template the taint engine reads: the same
    (False, "/src/repo/vendor/README.md", False),   # not analysed: the rule still keeps it from the workers
    (False, "/src/repo/app/views.py", True),
    (True, "/src/repo/vendor/lib.py", False),
    (True, "/src/repo/vendor/page.html", False),
    (True, "/src/repo/vendor/README.md", False),
    (True, "/src/repo/app/views.py", True),
]


@pytest.mark.parametrize("may_exclude, target, allowed", EXCLUDE_TABLE)
def test_gate_applies_a_repository_exclude_to_analysed_files_only_when_the_policy_allows(
        tmp_path: Path, may_exclude: bool, target: str, allowed: bool) -> None:
    from fleetledger.jobs.scan.job import ScanJob

    job = ScanJob(tmp_path, workspace=tmp_path / ".run", argv=[])
    policy = Policy(exclude=("vendor/**",), repository_may_exclude=may_exclude)
    decision = Gate(policy, target=TARGET, workspace=WORKSPACE, analysed=job.analyses).check(Action(kind="read", target=target))
    assert decision.allowed is allowed, decision.rule
    assert decision.rule == ("repository rule exclude 'vendor/**'" if not allowed else "policy.read '$TARGET/**'")
