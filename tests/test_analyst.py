"""The offline analyst: verdicts per weakness, the cases of 09-findings.md, robustness, revalidation.

Candidates come from the real detect step (bandit through its Python API) on files written to
a temporary root, so lines, columns and rule ids are the ones the pipeline sees. The sink line
of each snippet ends with the marker comment ``# sink``.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetledger.jobs.scan.detect import detect_file
from fleetledger.jobs.scan.shapes import survives
from fleetledger.jobs.scan.shapes import Candidate, ModelAnswer, ModelRequest, candidate_id
from fleetledger.jobs.scan.triage import triage
from fleetledger.models.offline import OfflineAnalyst

ANALYST = OfflineAnalyst()


def _write(root: Path, relpath: str, source: str) -> str:
    text = textwrap.dedent(source).lstrip("\n")
    target = root / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return text


def _sink_line(text: str) -> int:
    lines = [i for i, line in enumerate(text.splitlines(), start=1) if line.rstrip().endswith("# sink")]
    assert len(lines) == 1, "mark exactly one line with '# sink'"
    return lines[0]


def _judged(root: Path, relpath: str, source: str, family: frozenset[str]) -> list[tuple[Candidate, ModelAnswer, ModelAnswer]]:
    """Detects, investigates and revalidates the candidates of ``family`` on the sink line."""
    text = _write(root, relpath, source)
    line = _sink_line(text)
    report = detect_file(root, relpath)
    found = [c for c in report.candidates if c.line == line and c.rule_id in family]
    assert found, f"bandit flags nothing of {sorted(family)} on line {line}: {[(c.line, c.rule_id) for c in report.candidates]}"
    judged = []
    for candidate in found:
        first = ANALYST.analyze(ModelRequest(candidate=candidate, source=text, brief=""))
        second = ANALYST.analyze(ModelRequest(candidate=candidate, source=text, brief="", pass_name="revalidate",
                                              prior=first.to_json()))
        judged.append((candidate, first, second))
    return judged


def _kept(judged: list[tuple[Candidate, ModelAnswer, ModelAnswer]]) -> bool:
    """True when some candidate survives both passes (the pipeline's rule)."""
    return any(survives(first) and survives(second) for _, first, second in judged)


COMMAND = frozenset({"B602", "B603", "B604", "B605", "B606", "B607"})
SQL = frozenset({"B608", "B610", "B611"})
CODE = frozenset({"B102", "B307"})
DATA = frozenset({"B301", "B302", "B506"})
SECRETS = frozenset({"B105", "B106", "B107"})
TLS = frozenset({"B501", "B323"})
HASH = frozenset({"B303", "B324"})
ARCHIVE = frozenset({"B202"})
ASSERT = frozenset({"B101"})

FLASK = """
import os, pickle, subprocess, shlex, tarfile, hashlib, yaml, requests
from flask import Flask, request
app = Flask(__name__)
"""

# (id, family, expected cwe, kept after both passes, source)
CASES = [
    ("cmd-request-shell", COMMAND, 78, True, FLASK + """
@app.route("/ping")
def ping():
    subprocess.run("ping -c1 " + request.args["host"], shell=True)  # sink
"""),
    ("cmd-quoted", COMMAND, 78, False, FLASK + """
@app.route("/ping")
def ping():
    subprocess.run("ping -c1 " + shlex.quote(request.args["host"]), shell=True)  # sink
"""),
    ("cmd-input", COMMAND, 78, True, """
import os
os.system(input())  # sink
"""),
    ("cmd-constant", COMMAND, 78, False, """
import os
os.system("uptime")  # sink
"""),
    ("cmd-allowlist", COMMAND, 78, False, FLASK + """
ACTIONS = {"start", "stop"}
@app.post("/svc")
def svc():
    action = request.form["action"]
    if action not in ACTIONS:
        return "no", 400
    os.system("systemctl " + action + " app")  # sink
"""),
    ("sql-request-fstring", SQL, 89, True, FLASK + """
@app.route("/u")
def user(cur):
    cur.execute(f"SELECT * FROM users WHERE name = '{request.args['n']}'")  # sink
"""),
    ("sql-int-cast", SQL, 89, False, FLASK + """
@app.route("/u")
def user(cur):
    cur.execute("SELECT * FROM users WHERE id = %d" % int(request.args["id"]))  # sink
"""),
    ("sql-log-only", SQL, 89, False, """
import logging
log = logging.getLogger(__name__)
def fail(item):
    log.error("delete from queue failed: %s" % item)  # sink
"""),
    ("eval-request", CODE, 95, True, FLASK + """
@app.route("/calc")
def calc():
    return str(eval(request.args["q"]))  # sink
"""),
    ("eval-constant", CODE, 95, False, """
LIMITS = eval("{'cpu': 2}")  # sink
"""),
    ("exec-request", CODE, 94, True, FLASK + """
@app.post("/run")
def run():
    exec(request.form["code"], {"__builtins__": {}})  # sink
"""),
    ("pickle-request", DATA, 502, True, FLASK + """
@app.post("/state")
def state():
    return pickle.loads(request.get_data())  # sink
"""),
    ("pickle-roundtrip", DATA, 502, False, """
import pickle
def clone(obj):
    return pickle.loads(pickle.dumps(obj))  # sink
"""),
    ("pickle-hmac", DATA, 502, False, FLASK + """
import hmac
@app.post("/state")
def state():
    blob = request.get_data()
    if not hmac.compare_digest(request.headers["X-Sig"], hmac.new(b"k", blob, "sha256").hexdigest()):
        return "", 403
    return pickle.loads(blob)  # sink
"""),
    ("yaml-request", DATA, 502, True, FLASK + """
@app.post("/cfg")
def cfg():
    return yaml.load(request.data)  # sink
"""),
    ("secret-literal", SECRETS, 259, True, """
DATABASE_PASSWORD = "Sup3r-S3cret-2024!"  # sink
"""),
    ("secret-field-name", SECRETS, 259, False, """
PASSWORD_FIELD = "password"  # sink
"""),
    ("secret-token-type", SECRETS, 798, False, """
token_type = "bearer"  # sink
"""),
    ("tls-remote", TLS, 295, True, """
import requests
requests.get("https://api.example.com/v1", verify=False, timeout=5)  # sink
"""),
    ("tls-loopback", TLS, 295, False, """
import requests
requests.get("https://127.0.0.1:8443/health", verify=False, timeout=5)  # sink
"""),
    ("hash-password", HASH, 328, True, """
import hashlib
def hash_password(password):
    return hashlib.md5(password.encode()).hexdigest()  # sink
"""),
    ("hash-cache-key", HASH, 328, False, """
import hashlib
def cache_key(url):
    return hashlib.md5(url.encode()).hexdigest()  # sink
"""),
    ("tar-upload", ARCHIVE, 22, True, FLASK + """
@app.post("/bundle")
def bundle():
    tarfile.open(fileobj=request.files["b"].stream).extractall("/srv/b")  # sink
"""),
    ("tar-filter", ARCHIVE, 22, False, FLASK + """
@app.post("/bundle")
def bundle():
    tarfile.open(fileobj=request.files["b"].stream).extractall("/srv/b", filter="tar")  # sink
"""),
    ("assert-invariant", ASSERT, 703, False, """
def total(lines):
    value = sum(line.amount for line in lines)
    assert isinstance(value, int)  # sink
    return value
"""),
]


@pytest.mark.parametrize(("family", "cwe", "kept", "source"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_verdicts_per_weakness(tmp_path: Path, family: frozenset[str], cwe: int, kept: bool, source: str) -> None:
    judged = _judged(tmp_path, "app/views.py", source, family)
    assert _kept(judged) is kept, [first.rationale for _, first, _ in judged]
    if kept:
        assert any(first.verdict == "vulnerable" and first.cwe == cwe for _, first, _ in judged)
    else:
        assert all(not survives(first) or not survives(second) for _, first, second in judged)


def test_b1_fixed_argument_lists_are_not_command_injection(tmp_path: Path) -> None:
    """09-findings B1: a fixed argument list and shlex.split of a constant."""
    for source in (
        """
        import subprocess
        subprocess.check_output(["/usr/bin/git", "rev-parse", "HEAD"])  # sink
        """,
        """
        import shlex, subprocess
        subprocess.run(shlex.split("git status --short"), check=True)  # sink
        """,
    ):
        judged = _judged(tmp_path, "app/vcs.py", source, COMMAND)
        assert not _kept(judged)
        assert all(first.verdict == "not_vulnerable" for _, first, _ in judged), [f.rationale for _, f, _ in judged]


def test_b3_assert_in_tests_is_nothing(tmp_path: Path) -> None:
    """09-findings B3, first half: ``assert 1 + 1 == 2`` in tests/test_math.py gives nothing."""
    judged = _judged(tmp_path, "tests/test_math.py", """
        def test_add():
            assert 1 + 1 == 2  # sink
        """, ASSERT)
    for _, first, second in judged:
        assert first.verdict == "not_vulnerable" and second.verdict == "not_vulnerable"
        assert first.signals["in_test"] is True


def test_b3_assert_guarding_delete_is_a_finding(tmp_path: Path) -> None:
    """09-findings B3, second half: ``assert user.is_admin`` before ``obj.delete()`` in app code."""
    judged = _judged(tmp_path, "app/perm.py", """
        def remove(user, obj):
            assert user.is_admin  # sink
            obj.delete()
        """, ASSERT)
    assert _kept(judged)
    (_, first, second), = judged
    assert first.verdict == "vulnerable" and first.cwe == 703
    assert "-O" in first.rationale and "obj.delete()" in first.rationale
    assert second.verdict == "vulnerable"


C1_SHAPES = [
    ("fstring-column", 'cur.execute(f"SELECT {col} FROM foo WHERE id = 1")  # sink'),
    ("fstring-table", 'cur.execute(f"INSERT INTO {table} VALUES (1)")  # sink'),
    ("triple-quoted", 'cur.execute(f"""  # sink\n        SELECT a\n        FROM {v}\n        WHERE b = 1""")'),
]


@pytest.mark.parametrize("call", [c[1] for c in C1_SHAPES], ids=[c[0] for c in C1_SHAPES])
def test_c1_sql_built_from_parameters(tmp_path: Path, call: str) -> None:
    """09-findings C1: CWE-89 at each call where col, table and v are parameters.

    The file has no entry point for outside data, so the parameters hold whatever callers
    elsewhere pass: the finding is kept (an interface that splices its argument into SQL) as
    uncertain, which triage rates low. With a route in the file it is vulnerable.
    (In the triple-quoted shape the marker is part of the SQL text; it changes nothing.)
    """
    judged = _judged(tmp_path, "app/queries.py", "def query(cur, col, table, v):\n    " + call + "\n", SQL)
    assert _kept(judged)
    assert all(first.cwe == 89 and first.verdict == "uncertain" and first.signals["reach"] == "library" for _, first, _ in judged)
    assert all(second.cwe == 89 and second.verdict == "uncertain" and "callers" in second.rationale for _, _, second in judged)
    assert all(triage(c, first)[0] == "low" for c, first, _ in judged)
    judged = _judged(tmp_path, "app/views.py", FLASK + "def query(cur, col, table, v):\n    " + call + "\n", SQL)
    assert all(first.verdict == "vulnerable" and second.verdict == "vulnerable" for _, first, second in judged)


def test_c1_concatenation_bandit_misses(tmp_path: Path) -> None:
    """09-findings C1, ``"SELECT a " + "FROM " + v``: bandit 1.9 does not flag it, so the candidate
    is built by hand at the first string, as a detector that did flag it would report it."""
    text = _write(tmp_path, "app/queries.py", """
        def query(cur, v):
            cur.execute("SELECT a " + "FROM " + v)
        """)
    candidate = _candidate("app/queries.py", text, '"SELECT a "', "B608", 89)
    first = ANALYST.analyze(ModelRequest(candidate=candidate, source=text, brief=""))
    second = ANALYST.analyze(ModelRequest(candidate=candidate, source=text, brief="", pass_name="revalidate", prior=first.to_json()))
    assert survives(first) and survives(second) and first.cwe == 89, first.rationale
    assert "parameter 'v'" in first.rationale


def test_c3_shell_hidden_in_argument_list(tmp_path: Path) -> None:
    """09-findings C3: ``["/bin/bash", "-c", "ls -l %s" % path]`` with shell=False is CWE-78."""
    judged = _judged(tmp_path, "app/files.py", """
        import subprocess
        def listing(path):
            return subprocess.check_output(["/bin/bash", "-c", "ls -l %s" % path], shell=False)  # sink
        """, COMMAND)
    assert _kept(judged)
    kept = [first for _, first, second in judged if survives(first) and survives(second)]
    assert kept and all(a.cwe == 78 for a in kept)
    assert "'-c'" in kept[0].rationale


def test_answers_are_deterministic_across_processes(tmp_path: Path) -> None:
    """Same request, same answer: again in this process, and in a process with another hash seed."""
    source = FLASK + """
@app.route("/x/<name>")
def view(name):
    cmd = "ls " + name
    if name in {"a", "b"}:
        cmd += " -l"
    subprocess.run(cmd + request.args.get("extra", ""), shell=True)  # sink
"""
    judged = _judged(tmp_path, "app/views.py", source, COMMAND)
    candidate, first, _ = judged[0]
    request = ModelRequest(candidate=candidate, source=(tmp_path / "app/views.py").read_text(), brief="")
    assert OfflineAnalyst().analyze(request).to_json() == first.to_json()
    script = ("import json, sys\nfrom fleetledger.jobs.scan.shapes import Candidate, ModelRequest\n"
              "from fleetledger.models.offline import OfflineAnalyst\n"
              "data = json.load(sys.stdin)\n"
              "answer = OfflineAnalyst().analyze(ModelRequest(candidate=Candidate.from_json(data['c']), source=data['s'], brief=''))\n"
              "print(json.dumps(answer.to_json(), sort_keys=True))\n")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    result = subprocess.run([sys.executable, "-c", script], input=json.dumps({"c": candidate.to_json(), "s": request.source}),
                            capture_output=True, text=True, env=env, check=True, timeout=60)
    assert json.loads(result.stdout) == json.loads(json.dumps(first.to_json(), sort_keys=True))


def _candidate(path: str, text: str, needle: str, rule_id: str, cwe: int) -> Candidate:
    """Builds the candidate a detector would report at the first occurrence of ``needle``."""
    line = next(i for i, row in enumerate(text.splitlines(), start=1) if needle in row)
    col = text.splitlines()[line - 1].index(needle)
    return Candidate(id=candidate_id(path, line, col, rule_id), path=path, line=line, col=col, end_line=line,
                     rule_id=rule_id, rule_name="rule", detector="bandit", cwe=cwe, detector_severity="HIGH",
                     detector_confidence="HIGH", message="flagged", snippet=text.splitlines()[line - 1])


DEEP_SOURCES = [
    ("long-concatenation", "import os\nx = " + " + ".join(['"-"'] * 1500) + "\ndef f(name):\n    os.system(x + name)\n",
     "os.system(", "B605", 78),
    ("nested-ifs", "import os\ndef f(name):\n" + "".join("    " * (i + 1) + "if name:\n" for i in range(90))
     + "    " * 91 + "os.system(name)\n", "os.system(", "B605", 78),
    ("not-chain", "def f(user, obj):\n    assert " + "not " * 900 + "user.is_admin\n    obj.delete()\n",
     "assert", "B101", 703),
    ("deep-unary", "import os\ndef f():\n    os.system(" + "-" * 1000 + "1)\n", "os.system(", "B605", 78),
]


@pytest.mark.parametrize(("source", "needle", "rule_id", "cwe"), [c[1:] for c in DEEP_SOURCES], ids=[c[0] for c in DEEP_SOURCES])
def test_deep_nesting_does_not_crash(source: str, needle: str, rule_id: str, cwe: int) -> None:
    """Detect may skip such files, but the analyst must survive them (iterative walks only)."""
    limit = sys.getrecursionlimit()
    candidate = _candidate("app/deep.py", source, needle, rule_id, cwe)
    first = ANALYST.analyze(ModelRequest(candidate=candidate, source=source, brief=""))
    second = ANALYST.analyze(ModelRequest(candidate=candidate, source=source, brief="", pass_name="revalidate", prior=first.to_json()))
    assert first.signals["analysed"] is True and second.signals["analysed"] is True
    assert first.verdict in ("vulnerable", "not_vulnerable", "uncertain")
    assert sys.getrecursionlimit() == limit


def test_source_that_does_not_parse_is_uncertain(tmp_path: Path) -> None:
    source = "import os\nx = " + "+".join(["a"] * 5000) + "\nos.system(x)\n"
    candidate = _candidate("app/deep.py", source, "os.system(", "B605", 78)
    answer = ANALYST.analyze(ModelRequest(candidate=candidate, source=source, brief=""))
    assert answer.verdict == "uncertain" and answer.confidence == 5
    assert "could not be analysed" in answer.rationale
    assert answer.signals["analysed"] is False


def test_character_column_after_non_ascii_text(tmp_path: Path) -> None:
    """The candidate's column counts characters; the parser's counts UTF-8 bytes."""
    judged = _judged(tmp_path, "app/views.py", FLASK + """
@app.route("/x")
def view():
    label = "café"; os.system("echo " + request.args["m"])  # sink
""", COMMAND)
    assert any(first.verdict == "vulnerable" and first.signals["analysed"] for _, first, _ in judged)


REVALIDATION_DOWNGRADES = [
    ("callers-pass-constants", """
import subprocess
def _run(command):
    subprocess.run(command, shell=True)  # sink
def rotate():
    _run("logrotate /etc/logrotate.conf")
""", "passes constants"),
    ("dead-code", FLASK + """
@app.route("/debug")
def debug():
    if False:
        os.system(request.args["cmd"])  # sink
    return ""
""", "never runs"),
    ("reachable-only-from-tests", """
import subprocess
def run_cli(arguments):
    return subprocess.run("python -m app " + arguments, shell=True)  # sink
def test_help():
    assert run_cli("--help").returncode == 0
""", "only from test code"),
    ("origin-not-shown", """
import subprocess
from .config import settings
def restart():
    subprocess.run(settings.restart_command(), shell=True)  # sink
""", "shown to come from outside the function; it is not"),
]


@pytest.mark.parametrize(("source", "reason"), [c[1:] for c in REVALIDATION_DOWNGRADES], ids=[c[0] for c in REVALIDATION_DOWNGRADES])
def test_revalidation_downgrades_weak_first_verdicts(tmp_path: Path, source: str, reason: str) -> None:
    judged = _judged(tmp_path, "app/tasks.py", source, COMMAND)
    (_, first, second), = [j for j in judged if j[0].rule_id != "B607"]
    assert survives(first), first.rationale
    assert not survives(second), second.rationale
    assert reason in second.rationale
    assert second.rationale.startswith(f"Revalidation of the first pass's {first.verdict}")


def test_revalidation_overrules_a_prior_from_another_model(tmp_path: Path) -> None:
    """A first pass (say a paid model) called a constant command vulnerable; the re-check does not."""
    judged = _judged(tmp_path, "app/ops.py", """
        import subprocess
        subprocess.run("systemctl restart nginx", shell=True)  # sink
        """, COMMAND)
    candidate = judged[0][0]
    prior = ModelAnswer(verdict="vulnerable", confidence=8, cwe=78, rationale="shell=True").to_json()
    answer = ANALYST.analyze(ModelRequest(candidate=candidate, source=(tmp_path / "app/ops.py").read_text(), brief="",
                                          pass_name="revalidate", prior=prior))
    assert answer.verdict == "not_vulnerable"
    assert "first pass's vulnerable (8/10)" in answer.rationale and "not borne out" in answer.rationale


def test_revalidation_confirms_with_a_caller_passing_request_data(tmp_path: Path) -> None:
    judged = _judged(tmp_path, "app/views.py", FLASK + """
def archive(path):
    subprocess.call("tar czf out.tgz " + path, shell=True)  # sink
@app.post("/archive")
def archive_view():
    archive(request.form["path"])
    return ""
""", COMMAND)
    (_, first, second), = judged
    assert first.verdict == "vulnerable" and first.confidence == 7
    assert second.verdict == "vulnerable" and second.confidence == 9
    assert "A caller passes outside data" in second.rationale


def test_unclaimed_rule_is_passed_through(tmp_path: Path) -> None:
    judged = _judged(tmp_path, "app/net.py", """
        def serve(app):
            app.run(host="0.0.0.0")  # sink
        """, frozenset({"B104"}))
    (candidate, first, _), = judged
    assert first.verdict == "uncertain" and first.signals["analysed"] is False
    assert "does not analyse rule B104" in first.rationale


def test_import_is_not_a_weakness(tmp_path: Path) -> None:
    judged = _judged(tmp_path, "app/run.py", """
        import subprocess  # sink
        """, frozenset({"B404"}))
    assert all(first.verdict == "not_vulnerable" for _, first, _ in judged)


def _investigate(source: str, needle: str, rule_id: str = "B605", cwe: int = 78) -> ModelAnswer:
    candidate = _candidate("app/x.py", source, needle, rule_id, cwe)
    return ANALYST.analyze(ModelRequest(candidate=candidate, source=source, brief=""))


def test_parameter_rebound_to_a_constant_is_not_the_parameter() -> None:
    """Regression: a certain rebinding ends the backward walk; the parameter no longer reaches."""
    answer = _investigate("import os\ndef f(cmd):\n    cmd = 'uptime'\n    os.system(cmd)\n", "os.system(")
    assert answer.verdict == "not_vulnerable", answer.rationale


def test_walrus_in_if_test_binds_for_the_body() -> None:
    """Regression: ``if (b := payload.get("branch")):`` binds ``b`` for the body."""
    source = ("import os\nfrom flask import request\ndef deploy():\n    payload = request.get_json()\n"
              "    if (branch := payload.get('branch')):\n        os.system('git checkout ' + branch)\n")
    answer = _investigate(source, "os.system(")
    assert answer.verdict == "vulnerable" and answer.signals["source"] == "request", answer.rationale


def test_module_lookup_ignores_assignments_inside_other_functions() -> None:
    """Regression: ``cmd`` assigned in another function is not a module-level binding."""
    source = ("import os\nfrom flask import request\nCMD = 'uptime'\n"
              "def other():\n    CMD = request.args['c']\n    return CMD\n"
              "def run():\n    os.system(CMD)\n")
    answer = _investigate(source, "os.system(")
    assert answer.verdict == "not_vulnerable", answer.rationale


def test_chained_call_on_the_flagged_column() -> None:
    """``check_output(...).decode().strip()`` starts three calls at one column; B603 means the inner one."""
    source = "import subprocess\ndef rev():\n    return subprocess.check_output(['/usr/bin/git', 'rev-parse', 'HEAD']).decode().strip()\n"
    answer = _investigate(source, "subprocess.check_output(", "B603")
    assert answer.verdict == "not_vulnerable" and answer.signals["analysed"] is True, answer.rationale


def test_huge_allowlist_is_recognised() -> None:
    """Allowlists with tens of thousands of literals are checked without tracing each entry."""
    source = ("import os\nALLOWED = frozenset({" + ",".join(f'"v{i}"' for i in range(20000)) + "})\n"
              "def f(x):\n    if x not in ALLOWED:\n        return\n    os.system('ls ' + x)\n")
    answer = _investigate(source, "os.system(")
    assert answer.verdict == "not_vulnerable" and "allowlist" in answer.rationale, answer.rationale


def test_pathological_fan_out_is_bounded() -> None:
    """Hundreds of branches re-assigning one name: the work budget bounds the trace, deterministically."""
    source = ("import os\ndef f(x, c):\n" + "".join(f"    if c == {i}:\n        x = x + '{i}'\n" for i in range(300))
              + "    os.system(x)\n")
    first = _investigate(source, "os.system(")
    assert first == _investigate(source, "os.system(")
    assert first.verdict in ("vulnerable", "uncertain")


@pytest.mark.parametrize(("template", "kept"), [
    ('shlex.split("git log " + ref)', False),
    ('shlex.split("%s --version" % ref)', True),
    ('shlex.split("{} --version".format(ref))', True),
    ('shlex.split(f"bash -c {ref}")', True),
])
def test_shlex_split_program_slot(template: str, kept: bool) -> None:
    """Without a shell, only a template whose first word is fixed keeps the program fixed.

    (``ref`` is a parameter of library code, so a kept finding is uncertain, not vulnerable.)"""
    source = f"import shlex, subprocess\ndef run(ref):\n    subprocess.run({template})\n"
    answer = _investigate(source, "subprocess.run(", "B603")
    assert survives(answer) is kept, answer.rationale
    assert answer.verdict == ("uncertain" if kept else "not_vulnerable"), answer.rationale


def test_one_source_reaching_a_sink_both_sanitised_and_not() -> None:
    """Regression: two leaves differing only in an optional field must still sort (no TypeError)."""
    source = ("import os, shlex\nfrom flask import request\ndef view():\n    x = request.args['a']\n"
              "    os.system(shlex.quote(x) + x)\n")
    answer = _investigate(source, "os.system(")
    assert answer.verdict == "vulnerable", answer.rationale


FUZZ_SOURCE = (Path(__file__).resolve().parent.parent / "bench" / "evalset" / "cwe78" / "thumbnail_lines_vuln.py").read_text()
RULES = sorted({"B101", "B102", "B105", "B106", "B107", "B110", "B202", "B301", "B307", "B308", "B311", "B319", "B324",
                "B501", "B602", "B603", "B605", "B607", "B608", "B611", "B703", "B404", "B999", "FL001", "FL002"})


@settings(derandomize=True, max_examples=300, deadline=None)
@given(line=st.integers(-3, 40), col=st.integers(-3, 120), rule_id=st.sampled_from(RULES),
       cwe=st.sampled_from([None, 22, 78, 79, 89, 95, 259, 295, 328, 338, 502, 611, 636, 703, 1234]),
       revalidate=st.booleans(), source=st.one_of(st.just(FUZZ_SOURCE), st.text(max_size=200)))
def test_any_request_gets_an_answer(line: int, col: int, rule_id: str, cwe: int | None, revalidate: bool, source: str) -> None:
    """Wrong positions, unknown rules, garbage text: an answer every time, never an exception."""
    candidate = Candidate(id="0" * 16, path="app/x.py", line=line, col=col, end_line=max(line, 0), rule_id=rule_id,
                          rule_name="rule", detector="bandit", cwe=cwe, detector_severity="MEDIUM",
                          detector_confidence="LOW", message="flagged", snippet="")
    prior = {"verdict": "vulnerable", "confidence": 6} if revalidate else None
    answer = ANALYST.analyze(ModelRequest(candidate=candidate, source=source, brief="",
                                          pass_name="revalidate" if revalidate else "investigate", prior=prior))
    assert answer.rationale.endswith(".") and 0 <= answer.confidence <= 10


# Real-world shapes (Django 5.1.4 and Flask 3.0.3 scans): kinds of false positive the analyst
# clears, each next to the vulnerable twin it must still keep. bench/real_world.py measures the
# same on whole repositories.
MARKUP = frozenset({"B308", "B703", "B704"})
SWALLOW = frozenset({"B110", "B112"})
RANDOM = frozenset({"B311"})
XML = frozenset({f"B3{n}" for n in range(13, 21)})
DJANGO_VIEW = """
from django.db import connection
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.html import escape
from django.utils.safestring import SafeData, mark_safe
"""
INTROSPECTION = """
class DatabaseIntrospection:
    def __init__(self, connection):
        self.connection = connection
"""

# (id, family, path, kept after both passes, severity from the first answer when kept, source)
REAL_WORLD_CASES = [
    # SQL: identifiers quoted by quote_name are names from the schema, unless the request supplies them.
    ("sql-quote-name-introspection", SQL, "db/introspection.py", False, None, INTROSPECTION + """
    def get_table_description(self, cursor, table_name):
        cursor.execute("SELECT * FROM %s LIMIT 1" % self.connection.ops.quote_name(table_name))  # sink
"""),
    ("sql-quote-name-request", SQL, "app/views.py", True, "critical", DJANGO_VIEW + """
def columns(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM %s LIMIT 1" % connection.ops.quote_name(request.GET["t"]))  # sink
    return HttpResponse("")
"""),
    ("sql-quote-name-alias-and-map", SQL, "db/operations.py", False, None, """
class Operations:
    def on_conflict(self, connection, unique_fields, update_fields):
        qn = connection.ops.quote_name
        return "INSERT INTO t SELECT 1 ON CONFLICT(%s) DO UPDATE SET %s" % (  # sink
            ", ".join(map(qn, unique_fields)),
            ", ".join(f"{f} = EXCLUDED.{f}" for f in map(self.quote_name, update_fields)),
        )
"""),
    # SQL: fragments compiled by a builder carry their values as parameters.
    ("sql-compiled-fragment", SQL, "db/lookups.py", False, None, """
class TaggedWith:
    def as_sql(self, compiler, connection):
        lhs_sql, lhs_params = compiler.compile(self.lhs)
        sql = "%s IN (SELECT item_id FROM tags WHERE name = %%s)" % lhs_sql  # sink
        return sql, [*lhs_params, self.rhs]
"""),
    # SQL: names read from a parameter object (model metadata) in library code are not the caller's text.
    ("sql-model-metadata", SQL, "db/schema.py", False, None, """
class SchemaEditor:
    def clear_column(self, cursor, model, field):
        cursor.execute("UPDATE %s SET %s = NULL" % (model._meta.db_table, field.column))  # sink
"""),
    ("sql-string-parameter-library", SQL, "db/schema.py", True, "low", """
class SchemaEditor:
    def clear_column(self, cursor, table_name, column_name):
        cursor.execute("UPDATE %s SET %s = NULL" % (table_name, column_name))  # sink
"""),
    # Credentials: names of keys, messages, lexer tokens, HTTP methods.
    ("secret-session-key-name", SECRETS, "auth/views.py", False, None, """
INTERNAL_RESET_SESSION_TOKEN = "_password_reset_token"  # sink
"""),
    ("secret-reason-message", SECRETS, "middleware/csrf.py", False, None, """
REASON_CSRF_TOKEN_MISSING = "CSRF token missing."  # sink
"""),
    ("secret-token-source-method", SECRETS, "middleware/csrf.py", False, None, """
def source(request):
    if request.method == "GET":
        return None
    token_source = "POST"  # sink
    return token_source
"""),
    ("secret-lexer-token", SECRETS, "template/smartif.py", False, None, """
def merge(tokens, i):
    token = tokens[i]
    if token == "is" and tokens[i + 1] == "not":  # sink
        token = "is not"
    return token
"""),
    ("secret-sentinel", SECRETS, "template/defaulttags.py", False, None, """
def render(csrf_token):
    if csrf_token == "NOTPROVIDED":  # sink
        return ""
    return csrf_token
"""),
    ("secret-issued-token-compared", SECRETS, "app/auth.py", True, "high", """
def check(token):
    if token == "tk_live_4f9a2c7e1b8d":  # sink
        return True
    return False
"""),
    ("secret-password-word-compared", SECRETS, "app/auth.py", True, "high", """
def check(password):
    if password == "letmein":  # sink
        return True
    return False
"""),
    # Asserts: a backend capability flag is not a permission.
    ("assert-capability-flag", ASSERT, "db/compiler.py", False, None, """
class InsertCompiler:
    def execute_sql(self, returning_fields=None):
        assert not (returning_fields and not self.connection.features.can_return_rows_from_bulk_insert)  # sink
        self.connection.cursor().execute(self.sql)
"""),
    ("assert-can-action", ASSERT, "app/views.py", True, "high", """
def delete_order(request, order):
    assert request.user.can_delete_orders  # sink
    order.delete()
"""),
    # Deserialisation: a cache reading back what it wrote; a shared file in /tmp is not that.
    ("pickle-own-cache", DATA, "cache/filebased.py", False, None, """
import pickle, zlib
class FileBasedCache:
    def set(self, key, value):
        with open(self._path(key), "wb") as f:
            f.write(zlib.compress(pickle.dumps(value)))
    def get(self, key):
        with open(self._path(key), "rb") as f:
            return pickle.loads(zlib.decompress(f.read()))  # sink
"""),
    ("pickle-serializer-pair", DATA, "cache/redis.py", False, None, """
import pickle
class RedisSerializer:
    def dumps(self, obj):
        return pickle.dumps(obj)
    def loads(self, data):
        return pickle.loads(data)  # sink
"""),
    ("pickle-http-cache", DATA, "cache/http.py", True, "critical", """
import pickle, requests
class HttpCache:
    def set(self, key, value):
        requests.put(f"https://cache/{key}", data=pickle.dumps(value), timeout=5)
    def get(self, key):
        return pickle.loads(requests.get(f"https://cache/{key}", timeout=5).content)  # sink
"""),
    ("pickle-world-writable", DATA, "app/cache.py", True, "high", """
import pickle
def load_cache():
    with open("/tmp/app-cache.pkl", "rb") as handle:
        return pickle.load(handle)  # sink
"""),
    # Commands: a tool path its callers configure; a route choosing the program is still injection.
    ("cmd-tool-path-parameter", COMMAND, "core/management/utils.py", False, None, """
import shutil, subprocess, sys
def run_formatters(written_files, black_path=None):
    if black_path is None:
        black_path = shutil.which("black")
    subprocess.run([black_path, "--fast", "--", *written_files], capture_output=True)  # sink
def main():
    run_formatters(sys.argv[1:])
"""),
    ("cmd-tool-path-from-route", COMMAND, "app/views.py", True, "medium", FLASK + """
def run_formatter(files, formatter):
    subprocess.run([formatter, "--", *files])  # sink
@app.post("/format")
def format_files():
    run_formatter(request.json["files"], request.json["formatter"])
    return ""
"""),
    # Code: argparse choices= is an allowlist.
    ("eval-argparse-choices", CODE, "scripts/manage.py", False, None, """
import argparse
def fetch(): ...
parser = argparse.ArgumentParser()
parser.add_argument("cmd", nargs=1, choices=("fetch", "update"))
options = parser.parse_args()
eval(options.cmd[0])()  # sink
"""),
    ("eval-argparse-free", CODE, "scripts/manage.py", True, "high", """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("cmd", nargs=1)
options = parser.parse_args()
eval(options.cmd[0])()  # sink
"""),
    # Markup: constants, escaped text, rendered templates, safety carried over; request data is XSS.
    ("markup-constant", MARKUP, "admin/templatetags/admin_list.py", False, None, DJANGO_VIEW + """
def header():
    return {"class_attrib": mark_safe(' class="action-checkbox-column"')}  # sink
"""),
    ("markup-escaped", MARKUP, "app/views.py", False, None, DJANGO_VIEW + """
def home(request):
    greeting = mark_safe("<b>%s</b>" % escape(request.GET.get("name", "")))  # sink
    return render(request, "home.html", {"greeting": greeting})
"""),
    ("markup-rendered-template", MARKUP, "forms/widgets.py", False, None, DJANGO_VIEW + """
class Widget:
    def _render(self, template_name, context, renderer):
        return mark_safe(renderer.render(template_name, context))  # sink
"""),
    ("markup-safety-carried-over", MARKUP, "template/defaultfilters.py", False, None, DJANGO_VIEW + """
def stringfilter(func):
    def wrapper(first, *args):
        result = func(str(first), *args)
        if isinstance(first, SafeData) and getattr(func, "is_safe", False):
            result = mark_safe(result)  # sink
        return result
    return wrapper
"""),
    ("markup-library-filter", MARKUP, "template/defaultfilters.py", False, None, DJANGO_VIEW + """
def safe(value):
    return mark_safe(value)  # sink
"""),
    ("markup-stored-row", MARKUP, "flatpages/views.py", False, None, DJANGO_VIEW + """
def flatpage(request, url):
    return render_flatpage(request, get_object_or_404(FlatPage, url=url))
def render_flatpage(request, f):
    f.content = mark_safe(f.content)  # sink
    return render(request, "flatpage.html", {"flatpage": f})
"""),
    ("markup-request", MARKUP, "app/views.py", True, "medium", DJANGO_VIEW + """
def home(request):
    greeting = mark_safe("<b>%s</b>" % request.GET.get("name", ""))  # sink
    return render(request, "home.html", {"greeting": greeting})
"""),
    # Swallowed errors: a check that fails open, not a clean-up.
    ("swallow-cleanup", SWALLOW, "http/response.py", False, None, """
def close(closers):
    for closer in closers:
        try:
            closer()
        except Exception:  # sink
            pass
"""),
    ("swallow-failed-check", SWALLOW, "app/hooks.py", True, "high", FLASK + """
from .deploy import start_deploy, verify_signature
@app.post("/hooks/deploy")
def deploy_hook():
    try:
        verify_signature(request.get_data(), request.headers.get("X-Signature", ""))
    except Exception:  # sink
        pass
    start_deploy(request.json["ref"])
    return ""
"""),
    # Random numbers: sampling is not a secret; a reset code is.
    ("random-cull", RANDOM, "cache/filebased.py", False, None, """
import random
def cull(filelist, frequency):
    return random.sample(filelist, len(filelist) // frequency)  # sink
"""),
    ("random-reset-code", RANDOM, "app/accounts.py", True, "medium", """
import random, string
def make_reset_code():
    return "".join(random.choice(string.digits) for _ in range(6))  # sink
"""),
    # XML: a defused parser; request XML through the standard library expands entities.
    ("xml-defused-parser", XML, "core/serializers/xml_serializer.py", False, None, """
from xml.dom import pulldom
from xml.sax import expatreader
class DefusedExpatParser(expatreader.ExpatParser):
    pass
class Deserializer:
    def __init__(self, stream):
        self.stream = stream
        self.event_stream = pulldom.parse(self.stream, self._make_parser())  # sink
    def _make_parser(self):
        return DefusedExpatParser()
"""),
    ("xml-request", XML, "app/views.py", True, "medium", FLASK + """
from xml.dom import minidom
@app.post("/import")
def import_feed():
    return {"n": len(minidom.parseString(request.get_data()).childNodes)}  # sink
"""),
]


@pytest.mark.parametrize(("family", "path", "kept", "severity", "source"), [c[1:] for c in REAL_WORLD_CASES],
                         ids=[c[0] for c in REAL_WORLD_CASES])
def test_real_world_shapes(tmp_path: Path, family: frozenset[str], path: str, kept: bool, severity: str | None,
                           source: str) -> None:
    judged = _judged(tmp_path, path, source, family)
    assert _kept(judged) is kept, [(f.rationale, s.rationale) for _, f, s in judged]
    if kept:
        severities = {triage(c, first)[0] for c, first, second in judged if survives(first) and survives(second)}
        assert severities == {severity}, [f.rationale for _, f, _ in judged]
    for _, first, second in judged:
        assert first.signals["analysed"] is True, first.rationale
        assert first.rationale.endswith(".") and second.rationale.endswith(".")


def _both(source: str, needle: str, rule_id: str, cwe: int, path: str = "app/x.py") -> tuple[ModelAnswer, ModelAnswer]:
    candidate = _candidate(path, source, needle, rule_id, cwe)
    first = ANALYST.analyze(ModelRequest(candidate=candidate, source=source, brief=""))
    second = ANALYST.analyze(ModelRequest(candidate=candidate, source=source, brief="", pass_name="revalidate",
                                          prior=first.to_json()))
    return first, second


def test_library_parameter_is_uncertain_and_callers_still_decide() -> None:
    """In a file with no entry point, a parameter spliced into SQL is kept as uncertain (low);
    callers in the file that pass constants clear it, callers passing data of unknown origin drop it."""
    helper = "def count_rows(conn, table):\n    return conn.execute('SELECT COUNT(*) FROM ' + table)\n"
    first, second = _both(helper, "'SELECT", "B608", 89)
    assert (first.verdict, first.confidence, first.signals["reach"]) == ("uncertain", 6, "library"), first.rationale
    assert "Nothing in this file is an entry point for outside data" in first.rationale
    assert (second.verdict, second.confidence) == ("uncertain", 5) and "check its callers" in second.rationale
    assert triage(_candidate("app/x.py", helper, "'SELECT", "B608", 89), first)[0] == "low"
    _, second = _both(helper + "def sizes(conn):\n    return count_rows(conn, 'users')\n", "'SELECT", "B608", 89)
    assert not survives(second) and "passes constants" in second.rationale, second.rationale
    _, second = _both(helper + "def sizes(conn, registry):\n    return count_rows(conn, registry.table_names()[0])\n",
                      "'SELECT", "B608", 89)
    assert not survives(second) and "whose origin this file does not show" in second.rationale, second.rationale


def test_parameter_through_unseen_code_is_not_an_interface() -> None:
    """Library code whose parameter reaches the SQL only through another object's method does not splice it."""
    source = ("class Editor:\n    def remake(self, cursor, field):\n"
              "        cursor.execute('INSERT INTO t SELECT %s FROM u' % self.prepare_default(field))\n")
    first, second = _both(source, "'INSERT", "B608", 89)
    assert survives(first) and not survives(second), second.rationale
    assert "only through" in second.rationale


def test_self_is_object_state_not_a_parameter() -> None:
    """``self`` reached through an inherited method is the object's state, not a caller's value."""
    source = ("class Backend:\n    def check(self, cursor):\n"
              "        cursor.execute('SELECT * FROM %s' % self.table_for(cursor))\n")
    first = _investigate(source, "cursor.execute(", "B608", 89)
    assert "parameter 'self'" not in first.rationale and "the state of the object 'self'" in first.rationale
    assert first.verdict == "uncertain"


def test_recursive_calls_are_not_callers() -> None:
    """A function that calls itself on parts of its own parameter gets no new origin from that call."""
    source = ("from django.utils.safestring import mark_safe\nfrom django.http import HttpResponse\n"
              "def view(request):\n    return HttpResponse('')\n"
              "class Decoder:\n    def process(self, obj):\n        if isinstance(obj, list):\n"
              "            return [self.process(item) for item in obj]\n        return mark_safe(obj)\n"
              "    def decode(self, s, **kwargs):\n        return self.process(super().decode(s, **kwargs))\n")
    first, second = _both(source, "mark_safe(obj)", "B308", 79)
    assert survives(first) and not survives(second), second.rationale
    assert "passed through super().decode()" in second.rationale


def test_view_shaped_helper_called_in_its_file_is_not_a_handler() -> None:
    """``render_flatpage(request, f)`` is called by the routed view: its ``f`` is what that view passes."""
    source = ("from django.shortcuts import get_object_or_404, render\nfrom django.utils.safestring import mark_safe\n"
              "def flatpage(request, url):\n    return render_flatpage(request, get_object_or_404(Page, url=url))\n"
              "def render_flatpage(request, f):\n    return render(request, 't.html', {'t': mark_safe(f.title)})\n")
    first, second = _both(source, "mark_safe(f.title)", "B308", 79)
    assert first.signals["source"] == "parameter", first.rationale
    assert not survives(second) and "get_object_or_404" in second.rationale, second.rationale
    routed = source.replace("return render_flatpage(request, get_object_or_404(Page, url=url))", "return None")
    first, _ = _both(routed, "mark_safe(f.title)", "B308", 79)
    assert first.signals["source"] == "request", first.rationale


def test_argparse_type_and_choices_restrict_options() -> None:
    base = "import argparse, os\nparser = argparse.ArgumentParser()\n{decl}\nargs = parser.parse_args()\nos.system('renice ' + str(args.level))\n"
    for decl, cleared in (("parser.add_argument('--level', type=int)", True),
                          ("parser.add_argument('level', choices=['1', '5'])", True),
                          ("parser.add_argument('--level')", False)):
        answer = _investigate(base.format(decl=decl), "os.system(")
        assert (answer.verdict == "not_vulnerable") is cleared, answer.rationale


def test_entry_points_of_a_file() -> None:
    from fleetledger.analysis.sources import entry_point
    from fleetledger.analysis.tree import SourceTree
    assert entry_point(SourceTree.parse("def f(conn, t):\n    conn.execute(t)\n")) is None
    assert entry_point(SourceTree.parse("import os\nHOME = os.environ['HOME']\n")) is None
    assert "imported request" in entry_point(SourceTree.parse("from flask import request\n"))
    assert "web application" in entry_point(SourceTree.parse("import fastapi\napp = fastapi.FastAPI()\n"))
    assert "view handler" in entry_point(SourceTree.parse("def detail(request, pk):\n    return pk\n"))
    assert "command-line" in entry_point(SourceTree.parse("import sys\nname = sys.argv[1]\n"))


def test_tls_loopback_url_built_from_a_constant_name() -> None:
    """``REGISTRY + "/v2/_catalog"`` with a loopback REGISTRY never leaves the machine."""
    source = ("import requests\nREGISTRY = 'https://127.0.0.1:5000'\n"
              "def catalog():\n    return requests.request('GET', REGISTRY + '/v2/_catalog', verify=False, timeout=10)\n")
    assert _investigate(source, "requests.request(", "B501", 295).verdict == "not_vulnerable"
    remote = source.replace("127.0.0.1", "registry.example.com")
    assert _investigate(remote, "requests.request(", "B501", 295).verdict == "vulnerable"


def test_new_checks_answer_deterministically() -> None:
    """The checks added for the pass-through rules give the same answer twice, with the same rationale."""
    source = (Path(__file__).resolve().parent.parent / "bench" / "evalset" / "cwe79" / "greeting_view_vuln.py").read_text()
    first = _investigate(source, "mark_safe(", "B308", 79)
    assert first == _investigate(source, "mark_safe(", "B308", 79)
    assert first.verdict == "vulnerable" and first.cwe == 79


DJANGO_HOOKS = """
from django import forms, template
from django.contrib import admin
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
register = template.Library()
"""

# (id, family, path, kept after both passes, severity from the first answer when kept, source)
PURPOSE_AND_HOOK_CASES = [
    # Random values: secret-ness read from the value's uses and the names around them, not only the
    # names next to the call.
    ("random-qualifier-in-function-name", RANDOM, "app/accounts.py", True, "medium", """
import random
def request_verification(user):
    code = f"{random.randrange(10**6):06d}"  # sink
    user.send(code)
"""),
    ("random-label-in-key", RANDOM, "app/sessions.py", True, "medium", """
import random
class Store:
    def create(self, user_id):
        sid = "%032x" % random.getrandbits(128)  # sink
        self.redis.setex(f"session:{sid}", 3600, user_id)
        return sid
"""),
    ("random-capability-passed-on", RANDOM, "app/sharing.py", True, "medium", """
import random, string
def publish(document):
    slug = "".join(random.choices(string.ascii_lowercase, k=12))  # sink
    db.add(ShareLink(slug=slug, document=document))
"""),
    ("random-generator-object", RANDOM, "app/handlers.py", True, "medium", """
import random, time
class Page:
    def prepare(self):
        rng = random.Random(time.time())  # sink
        self.csp_nonce = "%x" % rng.getrandbits(128)
"""),
    ("random-generator-object-shuffles", RANDOM, "app/quiz.py", False, None, """
import random
def questions(items, seed):
    rng = random.Random(seed)  # sink
    rng.shuffle(items)
    return items[:10]
"""),
    ("random-slug-not-a-capability", RANDOM, "app/articles.py", False, None, """
import random, string
def create_article(title):
    slug = "".join(random.choices(string.ascii_lowercase, k=6))  # sink
    Article.objects.create(title=title, slug=slug)
"""),
    ("random-word-in-message-is-no-label", RANDOM, "app/retry.py", False, None, """
import logging, random, time
def reconnect(client):
    delay = random.uniform(0, 2)  # sink
    logging.info(f"retrying session in {delay} seconds")
    time.sleep(delay)
"""),
    ("random-passed-to-session-call", RANDOM, "app/retry.py", False, None, """
import random
def renew(client):
    timeout = random.randint(1, 5)  # sink
    client.start_session(timeout)
"""),
    # Django hooks: their parameters are data users supply.
    ("markup-template-filter", MARKUP, "app/templatetags/marks.py", True, "medium", DJANGO_HOOKS + """
@register.filter
def highlight(text, term):
    return mark_safe(text.replace(term, f"<mark>{term}</mark>"))  # sink
"""),
    ("markup-simple-tag", MARKUP, "app/templatetags/badges.py", True, "medium", DJANGO_HOOKS + """
@register.simple_tag(takes_context=False)
def badge(label):
    return mark_safe(f"<span class='badge'>{label}</span>")  # sink
"""),
    ("markup-filter-registered-by-call", MARKUP, "app/templatetags/marks.py", True, "medium", DJANGO_HOOKS + """
def bold(value):
    return mark_safe(f"<b>{value}</b>")  # sink
register.filter("bold", bold)
"""),
    ("markup-widget-render", MARKUP, "app/widgets.py", True, "medium", DJANGO_HOOKS + """
class ColorWidget(forms.Widget):
    def render(self, name, value, attrs=None, renderer=None):
        return mark_safe(f'<input type="color" value="{value}">')  # sink
"""),
    ("markup-widget-escaped", MARKUP, "app/widgets.py", False, None, DJANGO_HOOKS + """
class ColorWidget(forms.Widget):
    def render(self, name, value, attrs=None, renderer=None):
        return mark_safe(f'<input type="color" value="{conditional_escape(value)}">')  # sink
"""),
    ("markup-admin-list-display", MARKUP, "app/admin.py", True, "medium", DJANGO_HOOKS + """
class PartnerAdmin(admin.ModelAdmin):
    list_display = ("name", "website_link")
    def website_link(self, obj):
        return mark_safe(f'<a href="{obj.website}">{obj.name}</a>')  # sink
"""),
    ("markup-admin-display-decorator", MARKUP, "app/admin.py", True, "medium", DJANGO_HOOKS + """
@admin.display(description="Website")
def website_link(obj):
    return mark_safe(f'<a href="{obj.website}">site</a>')  # sink
"""),
    ("markup-filter-escapes-by-autoescape", MARKUP, "app/templatetags/marks.py", False, None, DJANGO_HOOKS + """
@register.filter(needs_autoescape=True)
def bold(value, autoescape=True):
    if autoescape:
        value = conditional_escape(value)
    return mark_safe(f"<b>{value}</b>")  # sink
"""),
    ("markup-filter-ignores-autoescape", MARKUP, "app/templatetags/marks.py", True, "medium", DJANGO_HOOKS + """
@register.filter(needs_autoescape=True)
def bold(value, autoescape=True):
    return mark_safe(f"<b>{value}</b>")  # sink
"""),
    ("markup-filter-marks-input-unchanged", MARKUP, "app/templatetags/marks.py", False, None, DJANGO_HOOKS + """
@register.filter(is_safe=True)
def trusted(value):
    return [mark_safe(item) for item in value]  # sink
"""),
    ("markup-hook-does-not-make-helpers-application-code", MARKUP, "app/templatetags/marks.py", False, None, DJANGO_HOOKS + """
@register.filter
def upper(value):
    return value.upper()
def cell(text):
    return mark_safe(text)  # sink
"""),
    # Escaping by a translation table.
    ("markup-json-translation-table", MARKUP, "app/views.py", False, None, DJANGO_VIEW + """
import ast
import json
ESCAPES = {ord(">"): "\\\\u003E", ord("<"): "\\\\u003C", ord("&"): "\\\\u0026"}
def dashboard(request):
    initial = mark_safe(json.dumps({"q": request.GET.get("q", "")}).translate(ESCAPES))  # sink
    return render(request, "d.html", {"initial": initial})
"""),
    ("markup-translation-table-misses-a-character", MARKUP, "app/views.py", True, "medium", DJANGO_VIEW + """
import ast
import json
ESCAPES = {ord(">"): "\\\\u003E", ord("<"): "\\\\u003C"}
def dashboard(request):
    initial = mark_safe(json.dumps({"q": request.GET.get("q", "")}).translate(ESCAPES))  # sink
    return render(request, "d.html", {"initial": initial})
"""),
    # Library code: marking a caller's text safe is the caller's decision; writing markup around it is an interface.
    ("markup-library-writes-markup", MARKUP, "app/tables.py", True, "low", """
from django.utils.safestring import SafeString
def render_cells(row):
    return SafeString("".join(f"<td>{value}</td>" for value in row))  # sink
"""),
    ("markup-library-marks-callers-text", MARKUP, "app/tables.py", False, None, """
from django.utils.safestring import SafeString
def render_cell(html):
    return SafeString(html)  # sink
"""),
    # XML: defuse_stdlib() at import; a parser object judged by what it is fed.
    ("xml-defuse-stdlib", XML, "app/views.py", False, None, FLASK + """
import defusedxml
from xml.dom import minidom
defusedxml.defuse_stdlib()
@app.post("/import")
def import_feed():
    return {"n": len(minidom.parseString(request.get_data()).childNodes)}  # sink
"""),
    ("xml-defuse-stdlib-after-name-import", XML, "app/views.py", True, "medium", FLASK + """
import defusedxml
from xml.dom.minidom import parseString
defusedxml.defuse_stdlib()
@app.post("/import")
def import_feed():
    return {"n": len(parseString(request.get_data()).childNodes)}  # sink
"""),
    ("xml-sax-parser-fed-request", XML, "app/views.py", True, "medium", FLASK + """
import xml.sax
@app.post("/opml")
def import_opml():
    parser = xml.sax.make_parser()  # sink
    parser.setContentHandler(xml.sax.ContentHandler())
    parser.feed(request.get_data())
    parser.close()
    return ""
"""),
    ("xml-sax-parser-fed-constant-path", XML, "app/config.py", False, None, """
import xml.sax
def load():
    parser = xml.sax.make_parser()  # sink
    parser.parse("/etc/app/settings.xml")
"""),
    ("xml-sax-parser-not-fed-here", XML, "app/config.py", False, None, """
import xml.sax
def new_parser():
    return xml.sax.make_parser()  # sink
"""),
]


@pytest.mark.parametrize(("family", "path", "kept", "severity", "source"), [c[1:] for c in PURPOSE_AND_HOOK_CASES],
                         ids=[c[0] for c in PURPOSE_AND_HOOK_CASES])
def test_purposes_hooks_and_parsers(tmp_path: Path, family: frozenset[str], path: str, kept: bool, severity: str | None,
                                    source: str) -> None:
    judged = _judged(tmp_path, path, source, family)
    assert _kept(judged) is kept, [(f.rationale, s.rationale) for _, f, s in judged]
    if kept:
        severities = {triage(c, first)[0] for c, first, second in judged if survives(first) and survives(second)}
        assert severities == {severity}, [f.rationale for _, f, _ in judged]
    for _, first, second in judged:
        assert first.signals["analysed"] is True, first.rationale
        assert first.rationale.endswith(".") and second.rationale.endswith(".")


def test_django_hooks_are_entry_points_for_their_own_parameters() -> None:
    from fleetledger.analysis.sources import entry_point, handler_parameter, hook_kind
    from fleetledger.analysis.tree import SourceTree
    source = ("from django import template, forms\nfrom django.contrib import admin\nregister = template.Library()\n"
              "@register.filter\ndef f(value):\n    return value\n"
              "class W(forms.TextInput):\n    def render(self, name, value, attrs=None, renderer=None):\n        return ''\n"
              "    def other(self, value):\n        return value\n"
              "class A(admin.ModelAdmin):\n    readonly_fields = ('shown',)\n    def shown(self, obj):\n        return obj\n"
              "    def helper(self, obj):\n        return obj\n")
    tree = SourceTree.parse(source)
    kinds = {n.name: hook_kind(tree, n) for n in ast.walk(tree.module) if isinstance(n, ast.FunctionDef)}
    assert kinds == {"f": "template", "render": "widget", "other": None, "shown": "admin", "helper": None}
    assert entry_point(tree) is None
    render = next(n for n in ast.walk(tree.module) if isinstance(n, ast.FunctionDef) and n.name == "render")
    assert handler_parameter(tree, render, "value") is not None
    assert handler_parameter(tree, render, "renderer") is None and handler_parameter(tree, render, "attrs") is None


def test_try_whose_handlers_leave_rebinds_the_name() -> None:
    """``try: value = int(value) except ValueError: return`` leaves only the converted value past the try."""
    source = ("import os\nfrom flask import request\ndef renice():\n    value = request.args['n']\n"
              "    try:\n        value = int(value)\n    except ValueError:\n        return None\n"
              "    os.system('renice %d 1' % value)\n")
    assert _investigate(source, "os.system(").verdict == "not_vulnerable"
    falls_through = source.replace("        return None\n", "        pass\n")
    assert _investigate(falls_through, "os.system(").verdict == "vulnerable"


def test_purpose_of_random_values_is_deterministic() -> None:
    source = (Path(__file__).resolve().parent.parent / "bench" / "evalset" / "cwe330" / "share_link_vuln.py").read_text()
    first = _investigate(source, "random.choices(", "B311", 330)
    assert first == _investigate(source, "random.choices(", "B311", 330)
    assert first.verdict == "vulnerable" and "'slug'" in first.rationale
