"""fleetledger's own detectors (fleetledger.jobs.scan.detectors) and their place in detect.

Files are written to a temporary root and run through ``detect_file``, so bandit runs first and
what a test sees is what the pipeline sees: one candidate per weakness, whoever found it. The
line a candidate must be on ends with the marker comment ``# here``.
"""

from __future__ import annotations

import ast
import dataclasses
import sys
import textwrap
from pathlib import Path

import pytest

from fleetledger.jobs.scan import detectors
from fleetledger.jobs.scan.detect import detect_file
from fleetledger.jobs.scan.shapes import Candidate, FileReport, ModelAnswer, ModelRequest, candidate_id, survives
from fleetledger.models.offline import OfflineAnalyst


def scan(root: Path, source: str, relpath: str = "app/code.py") -> tuple[str, FileReport]:
    """Writes the dedented source at ``root/relpath`` and runs detect_file on it."""
    text = textwrap.dedent(source).lstrip("\n")
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return text, detect_file(root, relpath)


def marked(text: str) -> int:
    """The line ending in ``# here``."""
    [line] = [n for n, row in enumerate(text.splitlines(), start=1) if row.rstrip().endswith("# here")]
    return line


def detected(report: FileReport) -> list[dict[str, object]]:
    """The detectors' candidates as dicts (rule_id, line, cwe, detector), including those the
    taint engine's candidates folded in (``trace["also"]``: the same weakness at one place)."""
    out: list[dict[str, object]] = []
    for c in report.candidates:
        folded = (c.trace or {}).get("also")
        if folded:
            out.extend(folded)
        elif not c.detector.startswith("fleetledger-"):
            out.append({"rule_id": c.rule_id, "line": c.line, "cwe": c.cwe, "detector": c.detector})
    return sorted(out, key=lambda f: (f["line"], f["rule_id"]))


def of_cwe(report: FileReport, cwe: int) -> list[tuple[str, int]]:
    """The detectors' candidates of one CWE as (rule id, line)."""
    return [(f["rule_id"], f["line"]) for f in detected(report) if f["cwe"] == cwe]


def ours(report: FileReport) -> list[tuple[str, int]]:
    """The candidates from fleetledger's pattern detectors as (rule id, line)."""
    return [(f["rule_id"], f["line"]) for f in detected(report) if f["detector"] == "fleetledger"]


# --- FL001: case 09 C1 -------------------------------------------------------------------------

ROUTE = """\
from flask import Flask, request
app = Flask(__name__)
@app.route("/q")
def view():
    return query(None, request.args["c"], request.args["t"], request.args["v"])
"""
C1 = {  # shape -> (call, the detector that finds it with bandit 1.9)
    "fstring-column": ('cur.execute(f"SELECT {col} FROM foo WHERE id = 1")  # here', "B608"),
    "fstring-insert": ('cur.execute(f"INSERT INTO {table} VALUES (1)")  # here', "B608"),
    "concatenation": ('cur.execute("SELECT a " + "FROM " + v)  # here', "FL001"),
    "triple-quoted": ('cur.execute(f"""  # here\n        SELECT a\n        FROM {v}\n        WHERE b = 1""")', "B608"),
}


@pytest.mark.parametrize("shape", list(C1))
def test_c1_each_shape_gives_one_sql_candidate_at_the_call(tmp_path: Path, shape: str) -> None:
    call, rule = C1[shape]
    text, report = scan(tmp_path, "def query(cur, col, table, v):\n    " + call + "\n")
    assert report.internal_errors == ()
    assert of_cwe(report, 89) == [(rule, marked(text))]


def judged(text: str, report: FileReport) -> tuple[ModelAnswer, ModelAnswer]:
    """The offline analyst's two answers on the report's one CWE-89 candidate."""
    [candidate] = [c for c in report.candidates if c.cwe == 89]
    analyst = OfflineAnalyst()
    first = analyst.analyze(ModelRequest(candidate=candidate, source=text, brief=""))
    second = analyst.analyze(ModelRequest(candidate=candidate, source=text, brief="", pass_name="revalidate",
                                          prior=first.to_json()))
    return first, second


