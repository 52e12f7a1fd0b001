"""The offline fixer (issue 18): each safe rewrite on code built here, found by the real
detectors and the taint engine, validated by a re-scan of the patched copy; and the cases
where no rewrite may be proposed (the value is constant, the call is already safe, a shape
the rewrite cannot be sure of)."""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

import pytest

from fleetledger.jobs.scan.detect import detect_file
from fleetledger.jobs.scan.fixes import propose, validate
from fleetledger.jobs.scan.fixes.text import DiffDoesNotApply, apply_diff, unified_diff
from fleetledger.jobs.scan.fixes.validate import patched_bytes
from fleetledger.jobs.scan.shapes import Candidate, candidate_id

FLASK = "from flask import Flask, request, redirect, make_response\napp = Flask(__name__)\n"


def scan(tmp_path: Path, code: str, name: str = "app.py") -> tuple[list[Candidate], bytes]:
    root = tmp_path / "repo"
    root.mkdir(exist_ok=True)
    data = textwrap.dedent(code).encode()
    (root / name).write_bytes(data)
    report = detect_file(root, name)
    assert report.status == "scanned", report.reason
    return list(report.candidates), data


def fixed(tmp_path: Path, code: str, rule: str) -> tuple[str, str]:
    """Scans ``code``, proposes a patch for its ``rule`` finding, validates it; returns the
    patched text and the rewrite's name (the validation must pass)."""
    found, data = scan(tmp_path, code)
    ours = [c for c in found if c.rule_id == rule]
    assert ours, f"no {rule} in {[c.rule_id for c in found]}"
    proposal = propose(ours[0], data)
    assert proposal.diff is not None, proposal.rationale
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    check = validate(proposal, ours[0], data, scratch=scratch)
    assert check.ok, check
    assert check.tests.startswith("not run: ")
    return patched_bytes(proposal, data).decode(), proposal.rewrite or ""


def refused(code: str, rule: str, line: int, col: int, *, api: str | None = None, role: str = "argument 1",
            evidence: dict | None = None) -> str:
    """A finding placed by hand at a call (the detectors report none there): the fixer must
    say why it proposes nothing."""
    data = textwrap.dedent(code).encode()
    trace = ({"traces": [{"source": {"channel": "http", "what": "x", "path": "app.py", "line": line, "col": col},
                          "steps": [], "sink": {"path": "app.py", "line": line, "col": col, "api": api, "role": role},
                          "sanitisers": []}], "also": []} if api else None)
    c = Candidate(id=candidate_id("app.py", line, col, rule), path="app.py", line=line, col=col, end_line=line,
                  rule_id=rule, rule_name="r", detector="test", cwe=None, detector_severity="HIGH",
                  detector_confidence="HIGH", message="m", snippet="", trace=trace, evidence=evidence)
    proposal = propose(c, data)
    assert proposal.diff is None, proposal.diff
    assert proposal.rationale.startswith("no safe rewrite known: ")
    return proposal.rationale


# -- each rewrite, proposed and validated --------------------------------------------------

def test_yaml_load_becomes_safe_load(tmp_path: Path) -> None:
    text, name = fixed(tmp_path, FLASK + """
import yaml
@app.route("/a")
def a():
    return repr(yaml.load(request.data, Loader=yaml.Loader))
""", "FLT-deserialization")
    assert name == "yaml-safe-load"
    assert "yaml.safe_load(request.data)" in text and "Loader" not in text


def test_shell_string_becomes_argument_list(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, FLASK + """
import subprocess
@app.route("/p")
def p():
    host = request.args["host"]
    subprocess.run("ping -c 1 '%s'" % host, shell=True)
    return "ok"
""", "FLT-command")
    assert 'subprocess.run(["ping", "-c", "1", str(host)])' in text, "a value formatted in may be any type"


def test_sql_built_from_strings_becomes_parameters_dbapi(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, FLASK + """
import sqlite3
@app.route("/u")
def u():
    db = sqlite3.connect("x.db")
    rows = db.execute(f"SELECT * FROM users WHERE name = '{request.args['n']}' AND age > {request.args['a']}")
    return repr(rows.fetchall())
""", "FLT-sql")
    assert """db.execute("SELECT * FROM users WHERE name = ? AND age > ?", (request.args['n'], request.args['a']))""" in text


