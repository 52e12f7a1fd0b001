"""Triage: severities ordered by impact, reach and doubt; one-sentence reasons."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from fleetledger.jobs.scan.detect import detect_file
from fleetledger.jobs.scan.shapes import SEVERITIES, Candidate, ModelAnswer, ModelRequest, survives
from fleetledger.jobs.scan.triage import triage
from fleetledger.models.offline import OfflineAnalyst


def _candidate(rule_id: str = "B602", cwe: int | None = 78, severity: str = "HIGH") -> Candidate:
    return Candidate(id="0" * 16, path="app/views.py", line=3, col=4, end_line=3, rule_id=rule_id,
                     rule_name="subprocess_popen_with_shell_equals_true", detector="bandit", cwe=cwe,
                     detector_severity=severity, detector_confidence="HIGH", message="flagged", snippet="x")


def _answer(verdict: str = "vulnerable", cwe: int | None = 78, **signals: Any) -> ModelAnswer:
    return ModelAnswer(verdict=verdict, confidence=8, cwe=cwe, rationale="r", signals=signals)  # type: ignore[arg-type]


def _rank(severity: str) -> int:
    return SEVERITIES.index(severity)


def test_request_data_command_injection_is_critical() -> None:
    severity, reason = triage(_candidate(), _answer(source="request", channel="http"))
    assert severity == "critical"
    assert reason.startswith("Command injection (CWE-78) is fed by web requests")


def test_constant_only_issue_in_test_code_is_info() -> None:
    severity, reason = triage(_candidate(), _answer(verdict="not_vulnerable", source="constant", in_test=True))
    assert severity == "info"
    assert triage(_candidate(), _answer(source="constant", in_test=True))[0] == "info"
    assert "test code" in triage(_candidate(), _answer(source="constant", in_test=True))[1]


@pytest.mark.parametrize("cwe", [78, 89, 94, 95, 502, 22])
def test_reach_orders_injection_severities(cwe: int) -> None:
    """Web request >= network >= parameter (its callers may pass either) >= command line (the
    tool's own local user, usually) >= environment/unknown >= constant."""
    ladder = [
        {"source": "request", "channel": "http"},
        {"source": "request", "channel": "network"},
        {"source": "parameter"},
        {"source": "request", "channel": "cli"},
        {"source": "unknown"},
        {"source": "constant"},
    ]
    ranks = [_rank(triage(_candidate(cwe=cwe), _answer(cwe=cwe, **signals))[0]) for signals in ladder]
    assert ranks == sorted(ranks)
    assert ranks[0] <= _rank("high") and ranks[-1] >= _rank("medium")


def test_doubt_lowers_one_band() -> None:
    sure = triage(_candidate(), _answer(source="parameter"))[0]
    unsure = triage(_candidate(), _answer(verdict="uncertain", source="parameter"))[0]
    assert _rank(unsure) == _rank(sure) + 1


def test_cleared_and_dead_candidates_are_info() -> None:
    assert triage(_candidate(), _answer(verdict="not_vulnerable", source="request"))[0] == "info"
    assert triage(_candidate(), _answer(source="request", dead_code=True))[0] == "info"


def test_answers_without_signals_still_get_a_severity() -> None:
    """A paid model may answer without signals: impact lowered one band for the unknown reach."""
    severity, reason = triage(_candidate(), _answer())
    assert severity == "high" and reason.endswith(".")
    severity, _ = triage(_candidate(rule_id="B999", cwe=None, severity="MEDIUM"), _answer(cwe=None))
    assert severity == "medium"


def test_assert_and_hash_severities_follow_what_they_guard() -> None:
    authz = triage(_candidate("B101", 703), _answer(cwe=703, guards="authorization"))[0]
    invariant = triage(_candidate("B101", 703), _answer(verdict="uncertain", cwe=703, guards="argument-check"))[0]
    assert authz == "high" and _rank(invariant) > _rank(authz)
    password = triage(_candidate("B324", 327), _answer(cwe=328, purpose="security"))[0]
    unclear = triage(_candidate("B324", 327), _answer(verdict="uncertain", cwe=328, purpose="unknown"))[0]
    assert password == "medium" and _rank(unclear) > _rank(password)


@pytest.mark.parametrize("signals", [{}, {"source": "request", "channel": "http"}, {"source": "parameter"},
                                     {"in_test": True}, {"guards": "authorization"}])
def test_reason_is_one_sentence(signals: dict[str, Any]) -> None:
    for cwe in (78, 89, 259, 295, 328, 703, None):
        _, reason = triage(_candidate(cwe=cwe), _answer(cwe=cwe, **signals))
        assert reason.endswith(".") and reason.count(". ") == 0 and "\n" not in reason


def test_pipeline_severities_on_real_code(tmp_path: Path) -> None:
    """From detect through the offline analyst to triage, on one file."""
    source = textwrap.dedent('''
        import logging.config, os, subprocess
        from flask import Flask, request
        app = Flask(__name__)

        @app.route("/ping")
        def ping():
            os.system("ping -c1 " + request.args["host"])

        def archive(path):
            subprocess.call("tar czf out.tgz " + path, shell=True)

        def perm(user, obj):
            assert user.is_admin
            obj.delete()

        def logs():
            return logging.config.listen(9030)
    ''').lstrip()
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "views.py").write_text(source)
    analyst = OfflineAnalyst()
    severities = {}
    kept = set()
    for candidate in detect_file(tmp_path, "app/views.py").candidates:
        first = analyst.analyze(ModelRequest(candidate=candidate, source=source, brief=""))
        second = analyst.analyze(ModelRequest(candidate=candidate, source=source, brief="", pass_name="revalidate",
                                              prior=first.to_json()))
        severities[(candidate.line, candidate.rule_id)] = triage(candidate, second)[0]
        if survives(first) and survives(second):
            kept.add((candidate.line, candidate.rule_id))
    # The taint engine's candidates, each with the bandit rule it folded in.
    assert severities[(7, "FLT-command")] == "critical"  # request data (B605)
    # archive() is public: its callers decide what `path` holds (B602); kept, one band for the
    # reach and one for the doubt.
    assert severities[(10, "FLT-command")] == "medium"
    assert (13, "B101") not in kept  # an assert on an object's state: bandit's own low rating, dropped
    # Nothing judges logging.config.listen (it evaluates what a peer sends): bandit rates it
    # MEDIUM severity, HIGH confidence, and that keeps it as uncertain.
    assert (17, "B612") in kept
    assert severities[(1, "B404")] == "info"


