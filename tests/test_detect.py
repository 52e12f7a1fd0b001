"""The detect step for one file (fleetledger.jobs.scan.detect).

One test per scenario of cases 04 (hostile repositories) and 08 (source files), with the
expected values the cases give, plus the bandit adapter's own contract.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fleetledger.jobs.scan import detect, source
from fleetledger.jobs.scan.detect import DetectLimits, detect_file
from fleetledger.jobs.scan.shapes import FileReport, candidate_id

NEWER = sys.version_info >= (3, 12)


def scan(root: Path, relpath: str, data: bytes, **limits: float) -> FileReport:
    """Writes ``data`` at ``root/relpath`` and runs detect_file on it."""
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return detect_file(root, relpath, limits=DetectLimits(**limits) if limits else None)


def found(report: FileReport) -> list[tuple[str, int, int | None]]:
    """The report's candidates as (rule id, line, CWE), sorted by line and rule; a taint engine
    candidate that other detectors' candidates were folded into stands for those (the
    detectors' contract is what most tests here check)."""
    out = []
    for c in report.candidates:
        folded = (c.trace or {}).get("also", [])
        out.extend((f["rule_id"], f["line"], f["cwe"]) for f in folded) if folded else out.append((c.rule_id, c.line, c.cwe))
    return sorted(out, key=lambda item: (item[1], item[0]))


def break_check(
    monkeypatch: pytest.MonkeyPatch, rule_id: str, replacement: Callable[..., object]
) -> None:
    """Replaces one bandit check, for this test only, by ``replacement``."""
    extension = detect.b_extensions.MANAGER.plugins_by_id[rule_id]
    monkeypatch.setattr(extension, "plugin", functools.wraps(extension.plugin)(replacement))


# --- a normal file ---------------------------------------------------------------------------

NORMAL = b"""\
import pickle
import subprocess


class Store:
    def load(self, blob):
        return pickle.loads(blob)

    def run(self, cmd):
        subprocess.Popen(cmd, shell=True)


def check(password="hunter2"):
    assert password
    return eval(password)
"""


def test_normal_file_gives_rule_ids_lines_cwes_and_scopes(tmp_path: Path) -> None:
    report = scan(tmp_path, "pkg/store.py", NORMAL)
    assert (report.status, report.reason, report.warnings) == ("scanned", None, ())
    assert report.internal_errors == ()
    assert found(report) == [
        ("B403", 1, 502),
        ("B404", 2, 78),
        ("B301", 7, 502),
        ("B602", 10, 78),
        ("B107", 13, 259),
        ("B101", 14, 703),
        ("B307", 15, 95),  # bandit files eval() under CWE-78 (OS command); it is CWE-95 (CWE_CORRECTIONS)
    ]
    by_rule = {c.rule_id: c for c in report.candidates}
    assert [by_rule[r].scope for r in ("B403", "FLT-deserialization", "FLT-command", "B107", "B101")] == [
        "<module>", "Store.load", "Store.run", "check", "check",
    ]
    # B602 reports the same weakness as the taint engine's candidate at that call: folded into it.
    command = by_rule["FLT-command"]
    (popen,) = command.trace["also"]
    assert (popen["rule_id"], popen["col"], popen["detector"], popen["cwe"]) == ("B602", 8, "bandit", 78)
    assert (command.line, command.col, command.end_line, command.detector) == (10, 8, 10, "fleetledger-taint")
    assert command.trace["traces"][0]["source"]["what"] == "parameter 'cmd' of the public function Store.run()"
    assert command.id == candidate_id("pkg/store.py", 10, 8, "FLT-command")
    assert by_rule["B107"].id == candidate_id("pkg/store.py", 13, 0, "B107")
    assert command.snippet == "    def run(self, cmd):\n        subprocess.Popen(cmd, shell=True)\n"
    assert by_rule["B403"].rule_name == "import_pickle"  # a blacklist entry is named, not "blacklist"
    assert report.size_bytes == len(NORMAL)
    assert report.sha256 == hashlib.sha256(NORMAL).hexdigest()
    assert FileReport.from_json(report.to_json()) == report