def test_sql_with_format_paramstyle_escapes_percent(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, FLASK + """
import pymysql
@app.route("/u")
def u():
    cur = pymysql.connect().cursor()
    cur.execute("SELECT * FROM t WHERE a LIKE 'x%' AND b = '" + request.args["b"] + "'")
    return "ok"
""", "FLT-sql")
    assert """cur.execute("SELECT * FROM t WHERE a LIKE 'x%%' AND b = %s", (request.args["b"],))""" in text


def test_sqlalchemy_text_gets_bound_parameters(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, FLASK + """
import sqlalchemy
engine = sqlalchemy.create_engine("sqlite://")
@app.route("/u")
def u():
    with engine.connect() as conn:
        return repr(conn.execute(sqlalchemy.text("SELECT * FROM t WHERE id = " + request.args["id"])).all())
""", "FLT-sql")
    assert 'conn.execute(sqlalchemy.text("SELECT * FROM t WHERE id = :p1"), {"p1": request.args["id"]})' in text


def test_random_for_a_secret_becomes_secrets(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, """
import random
def reset_token():
    return "".join(random.choice("abcdef0123456789") for _ in range(32))
""", "B311")
    assert "secrets.choice(" in text and "import secrets" in text


def test_weak_hash_becomes_sha256(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, FLASK + """
import hashlib
@app.route("/h")
def h():
    return hashlib.md5(request.args["pw"].encode()).hexdigest()
""", "FLC-weak-hash")
    assert "hashlib.sha256(request.args" in text


def test_xml_parsing_becomes_defusedxml(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, FLASK + """
import xml.etree.ElementTree as ET
@app.route("/x")
def x():
    return ET.fromstring(request.data).tag
""", "FLT-xml-bomb")
    assert "defusedxml.ElementTree.fromstring(request.data)" in text and "import defusedxml.ElementTree" in text


def test_redirect_gets_a_same_site_check(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, FLASK + """
@app.route("/go")
def go():
    return redirect(request.args.get("next", "/"))
""", "FLT-redirect")
    assert 'redirect(_same_site_url(request.args.get("next", "/")))' in text and "def _same_site_url" in text


def test_joined_path_gets_a_containment_check(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, FLASK + """
import os
@app.route("/f")
def f():
    with open(os.path.join("/srv/files", request.args["name"])) as fh:
        return fh.read()
""", "FLT-path")
    assert '    safe_path = os.path.realpath(os.path.join("/srv/files", request.args["name"]))\n' \
           '    if not safe_path.startswith(os.path.realpath("/srv/files") + os.sep):\n' \
           '        raise PermissionError(safe_path)\n    with open(safe_path) as fh:' in text


def test_markup_from_input_is_escaped(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, FLASK + """
@app.route("/hello")
def hello():
    return "<p>Hello " + request.args["name"] + "</p>"
""", "FLT-xss")
    assert 'return "<p>Hello " + html.escape(request.args["name"]) + "</p>"' in text


def test_cookie_gets_secure_and_httponly(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, FLASK + """
@app.route("/c")
def c():
    resp = make_response("ok")
    resp.set_cookie("sid", request.args["v"], httponly=False)
    return resp
""", "FLC-cookie-secure")
    assert 'resp.set_cookie("sid", request.args["v"], httponly=True, secure=True)' in text


# -- where no rewrite may be proposed ------------------------------------------------------

def test_constant_values_get_no_rewrite() -> None:
    code = "import subprocess, yaml, os\nsubprocess.run('ls -l', shell=True)\nyaml.load('a: 1')\n"
    assert "constant" in refused(code, "FLT-command", 2, 0, api="subprocess.run")
    assert "constant" in refused(code, "FLT-deserialization", 3, 0, api="yaml.load")
    assert "constant" in refused("import random\nrandom.random()\n", "B311", 2, 0, evidence={"state": "constant"})
    assert "constant" in refused("from flask import redirect\nredirect('/home')\n", "FLT-redirect", 2, 0,
                                 api="flask.redirect")
    assert "constant" in refused("import sqlite3\ndb = sqlite3.connect('x')\ndb.execute('SELECT 1')\n", "FLT-sql", 3, 0,
                                 api="pep249.Connection.execute")
    assert "constant" in refused("import os\nopen('/etc/hosts')\n", "FLT-path", 2, 0, api="open")


