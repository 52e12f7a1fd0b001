"""The scoring logic of bench/corpora.py: annotations, statement spans, families, matching and the
split. No corpus, no scan, no network."""

from __future__ import annotations

import ast
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from corpora_labels.expect import (Expectation, LabelError, app_expectations, parse_annotations,  # noqa: E402
                                   semgrep_expectations, split_of, statement_span)
from corpora_labels.families import accepts, family_of  # noqa: E402
from corpora_labels.score import Finding, bandit_findings, scan_findings, score  # noqa: E402

SEMGREP_TEST = '''\
import os
import subprocess


def run(request):
    cmd = request.args["cmd"]
    # ruleid: shell-true
    subprocess.call(
        cmd,
        shell=True,
    )
    # ok: shell-true
    subprocess.call(["ls", cmd])

    # todoruleid: shell-true, sql-format
    os.system("ls " + cmd)  # "# ruleid: in a string" is not an annotation
    x = "# ok: shell-true"
    # ok
    # todook: shell-true
    # ruleid: debug-mode
    subprocess.call("ls")
'''

SEMGREP_RULES = '''\
rules:
- id: shell-true
  message: shell=True with input
  metadata:
    cwe: ["CWE-78: Improper Neutralization of Special Elements used in an OS Command"]
- id: sql-format
  message: formatted SQL
  metadata:
    cwe: "CWE-89: SQL Injection"
- id: debug-mode
  message: debug mode
  metadata:
    cwe: ["CWE-489: Active Debug Code"]
'''


def test_annotations_name_the_next_code_line_and_skip_strings_and_bare_comments():
    found = [(a.mark, a.rule_ids, a.line, a.target) for a in parse_annotations(SEMGREP_TEST)]
    assert found == [
        ("ruleid", ("shell-true",), 7, 8),
        ("ok", ("shell-true",), 12, 13),
        ("todoruleid", ("shell-true", "sql-format"), 15, 16),
        ("todook", ("shell-true",), 19, 21),
        ("ruleid", ("debug-mode",), 20, 21),
    ]


def test_statement_span_covers_a_multiline_call_and_only_a_compound_header():
    tree = ast.parse(SEMGREP_TEST)
    assert statement_span(tree, 8) == (8, 11)
    assert statement_span(tree, 10) == (8, 11)
    assert statement_span(tree, 5) == (5, 5)  # the def line, not the whole function
    assert statement_span(tree, 18) == (18, 18)  # a comment: the line alone
    assert statement_span(None, 9) == (9, 9)  # a file that does not parse


def test_statement_span_of_a_decorated_def_includes_its_decorators():
    tree = ast.parse("@app.route('/x',\n    methods=['GET'])\ndef view():\n    return 1\n")
    assert statement_span(tree, 1) == (1, 3)
    assert statement_span(tree, 4) == (4, 4)


def test_semgrep_expectations_from_a_rule_folder(tmp_path):
    folder = tmp_path / "python" / "lang" / "security"
    folder.mkdir(parents=True)
    (folder / "shell.py").write_text(SEMGREP_TEST)
    (folder / "shell.yaml").write_text(SEMGREP_RULES)
    (folder / "shell.fixed.py").write_text(SEMGREP_TEST)  # autofix output: not a test file
    found, counts = semgrep_expectations(tmp_path)
    got = sorted((e.spans, e.family, e.vulnerable) for e in found)
    assert got == [
        (((8, 11),), "cmdi", True),
        (((13, 13),), "cmdi", False),
        (((16, 16),), "cmdi", True),
        (((16, 16),), "sqli", True),
        (((21, 21),), "cmdi", False),
    ]
    assert counts["annotations"] == 5 and counts["out_of_scope"] == 1 and counts["unknown_rule"] == 0
    assert {e.split for e in found} == {split_of("python/lang/security/shell.py")}


def test_a_positive_and_a_negative_of_one_family_on_one_statement_keep_the_positive(tmp_path):
    folder = tmp_path / "python"
    folder.mkdir()
    (folder / "r.yaml").write_text(SEMGREP_RULES.replace("sql-format", "other-shell").replace("CWE-89", "CWE-77"))
    (folder / "r.py").write_text("import os\n# ok: shell-true\n# ruleid: other-shell\nos.system(x)\n")
    found, _ = semgrep_expectations(tmp_path)
    assert [(e.family, e.vulnerable) for e in found] == [("cmdi", True)]


@pytest.mark.parametrize(("cwe", "text", "family"), [
    (89, "", "sqli"), (88, "", "cmdi"), (95, "", "code"), (96, "", "code"), (36, "", "path"), (80, "", "xss"),
    (1336, "", "ssti"), (776, "", "xxe"), (1004, "", "cookie"), (614, "", "cookie"), (1333, "", "regex"),
    (400, "A regular expression built from input (ReDoS)", "regex"), (400, "Call to requests without timeout", None),
    (916, "", "hash"), (327, "", "hash"), (338, "", "random"), (259, "", "creds"), (295, "", "tls"),
    (489, "", None), (None, "", None),
])
def test_families(cwe, text, family):
    assert family_of(cwe, text) == family


def test_code_injection_and_templates_accept_each_other_and_nothing_else_crosses():
    assert accepts("ssti") == accepts("code") == {"code", "ssti"}
    assert accepts("sqli") == {"sqli"}


def test_the_split_is_stable_and_halves_paths():
    # Pinned: a change of the rule would silently move files between tune and judge.
    assert split_of("python/flask/security/injection/tainted-sql-string.py") == "tune"  # sha256 ends in ...de
    assert split_of("Testcases_Insecure_Code/CWE-089/author_1.py") == "judge"  # sha256 ends in ...35
    sides = [split_of(f"python/rules/rule{n}.py") for n in range(400)]
    assert 160 < sides.count("tune") < 240