def test_a_call_split_over_lines_is_reported_where_the_call_starts(tmp_path: Path) -> None:
    # Bandit moves B602's line to the shell=True argument but keeps the call's column.
    data = b"import subprocess\nx = 1; subprocess.call(\n    cmd.line,\n    shell=True,\n)\n"
    report = scan(tmp_path, "m.py", data)
    popen = next(c for c in report.candidates if c.rule_id == "B602")
    assert (popen.line, popen.col, popen.end_line) == (2, 7, 5)


def test_decorators_and_defaults_belong_to_the_outer_scope(tmp_path: Path) -> None:
    data = b"""\
import os
class Outer:
    @register(os.system("a"))
    def method(self, x=os.system("b"), password="hunter2"):
        def inner():
            os.system("c")
"""
    report = scan(tmp_path, "m.py", data)
    assert [(c.rule_id, c.line, c.scope) for c in report.candidates if c.rule_id in ("B605", "B107")] == [
        ("B605", 3, "Outer"),
        ("B107", 4, "Outer.method"),  # a flagged def is in its own scope
        ("B605", 4, "Outer"),
        ("B605", 6, "Outer.method.inner"),
    ]


# --- 04 hostile repositories ------------------------------------------------------------------


def test_r1_undecodable_files_are_decoded_or_skipped_with_a_reason(tmp_path: Path) -> None:
    files = {
        "logo.py": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10",
        "legacy.py": b"# caf\xe9 au lait\nimport os\nos.system(x)\n",
        "wide.py": "import os\nos.system(x)\n".encode("utf-16"),
        "nul.py": b"import os\n\x00\n",
        "ok.py": b"import os\nos.system(x)\n",
    }
    reports = {name: scan(tmp_path, name, data) for name, data in files.items()}
    assert reports["logo.py"].reason == "binary content (PNG image)"
    assert reports["legacy.py"].warnings == ("line 1 is not valid UTF-8",)
    assert found(reports["legacy.py"]) == [("B605", 3, 78)]
    assert reports["wide.py"].reason == (
        "undecodable: UTF-16 byte order mark (Python reads source only in ASCII-compatible encodings)"
    )
    assert reports["nul.py"].reason == "NUL byte at line 2"
    assert found(reports["ok.py"]) == [("B605", 2, 78)]
    for report in reports.values():
        assert report.status == ("skipped" if report.reason else "scanned")
        assert report.status == "scanned" or report.candidates == ()


def test_r2_a_large_source_file_is_scanned_and_its_finding_appears(tmp_path: Path) -> None:
    head = b"import os\n\nos.system(input())\n"
    filler = b"".join(b"# generated row %07d: nothing to see here, just bulk\n" % i for i in range(22_000))
    report = scan(tmp_path, "big.py", head + filler)
    assert report.size_bytes > 1_200_000
    assert report.status == "scanned"
    assert found(report) == [("B605", 3, 78)]


