"""Stable fingerprints and suppression comments, taken in the worker (issue 16 items 3 and 4).

The detect step records on each candidate the hash of its normalised code context and the
``# nosec`` / ``# noqa`` comment on its lines; the export builds ``partialFingerprints`` from the
first. Edits that do not touch the finding (lines added above, re-indentation, whitespace) keep
the fingerprints; identical lines stay distinct.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleetledger.jobs.scan import fingerprints, nosec, sarif
from fleetledger.jobs.scan.detect import detect_file
from fleetledger.jobs.scan.shapes import Candidate, FileReport

from test_export import finding, report, run_of

VULNERABLE = '''# The shop's runner.
import subprocess


def run(cmd):
    subprocess.call(cmd, shell=True)
    return eval(cmd)
'''


def detect(tmp_path: Path, text: str | bytes, name: str = "app.py") -> list[Candidate]:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    found = detect_file(tmp_path, name)
    assert found.status == "scanned", found.reason
    return list(found.candidates)


def prints(candidates: list[Candidate]) -> dict[str, dict[str, str]]:
    """rule id -> the result's partialFingerprints, through the real SARIF export."""
    run = run_of(sarif.to_sarif(report([finding(c) for c in candidates])))
    return {r["ruleId"]: r["partialFingerprints"] for r in run["results"]}


def test_lines_added_above_and_whitespace_changes_keep_the_fingerprints(tmp_path: Path) -> None:
    """Lines added above (not next to) each finding, re-indented and re-spaced code: the
    context hash covers one line either side, so only edits there change it."""
    (tmp_path / "a").mkdir()
    before = detect(tmp_path / "a", VULNERABLE)
    edited = ('"""A docstring added above."""\n# and a comment\n\n' + VULNERABLE
              .replace("subprocess.call(cmd, shell=True)", "subprocess.call( cmd,shell = True )")
              .replace("    return eval(cmd)", "    return   eval(cmd)\t"))
    (tmp_path / "b").mkdir()
    after = detect(tmp_path / "b", edited)
    assert {c.rule_id for c in before} == {c.rule_id for c in after} and len(before) >= 2
    assert {c.id for c in before}.isdisjoint({c.id for c in after})  # ids still follow lines (the ledger's keys)
    assert prints(before) == prints(after)
    for fp in prints(after).values():
        assert set(fp) == {"primaryLocationLineHash", "fleetledgerFingerprint/v1"}
        assert fp["primaryLocationLineHash"].endswith(":1")


def test_identical_lines_stay_distinct(tmp_path: Path) -> None:
    twice = "import os\n\n\ndef f(cmd):\n    os.system(cmd)\n    os.system(cmd)\n    os.system(cmd)\n"
    found = [c for c in detect(tmp_path, twice) if c.line >= 5]
    hashes = [c.context_hash for c in found]
    assert len(found) == 3 and len(set(hashes)) == 3
    # the middle line has different neighbours; the first and the last have the same context
    # up to a blank line, and ":N" numbers identical contexts in line order
    run = run_of(sarif.to_sarif(report([finding(c) for c in found])))
    assert len({json.dumps(r["partialFingerprints"], sort_keys=True) for r in run["results"]}) == 3


def test_the_occurrence_counts_lines_not_flagged_candidates() -> None:
    lines = ["x = 1", "eval(a)", "x = 1", "eval(a)", "x = 1", "eval(a)", "x = 1"]
    # Lines 2, 4 and 6 have the same context: their suffixes are :1, :2 and :3 whichever is asked for.
    assert fingerprints.context_hashes(lines, {6})[6].endswith(":3")
    every = fingerprints.context_hashes(lines, {2, 4, 6})
    assert [every[n].split(":")[1] for n in (2, 4, 6)] == ["1", "2", "3"]
    assert len({every[n].split(":")[0] for n in (2, 4, 6)}) == 1
    assert fingerprints.context_hashes(lines, {0, 99}) == {}


def test_a_trace_is_part_of_the_fingerprint_but_not_its_lines() -> None:
    hop = {"path": "a.py", "line": 3, "col": 1, "what": "request.args"}
    sink = {"path": "a.py", "line": 9, "col": 1, "what": "os.system()"}
    trace = {"traces": [{"source": hop, "steps": [], "sink": sink}]}
    moved = {"traces": [{"source": {**hop, "line": 30}, "steps": [], "sink": {**sink, "line": 90}}]}
    other = {"traces": [{"source": {**hop, "what": "request.form"}, "steps": [], "sink": sink}]}
    fp = fingerprints.fingerprint("FLT-command", "a.py", "abc:1", trace)
    assert fp == fingerprints.fingerprint("FLT-command", "a.py", "abc:1", moved)
    assert fp != fingerprints.fingerprint("FLT-command", "a.py", "abc:1", other)
    assert fp != fingerprints.fingerprint("FLT-command", "b.py", "abc:1", trace)
    assert fp != fingerprints.fingerprint("FLT-sql", "a.py", "abc:1", trace)