@pytest.mark.parametrize("text, kept", [
    ('SHORT_DATE_FORMAT = "Y/n/j\u060c\u200f G:i"\n', False),  # a right-to-left mark in a date format
    ('access = "user"  # \u202e \u2066check admin\u2069 \u2066\n', True),  # an override and isolates
])
def test_bidi_characters_are_kept_only_where_they_can_reorder_code(tmp_path: Path, text: str, kept: bool) -> None:
    """bandit's B613 flags every bidirectional control character; only the explicit ones
    (embeddings, overrides, isolates) make code read differently from how it runs."""
    (tmp_path / "formats.py").write_text(text, encoding="utf-8")
    [candidate] = [c for c in detect_file(tmp_path, "formats.py").candidates if c.rule_id == "B613"]
    analyst = OfflineAnalyst()
    first = analyst.analyze(ModelRequest(candidate=candidate, source=text, brief=""))
    second = analyst.analyze(ModelRequest(candidate=candidate, source=text, brief="", pass_name="revalidate",
                                          prior=first.to_json()))
    assert (survives(first) and survives(second)) is kept


@pytest.mark.parametrize("cwe", [78, 89, 94, 502])
def test_library_parameter_is_rated_below_an_application_parameter(cwe: int) -> None:
    """A parameter of code whose file shows no entry point is medium when sure, low when uncertain."""
    app = triage(_candidate(cwe=cwe), _answer(cwe=cwe, source="parameter"))[0]
    library = triage(_candidate(cwe=cwe), _answer(cwe=cwe, source="parameter", reach="library"))
    kept = triage(_candidate(cwe=cwe), _answer(verdict="uncertain", cwe=cwe, source="parameter", reach="library"))[0]
    assert (app, library[0], kept) == ("high", "medium", "low")
    assert "no entry point for outside data" in library[1]
    assert triage(_candidate(cwe=cwe), _answer(cwe=cwe, source="request", channel="http", reach="library"))[0] == "critical"