def test_r2_a_20_mb_bundle_is_skipped_for_size(tmp_path: Path) -> None:
    report = scan(tmp_path, "bundle.py", b"var a=1;" * (20 * 1024 * 1024 // 8))
    assert (report.status, report.reason) == ("skipped", "exceeds size limit (20971520 bytes > 2097152)")
    assert report.size_bytes == 20 * 1024 * 1024
    assert report.sha256 == ""  # sized by fstat, never read or hashed (issue 13 item 6)


@pytest.mark.parametrize(
    "data",
    [
        b"#!/bin/sh\nset -e\nif [ -f x ]; then\n  rm -rf \"$1\"\nfi\n",
        b"import os\nprint 'hello'\nos.system(x)\n",
        b"{% for name in names %}\nimport os\nos.system({{ name }})\n{% endfor %}\n",
    ],
    ids=["shell", "python2", "jinja"],
)
def test_r3_files_named_py_that_are_not_python_are_parse_failures(tmp_path: Path, data: bytes) -> None:
    report = scan(tmp_path, "x.py", data)
    assert report.status == "skipped"
    assert report.reason is not None and report.reason.startswith("syntax error at line ")
    assert report.candidates == ()


# --- 08 source files -------------------------------------------------------------------------


def test_a1a_bytes_python_accepts_but_utf8_rejects(tmp_path: Path) -> None:
    report = scan(tmp_path, "a.py", b"# header\n# bad: \xc2.\nimport os\nos.system(input())\n")
    assert report.status == "scanned"
    assert found(report) == [("B605", 4, 78)]
    assert report.warnings == ("line 2 is not valid UTF-8",)
    assert report.candidates[0].snippet == "import os\nos.system(input())"
    assert report.internal_errors == ()


def test_a1b_nul_byte(tmp_path: Path) -> None:
    report = scan(tmp_path, "a.py", b"import os\nos.system(input())\x00\n")
    assert (report.status, report.reason, report.candidates) == ("skipped", "NUL byte at line 2", ())


def test_a2_coding_cookie(tmp_path: Path) -> None:
    data = '# -*- coding: latin-1 -*-\ngreeting = "café"\neval(input())\n'.encode("latin-1")
    assert b"caf\xe9" in data
    report = scan(tmp_path, "a.py", data)
    assert (report.status, report.warnings) == ("scanned", ())
    assert found(report) == [("B307", 3, 95)]
    assert "café" in report.candidates[0].snippet


@pytest.mark.parametrize(
    ("data", "line", "flagged"),
    [
        (b"\xef\xbb\xbfimport os\r\nos.system(x.y)\r\n", 2, "os.system(x.y)"),
        ("import os\n\x0c\n# note\u2028more\nos.system(cmd.line)\n".encode(), 4, "os.system(cmd.line)"),
        (b"import os\ros.system(x.y)\r", 2, "os.system(x.y)"),
    ],
    ids=["a3a-bom-crlf", "a3b-formfeed-u2028", "a3c-lone-cr"],
)
def test_a3_line_numbers_are_the_parsers(tmp_path: Path, data: bytes, line: int, flagged: str) -> None:
    # (``x.y``: a name read for an attribute is a module, not input the taint engine reports)
    report = scan(tmp_path, "a.py", data)
    (candidate,) = report.candidates
    assert (candidate.rule_id, candidate.line, candidate.end_line, candidate.col) == ("B605", line, line, 0)
    assert candidate.snippet.splitlines()[-1] == flagged


def test_a3d_form_feed_in_indentation_makes_a_module_level_call(tmp_path: Path) -> None:
    data = b"import os\ndef f():\n    if False:\n        x = 1\n        \x0cos.system(cmd)\n"
    report = scan(tmp_path, "a.py", data)
    (candidate,) = report.candidates
    assert (candidate.line, candidate.col, candidate.scope) == (5, 9, "<module>")
    assert candidate.snippet.endswith("        \x0cos.system(cmd)")


@pytest.mark.parametrize(
    "text",
    ["+" * 1000 + "1", "x = " + "+".join(["a"] * 5000), "[" * 1000 + "]" * 1000],
    ids=["unary-1000", "binop-5000", "brackets-1000"],
)
def test_a4_deep_nesting_is_skipped_without_raising_the_recursion_limit(
    tmp_path: Path, text: str
) -> None:
    limit = sys.getrecursionlimit()
    report = scan(tmp_path, "deep.py", text.encode())
    if report.status == "scanned":  # the parser built the tree: the taint engine walks it iteratively
        assert report.candidates == ()
        assert report.detectors_not_run == ("bandit: the file nests too deep for bandit's recursive visitor",)
    else:
        assert (report.status, report.reason, report.candidates) == ("skipped", "nesting too deep", ())
    assert sys.getrecursionlimit() == limit


A5 = b'''\
import subprocess
type Command = str
def first[T](items: list[T]) -> T:
    return items[0]
match {"k": "ls"}:
    case {"k": str()} as d if (n := len(d)) > 0:
        subprocess.call(f"{d["k"]}", shell=True)
'''


def test_a5_newer_syntax(tmp_path: Path) -> None:
    report = scan(tmp_path, "new.py", A5)
    # Issue 12 supersedes case 08's "skipped on 3.11": the version-independent parser reads the
    # file on any Python, and bandit visits that tree, so CWE-78 is at line 7 everywhere.
    assert report.status == "scanned" and report.detectors_not_run == ()
    assert ("B602", 7, 78) in found(report)
    assert report.parser == ("cpython" if NEWER else "tree-sitter")


def test_a5_one_check_that_raises_is_an_internal_error_and_the_others_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: object) -> None:
        raise RuntimeError("boom")

    break_check(monkeypatch, "B602", boom)
    data = b"import os, subprocess\nsubprocess.call(cmd.line, shell=True)\nos.system(cmd.line)\n"
    report = scan(tmp_path, "a.py", data)
    assert report.status == "scanned"
    assert found(report) == [("B404", 1, 78), ("B605", 3, 78)]
    assert report.internal_errors == (
        "B602 subprocess_popen_with_shell_equals_true raised RuntimeError: boom at line 2 (2 times)",
    )


@pytest.mark.parametrize(
    "text",
    [
        "x = frozenset({" + ", ".join(f"'item{i}'" for i in range(20_000)) + "})\n",
        "x = {" + ", ".join(f"'key{i}': {i}" for i in range(50_000)) + "}\n",
        "x = '" + "a" * 1_000_000 + "'\n",
    ],
    ids=["frozenset-20000", "dict-50000", "line-1MB"],
)
def test_p1_huge_literals_finish_or_are_skipped_with_a_reason(tmp_path: Path, text: str) -> None:
    # Bandit is quadratic on big dicts (about 10 s here for 50,000 keys): its counted budget
    # leaves it out of such a file, and the report says so (tests/test_budgets.py).
    report = scan(tmp_path, "data.py", text.encode())
    assert report.candidates == ()
    assert report.status == "scanned"
    assert all(note.startswith("bandit: not run: the file's estimated work") for note in report.detectors_not_run)


# --- limits, bandit plumbing --------------------------------------------------------------------


def test_detection_works_outside_the_main_thread_too(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"import os\nos.system(x)\n")
    reports: list[FileReport] = []
    worker = threading.Thread(target=lambda: reports.append(detect_file(tmp_path, "a.py")))
    worker.start()
    worker.join()
    assert [found(r) for r in reports] == [[("B605", 2, 78)]]


def test_d4_columns_are_characters(tmp_path: Path) -> None:
    report = scan(tmp_path, "a.py", 'x = "ééé"; eval(y)\n'.encode())
    (candidate,) = report.candidates
    assert (candidate.line, candidate.col) == (1, 11)  # SARIF startColumn 12


def test_whole_file_check_positions_are_the_parsers(tmp_path: Path) -> None:
    # B613 numbers lines with str.splitlines(), which counts \x0c and \u2028 as breaks.
    report = scan(tmp_path, "a.py", "import os\n\x0c\n# \u2028 x\ns = 'ab\u202ecd'\n".encode())
    (candidate,) = report.candidates
    assert (candidate.rule_id, candidate.line, candidate.col, candidate.scope) == ("B613", 4, 7, "<module>")


def test_long_snippets_are_cut(tmp_path: Path) -> None:
    report = scan(tmp_path, "a.py", b"eval(x + '" + b"a" * 5000 + b"')\n", max_snippet_chars=100)
    (candidate,) = report.candidates
    assert len(candidate.snippet) == 100 and candidate.snippet.endswith("…")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"# coding: klingon\nx = 1\n", "undecodable: bad coding cookie: unknown encoding: klingon"),
        # '\d' warns while parsing; were that warning an error, the reason would name line 1
        (b"x = '\\d'\nif x is 1: pass\n" + b"def f(:\n", "syntax error at line 3: invalid syntax"),
    ],
    ids=["unknown-cookie", "syntax-error-after-warnings"],
)
def test_other_skip_reasons(tmp_path: Path, data: bytes, reason: str) -> None:
    assert scan(tmp_path, "a.py", data).reason == reason