def test_already_safe_calls_get_no_rewrite() -> None:
    assert "already safe" in refused("import yaml\nyaml.load(d, Loader=yaml.SafeLoader)\n", "FLT-deserialization",
                                     2, 0, api="yaml.load")
    assert "already safe" in refused("import subprocess\nsubprocess.run(['ls', d])\n", "FLT-command", 2, 0,
                                     api="subprocess.run")
    assert "already safe" in refused("import hashlib\nhashlib.md5(d, usedforsecurity=False)\n", "FLC-weak-hash", 2, 0)
    assert "already safe" in refused("r.set_cookie('a', 'b', secure=True, httponly=True)\n", "FLC-cookie-secure", 1, 0)
    assert "already" in refused("import secrets\nsecrets.choice(x)\n", "B311", 1 + 1, 0)


def test_shapes_a_rewrite_cannot_be_sure_of_get_no_rewrite() -> None:
    assert "shell syntax" in refused("import subprocess\nsubprocess.run('cat ' + f + ' | wc', shell=True)\n",
                                     "FLT-command", 2, 0, api="subprocess.run")
    assert "no argument-list form" in refused("import os\nos.system('ls ' + d)\n", "FLT-command", 2, 0, api="os.system")
    assert "name or a keyword" in refused(
        "import sqlite3\nsqlite3.connect('x').execute('SELECT * FROM ' + t)\n", "FLT-sql", 2, 0,
        api="pep249.Connection.execute")
    assert "part of a quoted" in refused(
        "import sqlite3\nsqlite3.connect('x').execute(\"SELECT * FROM t WHERE a LIKE '%\" + t + \"%'\")\n",
        "FLT-sql", 2, 0, api="pep249.Connection.execute")
    assert "driver" in refused("db.execute('SELECT * FROM t WHERE a = ' + x)\n", "FLT-sql", 1, 0,
                               api="pep249.Connection.execute")
    assert "not built in place" in refused("import subprocess\nsubprocess.run(make(), shell=True)\n", "FLT-command",
                                           2, 0, api="subprocess.run")
    assert "the variable cmd, assigned in 2 places" in refused(
        "import subprocess\ncmd = 'ls ' + a\nif b:\n    cmd = 'du ' + a\nsubprocess.run(cmd, shell=True)\n",
        "FLT-command", 5, 0, api="subprocess.run")
    assert "parameter q of f()" in refused("import sqlite3\ndef f(q):\n    sqlite3.connect('x').execute(q)\n",
                                           "FLT-sql", 3, 4, api="pep249.Connection.execute")
    assert "also used at line 4" in refused(
        "import sqlite3\ndb = sqlite3.connect('x')\nq = 'SELECT * FROM t WHERE a = ' + x\nlog(q)\ndb.execute(q)\n",
        "FLT-sql", 5, 0, api="pep249.Connection.execute")
    assert "no rewrite for" in refused("import pickle\npickle.loads(d)\n", "FLT-code", 2, 0, api="pickle.loads")


def test_a_patch_that_does_not_clear_the_finding_is_not_ok(tmp_path: Path) -> None:
    found, data = scan(tmp_path, FLASK + """
import subprocess
@app.route("/p")
def p():
    subprocess.run("ping " + request.args["h"], shell=True)
    subprocess.run("ping " + request.args["h"], shell=True)
    return "ok"
""")
    first = next(c for c in found if c.rule_id == "FLT-command")
    proposal = propose(first, data)
    # the diff is applied to another text: it must say so, not patch the wrong lines
    with pytest.raises(DiffDoesNotApply):
        apply_diff("something else\n", proposal.diff or "")
    check = validate(proposal, first, b"x = 1\n", scratch=tmp_path / "s")
    assert not check.ok and "not the one the patch was made against" in check.reason


# -- text: encodings, CRLF, applying ------------------------------------------------------

def test_crlf_and_latin1_files_keep_their_bytes(tmp_path: Path) -> None:
    code = ("# -*- coding: latin-1 -*-\r\nimport hashlib\r\n# caf\xe9\r\ndef h(pw):\r\n"
            "    return hashlib.md5(pw).hexdigest()\r\n")
    root = tmp_path / "repo"
    root.mkdir()
    data = code.encode("latin-1")
    (root / "app.py").write_bytes(data)
    c = next(c for c in detect_file(root, "app.py").candidates if c.rule_id == "FLC-weak-hash")
    proposal = propose(c, data)
    after = patched_bytes(proposal, data)
    assert after == data.replace(b"md5", b"sha256")
    assert proposal.encoding == "iso-8859-1"
    assert hashlib.sha256(data).hexdigest() == proposal.base_sha256