def test_local_file_sits_between_the_network_and_the_environment() -> None:
    ranks = [_rank(triage(_candidate(cwe=502), _answer(cwe=502, source="request", channel=channel))[0])
             for channel in ("http", "local", "env")]
    assert ranks == sorted(ranks) and ranks[0] < ranks[1] < ranks[2]
    assert "a file any local user can write" in triage(_candidate(cwe=502), _answer(cwe=502, source="request", channel="local"))[1]


def test_families_of_the_new_checks() -> None:
    """Cross-site scripting, fail-open checks, predictable secrets and XML entities have their own impact."""
    xss = triage(_candidate("B308", 79, "MEDIUM"), _answer(cwe=79, source="request", channel="http"))
    assert xss[0] == "medium" and xss[1].startswith("Cross-site scripting (CWE-79) is fed by web requests")
    assert triage(_candidate("B703", 80, "MEDIUM"), _answer(verdict="uncertain", cwe=79, source="parameter", reach="library"))[0] == "low"
    assert triage(_candidate("B110", 703, "LOW"), _answer(cwe=636, fails_open=True))[0] == "high"
    assert triage(_candidate("B311", 330, "LOW"), _answer(cwe=338, purpose="security"))[0] == "medium"
    assert triage(_candidate("B311", 330, "LOW"), _answer(verdict="not_vulnerable", cwe=338, purpose="other"))[0] == "info"
    assert triage(_candidate("B320", 20, "MEDIUM"), _answer(cwe=611, source="request", channel="http"))[0] == "high"
    assert triage(_candidate("B319", 20, "MEDIUM"), _answer(cwe=776, source="request", channel="http"))[0] == "medium"


def test_real_world_false_positives_end_at_info_or_low(tmp_path: Path) -> None:
    """Shapes from the Django scan: the first pass dismisses them, or keeps them at low."""
    source = textwrap.dedent('''
        import pickle
        from django.utils.safestring import mark_safe

        INTERNAL_RESET_SESSION_TOKEN = "_password_reset_token"

        class Introspection:
            def describe(self, cursor, table_name):
                cursor.execute("SELECT * FROM %s LIMIT 1" % self.connection.ops.quote_name(table_name))

        class Serializer:
            def dumps(self, obj):
                return pickle.dumps(obj)

            def loads(self, data):
                return pickle.loads(data)

        def linebreaksbr(value):
            return mark_safe(value.replace("\\n", "<br>"))
    ''').lstrip()
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "backend.py").write_text(source)
    analyst = OfflineAnalyst()
    severities = {}
    for candidate in detect_file(tmp_path, "lib/backend.py").candidates:
        first = analyst.analyze(ModelRequest(candidate=candidate, source=source, brief=""))
        # Triage rates only what the first pass keeps; a dismissed candidate never gets a severity.
        severities[(candidate.line, candidate.rule_id)] = triage(candidate, first)[0] if survives(first) else "dismissed"
    assert severities[(4, "B105")] == "dismissed"  # the string is a key name, not a credential
    # Public functions of a library are its entry points (issue 12): a caller decides what reaches
    # the sink, so these are kept, as uncertain and below high.
    assert severities[(8, "FLT-sql")] in ("medium", "low")
    assert severities[(15, "FLT-deserialization")] == "medium"
    assert severities[(18, "FLT-xss")] == "low"