def test_paths_that_are_not_plain_files_inside_root_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "secret.py").write_bytes(b"import os\nos.system(x)\n")
    (root / "inside.py").write_bytes(b"x = 1\n")
    (root / "escape.py").symlink_to(tmp_path / "secret.py")
    (root / "alias.py").symlink_to(root / "inside.py")
    (root / "outdir").symlink_to(tmp_path)
    os.mkfifo(root / "pipe.py")
    (root / "dir.py").mkdir()
    assert {name: detect_file(root, name).reason for name in [
        "escape.py", "alias.py", "outdir/secret.py", "pipe.py", "dir.py", "missing.py",
    ]} == {
        "escape.py": "outside the scanned root",
        "alias.py": "symbolic link (not followed)",
        "outdir/secret.py": "outside the scanned root",
        "pipe.py": "not a regular file",
        "dir.py": "not a regular file",
        "missing.py": "unreadable: No such file or directory",
    }


def test_detect_file_writes_nothing(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": b"",
        "pkg/store.py": NORMAL,
        "pkg/bad.py": b"# \xff\nimport os\nos.system(x)\n",
        "pkg/py2.py": b"print 'x'\n",
        "pkg/nul.py": b"\x00",
        "logo.py": b"\x89PNG\r\n\x1a\n",
    }
    for relpath, data in files.items():
        (tmp_path / relpath).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relpath).write_bytes(data)

    def snapshot() -> dict[str, tuple[int, int]]:
        return {
            str(p.relative_to(tmp_path)): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in [tmp_path, *tmp_path.rglob("*")]
        }

    before = snapshot()
    reports = [detect_file(tmp_path, relpath) for relpath in files]
    assert snapshot() == before
    assert [r.status for r in reports] == ["scanned", "scanned", "scanned", "skipped", "skipped", "skipped"]