@pytest.mark.parametrize("shape", list(C1))
def test_c1_the_pipeline_keeps_each_shape(tmp_path: Path, shape: str) -> None:
    """Case 09 as written (parameters, no entry point in the file) is kept; the analyst calls it
    uncertain, as it does bandit's own B608 candidates there. Fed by a route, it is vulnerable."""
    text, report = scan(tmp_path, "def query(cur, col, table, v):\n    " + C1[shape][0] + "\n")
    first, second = judged(text, report)
    assert (first.cwe, survives(first), survives(second)) == (89, True, True), first.rationale
    text, report = scan(tmp_path, ROUTE + "def query(cur, col, table, v):\n    " + C1[shape][0] + "\n")
    first, second = judged(text, report)
    assert (first.verdict, first.cwe, second.verdict) == ("vulnerable", 89, "vulnerable"), first.rationale


def test_fl001_candidate_is_built_like_bandits(tmp_path: Path) -> None:
    text, report = scan(tmp_path, """
        class Repo:
            def _names(self, cur, v):
                cur.execute("SELECT a " + "FROM " + v)  # here
                return cur.fetchall()
        """)
    [candidate] = report.candidates
    line = marked(text)
    # A private method no caller reaches: no flow, so FL001's candidate stands, carrying what the
    # taint engine saw reach the sink (a parameter: callers decide).
    assert candidate.evidence is not None and candidate.evidence["state"] == "parameter"
    assert candidate.context_hash and dataclasses.replace(candidate, evidence=None, context_hash=None) == Candidate(
        id=candidate_id("app/code.py", line, 20, "FL001"), path="app/code.py", line=line, col=20, end_line=line,
        rule_id="FL001", rule_name="sql_built_from_strings", detector="fleetledger", cwe=89,
        detector_severity="MEDIUM", detector_confidence="MEDIUM",
        message=("SQL text built by concatenation with a run-time value is run by cur.execute();"
                 " pass values as query parameters."),
        snippet="\n".join(text.splitlines()[line - 2 : line + 1]), scope="Repo._names",
    )


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("""
            def drop(cur, table):
                cur.execute(f"DROP TABLE {table}")  # here
            """, id="drop-fstring"),
        pytest.param("""
            def find(cur, name):
                query = "SELECT id FROM users WHERE active = 1"
                query += " AND name = '" + name + "'"  # here
                cur.execute(query)
            """, id="variable-built-earlier"),
        pytest.param("""
            from sqlalchemy import text
            def find(session, v):
                return session.execute(text("SELECT a " + "FROM t WHERE b = " + v))  # here
            """, id="sqlalchemy-text"),
        pytest.param("""
            def remove(cur, v):
                cur.executemany("DELETE " + "FROM t WHERE id = {}".format(v), [])  # here
            """, id="format-executemany"),
        pytest.param("""
            def show(cur, v):
                return cur.mogrify("UPDATE t " + "SET a = %s" % v)  # here
            """, id="percent-mogrify"),
        pytest.param("""
            def named(v):
                return User.objects.raw("SELECT * " + "FROM auth_user WHERE name = '%s'" % v)  # here
            """, id="django-raw"),
    ],
)
def test_fl001_other_shapes_bandit_misses(tmp_path: Path, source: str) -> None:
    text, report = scan(tmp_path, source)
    assert of_cwe(report, 89) == [("FL001", marked(text))]


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("""
            def find(cur, uid):
                cur.execute("SELECT a " + "FROM t " + "WHERE id = %s", (uid,))
            """, id="constant-concatenation-with-params"),
        pytest.param("""
            def find(cur, uid):
                cur.execute(f"SELECT a FROM t WHERE id = {1}", (uid,))
            """, id="constant-fstring"),
        pytest.param("""
            def find(cur, uid):
                query = "SELECT a " + "FROM t WHERE id = %s"
                cur.execute(query, (uid,))
            """, id="constant-variable"),
        pytest.param("""
            def find(cur, uid):
                query = "SELECT a FROM t WHERE 1 = 1"
                query = query + " AND id = %s"
                cur.execute(query, (uid,))
            """, id="variable-extended-with-constants"),
        pytest.param("""
            def find(cur, active):
                cur.execute("SELECT a FROM t" + (" WHERE active = 1" if active else ""))
            """, id="constant-branches"),
        pytest.param("""
            def run(cur, script):
                cur.executescript(script + "\\n")
            """, id="no-sql-words"),
        pytest.param("""
            def log(logger, v):
                logger.info("SELECT a " + "FROM " + v)
            """, id="not-a-sql-call"),
    ],
)
def test_fl001_safe_twins_give_nothing(tmp_path: Path, source: str) -> None:
    _, report = scan(tmp_path, source)
    assert (ours(report), report.internal_errors) == ([], ())