def test_a_candidate_recorded_before_the_fields_existed_still_loads_and_exports(tmp_path: Path) -> None:
    [c, *_] = detect(tmp_path, VULNERABLE)
    old = c.to_json()
    old.pop("context_hash"), old.pop("suppression", None)
    loaded = FileReport.from_json({"path": "app.py", "sha256": "0" * 64, "size_bytes": 1, "status": "scanned",
                                   "candidates": [old]}).candidates[0]
    assert loaded.context_hash is None and loaded.suppression is None
    fp = prints([loaded])[loaded.rule_id]
    assert fp["primaryLocationLineHash"].endswith(":1") and len(fp["fleetledgerFingerprint/v1"]) == 32
    assert "context_hash" not in loaded.to_json()  # the recorded form is kept as it was


def test_hostile_files_give_bounded_context_hashes(tmp_path: Path) -> None:
    huge = "import os\nos.system(x)  # " + "A" * 1_000_000 + "\n"
    [c] = [c for c in detect(tmp_path, huge, "huge.py") if c.line == 2]
    assert len(c.context_hash.split(":")[0]) == 16 and len(json.dumps(c.to_json())) < 20_000
    latin = "# -*- coding: latin-1 -*-\nimport os\nos.system('caf\xe9')  # nosec\n".encode("latin-1")
    found = [c for c in detect(tmp_path, latin, "latin.py") if c.line == 3]
    assert found and all(c.context_hash and c.suppression == {"kind": "nosec", "rules": [], "comment": "# nosec",
                                                              "line": 3} for c in found)


# Suppression comments: recorded in the worker, whether or not honoured.

@pytest.mark.parametrize("comment, expected", [
    ("# nosec", ("nosec", [])),
    ("#nosec", ("nosec", [])),
    ("# nosec B602, B607", ("nosec", ["B602", "B607"])),
    ("# nosec: B602 B607", ("nosec", ["B602", "B607"])),
    ("# nosec because the input is checked", ("nosec", [])),
    ("# noqa: B602", ("noqa", ["B602"])),
    ("# noqa: S602,E501", ("noqa", ["B602"])),
    ("# NOQA:S603", ("noqa", ["B603"])),
    ("# noqa", None),  # names no rule: silences linters, not a claim about security
    ("# noqa: E501", None),
    ("# the nosecure flag", None),
    ("# see issue nosec-42", None),  # bandit's pattern: "nosec" right after a "#"
    ("# reviewed # nosec B602", ("nosec", ["B602"])),
])
def test_comment_syntax(comment: str, expected: tuple[str, list[str]] | None) -> None:
    parsed = nosec.parse(comment)
    assert (None if parsed is None else (parsed["kind"], parsed["rules"])) == expected


def test_only_real_comments_count_and_every_comment_is_recorded(tmp_path: Path) -> None:
    text = ("import subprocess\n\n\ndef run(cmd):\n"
            "    subprocess.call(cmd, shell=True)  # nosec B602\n"
            "    x = '# nosec'; subprocess.call(cmd, shell=True)\n"
            '    subprocess.call(cmd, """\n# nosec\n""", shell=True)\n'
            "    subprocess.call(cmd, shell=True)  # noqa: S602\n"
            "    eval(cmd)  # nosec B602\n")
    by_line = {c.line: c for c in detect(tmp_path, text)}
    assert by_line[5].suppression == {"kind": "nosec", "rules": ["B602"], "comment": "# nosec B602", "line": 5}
    assert by_line[6].suppression is None  # "# nosec" in a string is not a comment
    assert by_line[7].suppression is None  # nor inside a multi-line string
    assert by_line[10].suppression["kind"] == "noqa"
    assert nosec.applies(by_line[5]) and nosec.applies(by_line[10])
    assert by_line[11].suppression is not None and not nosec.applies(by_line[11])  # names another rule


def test_a_huge_comment_is_cut() -> None:
    parsed = nosec.parse("# nosec " + "x" * 10_000)
    assert parsed is not None and len(parsed["comment"]) == nosec.MAX_COMMENT_CHARS

