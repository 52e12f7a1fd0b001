"""Bandit driven on detect's tree (``bandit_runner.run_bandit``) raises the issues bandit's own
runner raises on the same file: leaving out the logging, ``# nosec`` look-ups and scores that
this scan never reads changes no check's result."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetledger.analysis import parser
from fleetledger.jobs.scan import bandit_runner, source
from fleetledger.jobs.scan.bandit_runner import b_config, b_manager

TESTS = Path(__file__).parent
FILES = sorted([*(TESTS / "data" / "taint").glob("*.py"), *(TESTS.parent / "fleetledger" / "demo_repo").rglob("*.py")])


def _issue(issue: object) -> tuple[object, ...]:
    return (issue.test_id, issue.lineno, issue.col_offset, tuple(issue.linerange),  # type: ignore[attr-defined]
            issue.severity, issue.confidence, issue.text)  # type: ignore[attr-defined]


def _bandits_own(path: Path) -> list[tuple[object, ...]]:
    manager = b_manager.BanditManager(b_config.BanditConfig(), "file")
    manager.discover_files([str(path)])
    manager.run_tests()
    if manager.skipped:
        pytest.skip(f"bandit's own runner cannot read it here: {manager.skipped}")
    return sorted(_issue(issue) for issue in manager.results)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_run_bandit_raises_the_issues_bandits_own_runner_raises(path: Path) -> None:
    data = path.read_bytes()
    decoded = source.decode_source(data)
    tester = bandit_runner.run_bandit(path, data, decoded, parser.parse_module(decoded.text).module)
    assert sorted(_issue(issue) for issue, _ in tester.found) == _bandits_own(path)


def test_the_comparison_covers_many_checks() -> None:
    """The files compared above raise issues of many of bandit's checks, so that a check whose
    context the runner builds wrongly shows there."""
    checks = set()
    for path in FILES:
        data = path.read_bytes()
        decoded = source.decode_source(data)
        tester = bandit_runner.run_bandit(path, data, decoded, parser.parse_module(decoded.text).module)
        checks.update(issue.test_id for issue, _ in tester.found)
    assert len(checks) >= 20, sorted(checks)


def test_a_file_with_type_ignore_comments_gets_bandits_checks(tmp_path: Path) -> None:
    """Regression: detect's tree keeps the file's type comments, and a ``# type: ignore`` comes
    as a ``TypeIgnore`` node that bandit's visitor failed on ("'TypeIgnore' object has no
    attribute 'end_lineno'"): no bandit check ran on any file with such a comment."""
    path = tmp_path / "typed.py"
    path.write_text("import os\n\n\ndef run(text):  # type: (str) -> None\n"
                    "    eval(text)  # type: ignore[arg-type]\n    os.system('ls ' + text)\n")
    data = path.read_bytes()
    decoded = source.decode_source(data)
    tree = parser.parse_module(decoded.text).module
    assert tree.type_ignores  # the case: the tree the engine reads lists the comment
    tester = bandit_runner.run_bandit(path, data, decoded, tree)
    found = sorted(_issue(issue) for issue, _ in tester.found)
    assert found == _bandits_own(path)
    assert {"B307", "B605"} <= {issue[0] for issue in found}


BIDI_FILES = {
    "utf8_comment.py": "x = 1  # \u202e evil\nprint(x)\n".encode(),
    "utf8_string.py": 'access = "user\u2067 # admin\u2069"\n'.encode(),
    "cp1255_mark.py": "# -*- coding: cp1255 -*-\nname = 'abc\u200f'\n".encode("cp1255"),
    "latin1_plain.py": "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1"),
    "ascii_plain.py": b"import os\nos.system('ls')\n",
}


@pytest.mark.parametrize("name", sorted(BIDI_FILES))
def test_trojan_source_check_gives_bandits_result_whether_or_not_it_is_skipped(tmp_path: Path, name: str) -> None:
    """B613 is not run on a file whose text, decoded as the check decodes it, holds none of its
    characters (``_PRECONDITIONS``); where one is there, in UTF-8 or in a code page that has it
    (cp1255's right-to-left mark), the check runs and raises bandit's issue."""
    path = tmp_path / name
    path.write_bytes(BIDI_FILES[name])
    data = path.read_bytes()
    decoded = source.decode_source(data)
    tester = bandit_runner.run_bandit(path, data, decoded, parser.parse_module(decoded.text).module)
    found = sorted(_issue(issue) for issue, _ in tester.found)
    assert found == _bandits_own(path)
    assert any(issue[0] == "B613" for issue in found) == ("plain" not in name)


def test_the_bidi_precondition_says_false_only_without_the_characters() -> None:
    import io

    def holds(data: bytes) -> bool:
        return bandit_runner._may_hold_bidi({"file_data": io.BytesIO(data)})

    assert not holds(b"x = 1\n")
    assert holds("x = '\u202a'\n".encode())
    assert holds(b"# coding: not-a-codec\nx = 1\n")  # the check would fail: let it, as bandit's own run
    assert holds(b"x = '\xff'\n")  # not UTF-8: the same


def test_a_check_that_writes_into_its_context_is_reported_as_failing_not_felt_by_the_next() -> None:
    """Every check of a node reads one read-only view of its context (bandit copies it for each
    check): a check that tried to change it fails, is listed among the check failures, and the
    checks after it read the context as it was."""

    class _Tests:
        def __init__(self, *checks: object) -> None:
            self.tests = {"Call": list(checks)}

        def get_tests(self, checktype: str) -> list[object]:
            return self.tests.get(checktype, [])

    def writes(context: object) -> None:
        context._context["lineno"] = 99  # type: ignore[attr-defined]

    seen: list[int] = []

    def reads(context: object) -> None:
        seen.append(context._context["lineno"])  # type: ignore[attr-defined]

    writes._test_id = "X001"  # type: ignore[attr-defined]
    reads._test_id = "X002"  # type: ignore[attr-defined]
    tester = bandit_runner.RecordingTester(_Tests(writes, reads), None)
    node = parser.parse_module("f()\n").module.body[0].value  # type: ignore[attr-defined]
    tester.run_tests({"lineno": 1, "node": node}, "Call")
    assert seen == [1]
    assert [line.split(" raised ")[0] for line in tester.error_lines()] == ["X001 writes"]
    assert tester.has_checks("Call") and not tester.has_checks("Name")