# --- FL002 -------------------------------------------------------------------------------------

FL002_SHAPES = {
    "requests-request": """
        import requests
        def fetch(url):
            return requests.request("GET", url, verify=False, timeout=5)  # here
        """,
    "session-in-scope": """
        import requests
        def fetch(url):
            session = requests.Session()
            return session.get(url, verify=False, timeout=5)  # here
        """,
    "session-imported-by-name": """
        from requests import Session
        def fetch(url):
            with Session() as s:
                return s.post(url, verify=False, timeout=5)  # here
        """,
    "session-attribute": """
        class Api:
            def fetch(self, url):
                return self.session.put(url, verify=False, timeout=5)  # here
        """,
    "client-attribute-of-any-name": """
        class Api:
            def fetch(self, url):
                return self._transport.get(url, verify=False, timeout=5)  # here
        """,
    "client-passed-in": """
        def fetch(http, url):
            return http.post(url, data={}, verify=False)  # here
        """,
    "httpx-client-method": """
        import httpx
        def fetch(url):
            client = httpx.Client()
            return client.request("GET", url, verify=False)  # here
        """,
    "default-context-switched-off": """
        import ssl
        def context():
            ctx = ssl.create_default_context()
            ctx.check_hostname = False  # here
            ctx.verify_mode = ssl.CERT_NONE
            return ctx
        """,
    "default-context-cert-none": """
        import ssl as s
        def context():
            ctx = s.create_default_context()
            ctx.verify_mode = s.CERT_NONE  # here
            return ctx
        """,
    "process-default-unverified": """
        import ssl
        import urllib.request
        ssl._create_default_https_context = ssl._create_unverified_context  # here
        urllib.request.urlopen("https://example.org/")
        """,
    "process-default-through-a-name": """
        import ssl
        try:
            _unverified = ssl._create_unverified_context
        except AttributeError:
            pass
        else:
            ssl._create_default_https_context = _unverified  # here
        """,
    "session-kept-on-self": """
        import requests
        class Client:
            def __init__(self):
                self.http = requests.Session()
                self.http.trust_env = self.http.verify = False  # here
        """,
    "session-verify-attribute": """
        import requests
        def fetch(url):
            client = requests.Session()
            client.verify = False  # here
            return client.get(url, timeout=5)
        """,
}


@pytest.mark.parametrize("shape", list(FL002_SHAPES))
def test_fl002_shapes_bandit_misses(tmp_path: Path, shape: str) -> None:
    text, report = scan(tmp_path, FL002_SHAPES[shape])
    assert of_cwe(report, 295) == [("FL002", marked(text))]
    [candidate] = [c for c in report.candidates if c.cwe == 295]
    assert (candidate.detector, candidate.rule_name) == ("fleetledger", "tls_verification_disabled")