def _expectation(spans, family, vulnerable, path="a.py"):
    return Expectation(corpus="c", path=path, spans=spans, family=family, vulnerable=vulnerable, split="tune",
                       source="test")


def _finding(line, cwe, path="a.py"):
    return Finding(path=path, line=line, cwe=cwe, family=family_of(cwe), rule="R", message="m")


def test_matching_counts_tp_fn_fp_and_unlabelled():
    expectations = [
        _expectation(((8, 11),), "cmdi", True),    # hit on its last line: TP
        _expectation(((13, 13),), "cmdi", False),  # hit: FP
        _expectation(((16, 16),), "sqli", True),   # only a cmdi finding there: FN
        _expectation(((21, 21),), "xss", False),   # nothing: TN
        _expectation(((30, 30),), "ssti", True),   # a code-injection finding counts
    ]
    findings = [
        _finding(11, 78), _finding(11, 77), _finding(13, 78), _finding(16, 78), _finding(30, 94),
        _finding(40, 89), _finding(40, 89), _finding(41, 79),  # unlabelled: sqli (own family) once, xss
        _finding(42, 489),  # out of scope: ignored
        _finding(1, 89, path="elsewhere.py"),  # not a labelled file: ignored
    ]
    tallies = score(expectations, findings)
    got = {f: (t.tp, t.fn, t.fp, t.tn, t.unlabelled, t.unlabelled_own) for f, t in tallies.items()}
    assert got == {"cmdi": (1, 0, 1, 0, 0, 0), "sqli": (0, 1, 0, 0, 1, 1), "xss": (0, 0, 0, 1, 1, 1),
                   "ssti": (1, 0, 0, 0, 0, 0)}
    figures = tallies["cmdi"].figures()
    assert figures["recall"] == 1.0 and figures["precision"] == 0.5 and figures["f1"] == pytest.approx(2 / 3)
    assert tallies["sqli"].figures()["strict_precision"] == 0.0


def test_a_whole_file_expectation_takes_any_line():
    tallies = score([_expectation((), "deser", True)], [_finding(99, 502)])
    assert tallies["deser"].tp == 1


def test_reports_of_both_tools_are_read_into_corpus_relative_findings():
    scan = {"findings": [{"candidate": {"path": "x/a.py", "line": 3, "rule_id": "B602", "message": "shell"},
                          "revalidation": {"rationale": "r"}, "cwe": 78}]}
    bandit = {"results": [{"filename": "/c/python/x/a.py", "line_number": 3, "test_id": "B602",
                           "issue_cwe": {"id": 78}, "issue_text": "shell"}]}
    assert scan_findings(scan, "python") == bandit_findings(bandit, "/c/python", "python") == [
        Finding(path="python/x/a.py", line=3, cwe=78, family="cmdi", rule="B602", message="shell")]


def test_a_taint_finding_matches_at_its_source_and_steps_in_the_same_file_only():
    trace = {"traces": [{"source": {"path": "x/a.py", "line": 2}, "steps": [
        {"path": "x/a.py", "line": 4}, {"path": "x/b.py", "line": 5}], "sink": {"path": "x/a.py", "line": 6}}]}
    scan = {"findings": [{"candidate": {"path": "x/a.py", "line": 6, "rule_id": "FLT-sql", "message": "m",
                                        "trace": trace}, "cwe": 89}]}
    [found] = scan_findings(scan)
    assert found.lines == (6, 2, 4)
    at_step, at_other_file_line = _expectation(((4, 4),), "sqli", True), _expectation(((5, 5),), "sqli", True)
    tallies = score([at_step, at_other_file_line, _expectation(((3, 3),), "sqli", False)],
                    [replace(found, path="a.py")])
    assert (tallies["sqli"].tp, tallies["sqli"].fn, tallies["sqli"].fp) == (1, 1, 0)


def test_app_labels_are_checked_against_the_code(tmp_path):
    (tmp_path / "app.py").write_text("import os\nos.system(\n    cmd)\n")
    label = {"file": "app.py", "line": 2, "cwe": 78, "vulnerable": True, "code": "os.system(", "note": "doc"}
    labels = tmp_path / "app.json"
    labels.write_text(json.dumps({"split": "judge", "labels": [label]}))
    [found] = app_expectations("app", tmp_path, labels)
    assert (found.spans, found.family, found.split) == (((2, 3),), "cmdi", "judge")
    labels.write_text(json.dumps({"split": "judge", "labels": [{**label, "code": "subprocess"}]}))
    with pytest.raises(LabelError, match="does not contain"):
        app_expectations("app", tmp_path, labels)
    labels.write_text(json.dumps({"split": "judge", "labels": [{**label, "cwe": 489}]}))
    with pytest.raises(LabelError, match="in no family"):
        app_expectations("app", tmp_path, labels)


@pytest.mark.parametrize("name", ["pygoat", "vulpy", "dvpwa", "dvga"])
def test_shipped_label_files_are_well_formed(name):
    document = json.loads((Path(__file__).resolve().parent.parent / "bench" / "corpora_labels" / f"{name}.json")
                          .read_text())
    assert document["split"] == ("tune" if name == "pygoat" else "judge") and len(document["commit"]) == 40
    for label in document["labels"]:
        assert family_of(label["cwe"], "regex") is not None
        assert label["code"] and label["note"].strip() and isinstance(label["vulnerable"], bool)
        assert any(k in label for k in ("line", "lines", "first_line"))