_FRAGMENTS = [
    b"import os\n", b"os.system(x)", b"def f(a='\xc3\xa9'):\n    ", b"class C:\n    ", b"eval(x)",
    b"\n", b"\r\n", b"\r", b"\x0c", b"\xe2\x80\xa8", b"\xe2\x80\xae", b"\xff", b"\x00", b"# ",
    b"'", b"f'{x}'", b"(", b"[", b"# coding: latin-1\n", b"\xef\xbb\xbf", b"type X = int\n", b"\t",
]


@settings(
    derandomize=True, database=None, deadline=None, max_examples=150,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.binary(max_size=3)), max_size=40).map(b"".join))
def test_any_bytes_give_a_report_never_an_exception(tmp_path: Path, data: bytes) -> None:
    report = scan(tmp_path, "any.py", data)
    if report.status == "skipped":
        assert report.reason and report.candidates == ()
        return
    lines = source.split_lines(source.decode_source(data).text)
    for candidate in report.candidates:
        assert 1 <= candidate.line <= candidate.end_line <= len(lines)
        assert 0 <= candidate.col <= len(lines[candidate.line - 1])
        assert lines[candidate.line - 1] in candidate.snippet


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="every limit must be positive"):
        DetectLimits(bandit_work_units=0)


# --- helpers of another module called without data -------------------------------------------

HELPERS = b"""\
import flask
import ldap3


def connection():
    return ldap3.Connection("ldap://directory")


def wanted():
    return flask.request.args["q"]


def fixed():
    return "uptime"


class Settings:
    def __init__(self):
        self.command = flask.request.args["c"]
"""

VIEW = b"""\
import os

from helpers import conn


def lookup():
    who = conn.wanted()
    conn.connection().search("ou=people", "(uid=" + who + ")")
    os.system(conn.fixed())
    os.system(conn.Settings().command)
"""


def test_a_helper_of_another_module_called_without_data_gives_what_it_returns(tmp_path: Path) -> None:
    # Found on the OWASP Benchmark for Python: a connection made by a helper module lost its
    # library type (the LDAP sink on it was never seen), and a helper returning request data
    # was a value of unknown origin; an attack found the same of an object whose __init__, in
    # another module, reads the request.
    files = {"helpers/__init__.py": b"", "helpers/conn.py": HELPERS, "views.py": VIEW}
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    readable = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    report = detect_file(tmp_path, "views.py", readable=readable)
    taint = [(c.rule_id, c.line) for c in report.candidates if c.detector == "fleetledger-taint"]
    assert taint == [("FLT-ldap", 8), ("FLT-command", 10)]


