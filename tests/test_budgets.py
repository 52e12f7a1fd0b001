"""Issue 13, item 6: a hostile file must not make the analysis run for hours or flood the
ledger. Every bound here is counted, never timed: the same file gives the same report on a
slow machine and a fast one (replay and resume depend on it), and no budget is enforced from a
signal handler (raising from one inside the parser or bandit corrupted the interpreter)."""

from __future__ import annotations

import ast
import signal
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from fleetledger.analysis import engine, parser
from fleetledger.jobs.scan import detect, investigate, tasks
from fleetledger.jobs.scan.detect import DetectLimits, detect_file

SINKS = 2000


def flask_view_with_sinks(sinks: int = SINKS) -> str:
    """A Flask view that sends one request value to ``os.system`` ``sinks`` times."""
    return textwrap.dedent("""\
        import os
        from flask import Flask, request

        app = Flask(__name__)


        @app.route("/run")
        def run():
            x = request.args["cmd"]
        """) + "    os.system(x)\n" * sinks + "    return 'ok'\n"


def test_two_thousand_sinks_of_one_request_value_give_at_most_the_cap_and_say_so(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(flask_view_with_sinks())
    report = detect_file(tmp_path, "app.py")
    assert report.status == "scanned"
    assert len(report.candidates) == detect.MAX_CANDIDATES_PER_FILE
    # The engine's flows from the request are kept first; bandit's B605 at the same calls are
    # folded into them, and the dropped remainder is counted in the report.
    assert {c.rule_id for c in report.candidates} == {"FLT-command"}
    assert [c.line for c in report.candidates] == sorted(c.line for c in report.candidates)
    dropped = [note for note in report.not_analysed if "candidate(s) not reported" in note]
    assert dropped == [f"app.py: {SINKS - detect.MAX_CANDIDATES_PER_FILE} more candidate(s) not reported (at most "
                       f"{detect.MAX_CANDIDATES_PER_FILE} per file, flows from outside data first, then by the "
                       "detector's severity and confidence)"]


def test_the_cap_keeps_the_same_candidates_whatever_the_order_they_were_found_in(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(flask_view_with_sinks())
    first = detect_file(tmp_path, "app.py")
    second = detect_file(tmp_path, "app.py")
    assert first == second


def test_under_the_cap_nothing_is_dropped_or_reported(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(flask_view_with_sinks(3))
    report = detect_file(tmp_path, "app.py")
    assert len(report.candidates) == 3
    assert not [note for note in report.not_analysed if "candidate(s) not reported" in note]


def test_the_taint_engine_stops_by_counting_steps_and_reports_the_cut() -> None:
    tree = parser.parse_module(flask_view_with_sinks()).module
    analysis = engine.analyse("app.py", tree, work_units=500)
    assert analysis.work_units_used == 500  # the counter stopped at the budget
    assert "app.py: analysis stopped at the work budget (500 units); the functions after that point were not " \
           "analysed" in analysis.not_analysed
    again = engine.analyse("app.py", tree, work_units=500)
    assert again == analysis  # counted, not timed: the same cut on any machine


def test_a_budget_the_analysis_stays_under_is_not_reported() -> None:
    tree = parser.parse_module(flask_view_with_sinks()).module
    analysis = engine.analyse("app.py", tree)
    assert 0 < analysis.work_units_used < engine.WORK_UNITS
    assert not [note for note in analysis.not_analysed if "work budget" in note]


def test_bandit_on_a_huge_dict_is_bounded_by_counting_and_reported(tmp_path: Path) -> None:
    # Bandit's B105 scans a dict's keys once per string key: 50,000 keys took about 10 s.
    (tmp_path / "data.py").write_text("x = {" + ", ".join(f"'key{i}': {i}" for i in range(50_000)) + "}\n")
    report = detect_file(tmp_path, "data.py")
    assert report.status == "scanned" and report.candidates == ()
    (note,) = report.detectors_not_run
    assert note.startswith("bandit: not run: the file's estimated work for bandit (")
    assert note.endswith(f" units) is over its budget of {detect.BANDIT_WORK_UNITS} (a dict literal with 50000 keys); "
                         "the other detectors ran")


def test_bandit_work_estimate_counts_nodes_and_dict_keys() -> None:
    small = parser.parse_module("x = {'a': 1, 'b': 2}\n").module
    nodes = sum(1 for _ in ast.walk(small))
    assert detect.bandit_work(small) == (nodes * detect.BANDIT_NODE_UNITS + 2 * 2,  # 2 strings x 2 keys
                                         f"{nodes} syntax nodes")


def test_an_ordinary_file_at_the_size_limit_is_within_bandits_budget() -> None:
    body = "".join(f"def f{n}(a, b):\n    return {{'k': a, 'v': b + {n}}}\n\n" for n in range(40_000))
    assert len(body) > detect.MAX_SOURCE_BYTES
    units, _ = detect.bandit_work(parser.parse_module(body).module)
    assert units < detect.BANDIT_WORK_UNITS


def test_detect_and_judge_never_arm_a_signal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget enforced by raising from a SIGALRM handler inside the parser or bandit
    corrupted the interpreter (``SystemError: AST constructor recursion depth mismatch``)."""
    def refusing(original: Callable[..., object]) -> Callable[..., object]:
        def refuse(*args: object) -> object:
            # Only the code under test is refused: pytest-timeout arms and cancels its own
            # timer around the test, and a refusal there ended the whole session when this
            # test failed (INTERNALERROR) instead of reporting the failure.
            if sys._getframe(1).f_globals.get("__name__", "").startswith(("fleetledger", "bandit")):
                raise AssertionError("a signal was armed")
            return original(*args)
        return refuse

    for name in ("signal", "setitimer", "alarm"):
        monkeypatch.setattr(signal, name, refusing(getattr(signal, name)))
    (tmp_path / "app.py").write_text(flask_view_with_sinks(3))
    report = detect_file(tmp_path, "app.py", limits=DetectLimits())
    assert report.status == "scanned" and len(report.candidates) == 3
    from fleetledger.jobs.scan.shapes import ModelRequest

    provider = investigate.local_provider("offline")
    answer = provider.call(ModelRequest(candidate=report.candidates[0], source=flask_view_with_sinks(3), brief="")).answer
    assert answer.verdict == "vulnerable"
    assert not any(hasattr(m, "within_time_budget") for m in (tasks, investigate, detect))