def test_apply_diff_finds_hunks_that_moved_and_refuses_changed_context() -> None:
    before = "".join(f"line {n}\n" for n in range(30))
    after = before.replace("line 20\n", "line twenty\n")
    diff = unified_diff("f.py", before, after)
    moved = "new first line\n" + before
    assert apply_diff(moved, diff) == "new first line\n" + after
    with pytest.raises(DiffDoesNotApply):
        apply_diff(before.replace("line 19\n", "changed\n"), diff)
    no_newline = "a\nb"
    assert apply_diff(no_newline, unified_diff("f.py", no_newline, "a\nc")) == "a\nc"


def test_sql_built_in_a_variable_first_gets_parameters_at_both_places(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, FLASK + """
import aiopg
async def create(conn, name):
    q = ("INSERT INTO students (name) "
         "VALUES ('%(name)s')" % {'name': name})
    async with conn.cursor() as cur:
        print(q)
        await cur.execute(q)

@app.route("/s", methods=["POST"])
async def s():
    await create(None, request.form["name"])
""", "FLT-sql")
    assert """    q = ("INSERT INTO students (name) VALUES (%s)")\n""" in text
    assert "await cur.execute(q, (name,))" in text


def test_django_raw_gets_a_parameter_list(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, """
from django.db import models
from django.http import HttpResponse

class Login(models.Model):
    user = models.CharField(max_length=20)

def lab(request):
    name = request.POST.get("name")
    rows = Login.objects.raw("SELECT * FROM t WHERE user='" + name + "'")
    return HttpResponse(str(len(list(rows))))
""", "FLT-sql")
    assert """Login.objects.raw("SELECT * FROM t WHERE user=%s", [name])""" in text


def test_weak_hash_imported_by_name_or_named_by_a_constant(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, """
from hashlib import md5
def check(stored, password):
    return stored == md5(password.encode()).hexdigest()
""", "FLC-weak-hash")
    assert "hashlib.sha256(password.encode())" in text and "import hashlib" in text


def test_bandit_sql_finding_on_the_text_rewrites_the_call_that_runs_it() -> None:
    code = ("import sqlite3\ndef add(u, p):\n    c = sqlite3.connect('users.db').cursor()\n"
            "    c.execute(\"INSERT INTO users (user, password, failures) VALUES ('%s', '%s', '%d')\" %(u, p, 0))\n")
    # bandit's B608 points at the SQL text (column 14), not at the call
    c = Candidate(id=candidate_id("app.py", 4, 14, "B608"), path="app.py", line=4, col=14, end_line=4, rule_id="B608",
                  rule_name="hardcoded_sql_expressions", detector="bandit", cwe=89, detector_severity="MEDIUM",
                  detector_confidence="LOW", message="m", snippet="", evidence={"state": "parameter"})
    proposal = propose(c, code.encode())
    assert proposal.diff is not None, proposal.rationale
    after = patched_bytes(proposal, code.encode()).decode()
    assert """c.execute("INSERT INTO users (user, password, failures) VALUES (?, ?, ?)", (u, p, 0))""" in after


def test_a_bom_and_wide_characters_before_the_call_on_its_line(tmp_path: Path) -> None:
    code = '\ufeffimport yaml\nfrom flask import Flask, request\napp = Flask(__name__)\n' \
           '@app.route("/a")\ndef a():\n    note = "héllo 😀"; return repr(yaml.load(request.data))\n'
    root = tmp_path / "repo"
    root.mkdir()
    data = code.encode("utf-8")
    (root / "app.py").write_bytes(data)
    c = next(c for c in detect_file(root, "app.py").candidates if c.rule_id == "FLT-deserialization")
    proposal = propose(c, data)
    assert proposal.diff is not None, proposal.rationale
    after = patched_bytes(proposal, data)
    assert after == data.replace(b"yaml.load(", b"yaml.safe_load("), "the BOM kept, the call found after wide characters"
    check = validate(proposal, c, data, scratch=tmp_path / "s")
    assert check.ok, check


def test_lines_added_to_a_crlf_file_end_in_crlf(tmp_path: Path) -> None:
    code = (FLASK + '@app.route("/go")\ndef go():\n    return redirect(request.args["next"])').replace("\n", "\r\n")
    root = tmp_path / "repo"
    root.mkdir()
    data = code.encode()
    (root / "app.py").write_bytes(data)
    c = next(c for c in detect_file(root, "app.py").candidates if c.rule_id == "FLT-redirect")
    proposal = propose(c, data)
    assert proposal.diff is not None, proposal.rationale
    after = patched_bytes(proposal, data)
    assert b"import urllib.parse\r\n" in after and b"def _same_site_url" in after
    assert after.count(b"\n") == after.count(b"\r\n"), "every line ends in CRLF, the added ones too"
    assert validate(proposal, c, data, scratch=tmp_path / "s").ok