def test_a_weak_random_number_bandit_does_not_list_is_a_candidate_when_it_escapes(tmp_path: Path) -> None:
    # Found on the OWASP Benchmark for Python: random.normalvariate() stored where the engine
    # does not follow gave no candidate at all (bandit's B311 does not list it), while the
    # same code with random.random() was kept as uncertain through B311.
    report = scan(tmp_path, "remember.py", b"""\
import random

TOKENS = {}


def remember(user):
    TOKENS[user] = str(random.normalvariate(0, 1))
    keep(random.random())
""")
    rows = [(c.rule_id, c.line, c.cwe, c.scope) for c in report.candidates]
    assert ("FLT-random", 7, 330, "remember") in rows
    assert ("B311", 8, 330, "remember") in rows
    assert not any(rule == "FLT-random" and line == 8 for rule, line, _, _ in rows), "one candidate per random number"
    escaped = next(c for c in report.candidates if c.rule_id == "FLT-random")
    assert escaped.evidence["state"] == "unknown"


def test_a_pure_library_function_of_constants_gives_a_constant_built_value(tmp_path: Path) -> None:
    # Found on the OWASP Benchmark for Python: pickle.loads(base64.urlsafe_b64decode(CONST))
    # was "of unknown origin" (base64's result was opaque), so the analyst kept B301 as uncertain.
    report = scan(tmp_path, "load.py", b"""\
import base64
import pickle


def load(blob):
    fixed = pickle.loads(base64.urlsafe_b64decode("gASVBQAAAAAAAACMAWGULg=="))
    return fixed, pickle.loads(base64.urlsafe_b64decode(blob))
""")
    states = {c.line: (c.evidence or {}).get("state") for c in report.candidates if c.rule_id == "B301"}
    assert states[6] == "constant"
    assert states.get(7) != "constant" and 7 in {c.line for c in report.candidates}


def test_a_detector_at_a_sink_a_safe_switch_guards_is_judged_by_the_switch(tmp_path: Path) -> None:
    """Django's ``join`` filter: ``mark_safe`` of data escaped unless a caller passes
    ``autoescape=False``. bandit's B308 there was judged by the plain summary's evidence (a
    parameter reaches it: callers decide); with the switch as it is, the data arrives escaped."""
    report = scan(tmp_path, "filters.py", b"""\
from django.utils.html import conditional_escape
from django.utils.safestring import mark_safe


def join(value, arg, autoescape=True):
    if autoescape:
        data = conditional_escape(arg).join([conditional_escape(v) for v in value])
    else:
        data = arg.join(value)
    return mark_safe(data)


def shown(value):
    return mark_safe(value)
""")
    states = {c.line: (c.evidence or {}).get("state") for c in report.candidates if c.rule_id == "B308"}
    assert states[10] == "sanitised"
    flagged = {c.line for c in report.candidates if c.rule_id.startswith("FLT")}
    assert 10 not in flagged and 14 in flagged


def test_the_loader_reads_the_plan_in_place_and_never_loads_the_analysed_file(tmp_path: Path) -> None:
    """Regression: every analysed file copied the plan's whole path -> hash map twice and
    built a third (``hashes``): work growing with the square of the repository's files. The
    loader now reads the worker's one map in place, and leaves the analysed file out itself."""
    from fleetledger.jobs.scan.modules import RepositoryModules

    (tmp_path / "pkg").mkdir()
    for name in ("pkg/__init__.py", "pkg/a.py", "pkg/b.py"):
        (tmp_path / name).write_text("X = 1\n")
    readable = {name: hashlib.sha256(b"X = 1\n").hexdigest() for name in ("pkg/b.py", "pkg/a.py", "pkg/__init__.py", "README")}
    before = dict(readable)
    loader = RepositoryModules(tmp_path, readable, 1 << 20, own="pkg/a.py")
    assert loader.readable is readable
    assert loader.paths() == ["pkg/__init__.py", "pkg/b.py"]
    assert loader("pkg/a.py") is None and loader("pkg/b.py") is not None
    assert loader.hashes(["pkg/b.py", "elsewhere.py"]) == {"pkg/b.py": readable["pkg/b.py"]}
    report = detect_file(tmp_path, "pkg/a.py", readable=readable)
    assert report.status == "scanned" and readable == before