@pytest.mark.parametrize(
    "source, rule",
    [
        pytest.param("""
            import httpx
            def fetch(url):
                return httpx.get(url, verify=False)  # here
            """, "B501", id="httpx-get"),
        pytest.param("""
            import httpx
            def fetch(url):
                with httpx.Client(verify=False) as client:  # here
                    return client.get(url)
            """, "B501", id="httpx-client"),
        pytest.param("""
            import requests
            def fetch(url):
                return requests.get(url, verify=False, timeout=5)  # here
            """, "B501", id="requests-get"),
        pytest.param("""
            import ssl
            def context():
                return ssl._create_unverified_context()  # here
            """, "B323", id="unverified-context"),
    ],
)
def test_fl002_gives_way_to_bandit_on_what_bandit_flags(tmp_path: Path, source: str, rule: str) -> None:
    text, report = scan(tmp_path, source)
    hits, _ = detectors.detect(ast.parse(text))
    assert [(hit.rule.rule_id, hit.node.lineno) for hit in hits] == [("FL002", marked(text))]
    assert of_cwe(report, 295) == [(rule, marked(text))]


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("""
            import requests
            def fetch(url):
                session = requests.Session()
                return session.get(url, verify="/etc/ssl/ca.pem", timeout=5)
            """, id="session-with-ca-bundle"),
        pytest.param("""
            import requests
            def fetch(url):
                return requests.request("GET", url, verify=True, timeout=5)
            """, id="request-verified"),
        pytest.param("""
            import ssl
            def context():
                ctx = ssl.create_default_context()
                ctx.check_hostname = True
                ctx.verify_mode = ssl.CERT_REQUIRED
                return ctx
            """, id="default-context-kept-on"),
        pytest.param("""
            import requests
            def fetch(url, options):
                client = requests.Session()
                client.verify = "/etc/ssl/ca.pem"
                options.verify = False
                return client.get(url, timeout=5)
            """, id="session-with-ca-bundle-attribute"),
        pytest.param("""
            import ssl
            ssl._create_default_https_context = ssl.create_default_context
            """, id="process-default-verified"),
        pytest.param("""
            import httpx
            def fetch(url):
                client = httpx.Client()
                client.verify = False
                return client.get(url)
            """, id="httpx-reads-verify-only-in-its-constructor"),
    ],
)
def test_fl002_safe_twins_give_nothing(tmp_path: Path, source: str) -> None:
    _, report = scan(tmp_path, source)
    assert (ours(report), report.internal_errors) == ([], ())


# --- dedupe, failures, depth -------------------------------------------------------------------


def test_a_query_bandit_flags_gives_one_candidate_though_both_detectors_find_it(tmp_path: Path) -> None:
    text, report = scan(tmp_path, """
        def query(cur, v, w):
            cur.execute(f"SELECT a FROM t WHERE b = {v}")
            sql = "SELECT a FROM t WHERE c = '%s'" % w
            cur.execute(sql)
        """)
    hits, errors = detectors.detect(ast.parse(text))
    assert ([(hit.rule.rule_id, hit.node.lineno) for hit in hits], errors) == ([("FL001", 2), ("FL001", 3)], [])
    assert of_cwe(report, 89) == [("B608", 2), ("B608", 3)]


def test_django_extra_gives_way_to_bandits_b610(tmp_path: Path) -> None:
    text, report = scan(tmp_path, """
        def named(v):
            return User.objects.extra(where=["name = '" + v + "'"])  # here
        """)
    hits, _ = detectors.detect(ast.parse(text))
    assert [(hit.rule.rule_id, hit.node.lineno) for hit in hits] == [("FL001", marked(text))]
    assert of_cwe(report, 89) == [("B610", marked(text))]