def test_a_finding_the_rescan_of_the_file_does_not_show_cannot_be_shown_cleared(tmp_path: Path) -> None:
    # the finding came from a flow the copy does not hold (another module's data, say): the
    # re-scan of the unpatched file does not report it, so "no longer reported" proves nothing
    code = "import sqlite3\ndb = sqlite3.connect('x')\nx = '1'\ndb.execute('SELECT * FROM t WHERE a = ' + x)\n"
    trace = {"traces": [{"source": {"channel": "http", "what": "x", "path": "app.py", "line": 3, "col": 0},
                         "steps": [], "sink": {"path": "app.py", "line": 4, "col": 0, "api": "pep249.Connection.execute",
                                               "role": "argument 1"}, "sanitisers": []}], "also": []}
    c = Candidate(id=candidate_id("app.py", 4, 0, "FLT-sql"), path="app.py", line=4, col=0, end_line=4,
                  rule_id="FLT-sql", rule_name="sql", detector="fleetledger-taint", cwe=89, detector_severity="HIGH",
                  detector_confidence="HIGH", message="m", snippet="", trace=trace)
    proposal = propose(c, code.encode())
    assert proposal.diff is not None, proposal.rationale
    check = validate(proposal, c, code.encode(), scratch=tmp_path / "s")
    assert not check.ok and "does not report FLT-sql in <module> either" in check.reason


@pytest.mark.parametrize("rule, code, line, api, says", [
    # constant values: nothing from outside reaches the call
    ("FLT-xml-bomb", "import xml.etree.ElementTree as ET\nET.fromstring('<a/>')\n", 2, "xml.etree.ElementTree.fromstring",
     None),
    ("FLT-xss", "def v():\n    return '<p>hi</p>'\n", 2, None, "constant"),
    ("FLT-redirect", "from flask import redirect\nredirect('/' + 'home')\n", 2, "flask.redirect", "constant"),
    # already safe
    ("FLT-xml-bomb", "import defusedxml.ElementTree as D\nD.fromstring(d)\n", 2, "defusedxml.ElementTree.fromstring",
     "defusedxml has no equivalent"),
    ("FLT-xss", "import html\ndef v(x):\n    return html.escape(x)\n", 3, None, "already safe"),
    ("FLT-sql", "import sqlite3\ndb = sqlite3.connect('x')\ndb.execute('SELECT * FROM t WHERE a = ?', (x,))\n", 3,
     "pep249.Connection.execute", "parameters already"),
    ("FLT-path", "import os\nopen(os.path.basename(name))\n", 2, "open", "not joined onto a base folder"),
    ("FLC-cookie-httponly", "r.set_cookie('a', 'b', **flags)\n", 1, None, "**keywords"),
    # a parser of its own, which defusedxml would use as it is
    ("FLT-xxe", "from xml.dom.pulldom import parseString\nparseString(d, parser=p)\n", 2,
     "xml.dom.pulldom.parseString", "its own parser"),
])
def test_no_rewrite_where_the_value_is_constant_or_the_call_already_safe(rule: str, code: str, line: int,
                                                                          api: str | None, says: str | None) -> None:
    col = len(code.splitlines()[line - 1]) - len(code.splitlines()[line - 1].lstrip())
    if rule == "FLT-xss":
        col += len("return ")
    reason = refused(code, rule, line, col, api=api, role="the returned value" if rule == "FLT-xss" else "argument 1",
                     evidence={"state": "constant"} if says is None else None)
    assert says is None and "constant" in reason or says in reason, reason


def test_a_weak_algorithm_named_by_a_module_constant_is_changed_there(tmp_path: Path) -> None:
    text, _ = fixed(tmp_path, """
import hashlib
ALGORITHM = 'md5'
def step(key):
    return hashlib.new(ALGORITHM, key).hexdigest()
def check(key, last):
    return hashlib.new(ALGORITHM, key.encode()).hexdigest() == last
""", "FLC-weak-hash")
    assert "ALGORITHM = \"sha256\"" in text and text.count("hashlib.new(ALGORITHM,") == 2, "every use agrees"