def test_unflagged_keeps_hits_another_cwe_or_place_marks() -> None:
    tree = ast.parse('def f(cur, v):\n    cur.execute("SELECT a " + "FROM " + v)\n')
    hits, _ = detectors.detect(tree)
    assert detectors.unflagged(hits, [(2, 4, 89)]) == []  # the call starts at column 4
    assert detectors.unflagged(hits, [(2, 4, 78), (1, 0, 89), (3, 0, 89)]) == hits


def test_one_rule_that_raises_is_an_internal_error_and_the_others_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(index: object) -> list[object]:
        raise RuntimeError("boom")

    sql, tls = detectors.RULES
    monkeypatch.setattr(detectors, "RULES", (dataclasses.replace(sql, find=boom), tls))
    text, report = scan(tmp_path, """
        import requests
        def fetch(cur, url, v):
            cur.execute("SELECT a " + "FROM " + v)
            return requests.request("GET", url, verify=False, timeout=5)  # here
        """)
    assert report.status == "scanned"
    assert ours(report) == [("FL002", marked(text))]
    assert report.internal_errors == ("FL001 sql_built_from_strings raised RuntimeError: boom",)


def test_a_tree_deeper_than_the_recursion_limit_is_walked() -> None:
    template = ast.parse('def f(cur, v):\n    cur.execute("SELECT a FROM t WHERE b = " + v)\n')
    call = template.body[0].body[0].value  # type: ignore[attr-defined]
    query = call.args[0]
    for _ in range(sys.getrecursionlimit() * 20):
        query = ast.BinOp(left=query, op=ast.Add(), right=ast.Name(id="v", ctx=ast.Load()))
        ast.copy_location(query, call.args[0])
        ast.copy_location(query.right, call.args[0])
    call.args[0] = query
    hits, errors = detectors.detect(template)
    assert ([(hit.rule.rule_id, hit.node) for hit in hits], errors) == ([("FL001", query)], [])


def test_a_deep_file_is_scanned_as_deep_as_bandit_goes(tmp_path: Path) -> None:
    terms = " + ".join(["v"] * 300)
    query = f'"SELECT a " + "FROM t WHERE b = " + {terms}'
    text, report = scan(tmp_path, f"def f(cur, v):\n    cur.execute({query})  # here\n")
    assert (report.status, of_cwe(report, 89)) == ("scanned", [("FL001", marked(text))])


def test_verification_turned_off_only_at_the_callers_request_is_uncertain(tmp_path: Path) -> None:
    """Regression (a clean HTTP client's option): ``ctx.verify_mode = ssl.CERT_NONE`` under
    ``elif verify is False:`` was reported "vulnerable"; its callers decide, as for a public
    function's parameter. Turned off whatever the caller says, or under a test of a parameter
    that is no on/off switch (found attacking the rule), it stays vulnerable."""
    from fleetledger.analysis import verdicts
    from fleetledger.analysis.tree import SourceTree

    text = textwrap.dedent("""
        import ssl
        def context(verify=True):
            ctx = ssl.create_default_context()
            if verify is True:
                return ctx
            elif verify is False:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            return ctx
        def always():
            ctx = ssl.create_default_context()
            ctx.verify_mode = ssl.CERT_NONE
            return ctx
        def unrelated(data=None):
            ctx = ssl.create_default_context()
            if data is None:
                ctx.verify_mode = ssl.CERT_NONE
            return ctx
        """)
    tree = SourceTree.parse(text)
    switched, fixed, other = sorted((n for n in ast.walk(tree.module) if isinstance(n, ast.Assign)
                                     and isinstance(n.value, ast.Attribute) and n.value.attr == "CERT_NONE"),
                                    key=lambda n: n.lineno)
    judged = verdicts.tls(tree, switched, 295)
    assert judged.verdict == "uncertain" and "parameter 'verify' (line 7)" in judged.facts[0]
    assert verdicts.tls(tree, fixed, 295).verdict == "vulnerable"
    assert verdicts.tls(tree, other, 295).verdict == "vulnerable"  # a test of a parameter that is no switch
