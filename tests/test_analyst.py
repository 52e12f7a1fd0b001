"""The offline analyst: verdicts from the facts the detect step recorded, test and dead code,
and the rule that a finding is dismissed only for a reason it can show (issue 12, item 4).

Candidates come from the real detect step (bandit through its Python API and the taint engine)
on files written to a temporary root; the sink line of each snippet ends with ``# sink``.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from fleetledger.jobs.scan.detect import detect_file
from fleetledger.jobs.scan.shapes import Candidate, ModelAnswer, ModelRequest, survives
from fleetledger.models.offline import OfflineAnalyst

ANALYST = OfflineAnalyst()


def judged(root: Path, relpath: str, source: str, **readable: str) -> list[tuple[Candidate, ModelAnswer, ModelAnswer]]:
    """Detects, investigates and revalidates every candidate on the line marked ``# sink``."""
    text = textwrap.dedent(source).lstrip("\n")
    (root / relpath).parent.mkdir(parents=True, exist_ok=True)
    (root / relpath).write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if row.rstrip().endswith("# sink"))
    out = []
    for candidate in detect_file(root, relpath).candidates:
        if candidate.line != line:
            continue
        first = ANALYST.analyze(ModelRequest(candidate=candidate, source=text, brief=""))
        second = ANALYST.analyze(ModelRequest(candidate=candidate, source=text, brief="", pass_name="revalidate",
                                              prior=first.to_json()))
        out.append((candidate, first, second))
    assert out, f"nothing flagged on line {line}"
    return out


def test_request_data_in_a_shell_command_is_vulnerable_and_the_rationale_shows_the_trace(tmp_path: Path) -> None:
    [(candidate, first, second)] = judged(tmp_path, "app.py", """
        import os
        from flask import Flask, request
        app = Flask(__name__)

        @app.route("/ping")
        def ping():
            host = request.args["host"]
            os.system("ping -c1 " + host)  # sink
    """)
    assert candidate.rule_id == "FLT-command" and [f["rule_id"] for f in candidate.trace["also"]] == ["B605"]
    assert (first.verdict, first.confidence, second.verdict) == ("vulnerable", 9, "vulnerable")
    assert "Source: args of the Werkzeug/Flask request (line 7) -> assigned to host (line 7) -> sink:" in first.rationale
    assert first.signals["channel"] == "http"


@pytest.mark.parametrize("value, state, kept", [
    ('"ls -l"', "constant", False),
    ('"ls " + shlex.quote(os.environ["DIR"])', "sanitised", False),
    ("name", "unknown", True),
])
def test_bandit_candidates_are_judged_by_what_reached_their_sink(tmp_path: Path, value: str, state: str, kept: bool) -> None:
    [(candidate, first, second)] = [j for j in judged(tmp_path, "tool.py", f"""
        import os, shlex
        from config import name

        def _run():
            os.system({value})  # sink
    """) if j[0].rule_id == "B605"]
    assert candidate.rule_id == "B605" and candidate.evidence["state"] == state
    assert survives(first) == survives(second) == kept
    if not kept:
        assert first.verdict == "not_vulnerable"
    else:
        # An origin the analysis cannot see is no reason to dismiss: kept, marked uncertain.
        assert (second.verdict, second.confidence) == ("uncertain", 5)
        assert "not dismissed" in second.rationale


def test_a_public_function_is_an_entry_point_and_test_code_is_not_deployed(tmp_path: Path) -> None:
    [(candidate, first, _)] = judged(tmp_path, "lib/cache.py", """
        import pickle

        def load(blob):
            return pickle.loads(blob)  # sink
    """)
    assert candidate.rule_id == "FLT-deserialization"
    assert (first.verdict, first.signals["reach"]) == ("uncertain", "api") and survives(first)
    [(_, in_test, _)] = judged(tmp_path, "tests/test_cache.py", """
        import pickle

        def load(blob):
            return pickle.loads(blob)  # sink
    """)
    assert in_test.verdict == "not_vulnerable" and "test code" in in_test.rationale


def test_code_that_never_runs_is_dismissed_with_the_reason(tmp_path: Path) -> None:
    [(_, first, second)] = judged(tmp_path, "app.py", """
        import os
        from flask import Flask, request
        app = Flask(__name__)

        @app.route("/x")
        def x():
            return "ok"
            os.system(request.args["c"])  # sink
    """)
    assert first.verdict == second.verdict == "not_vulnerable"
    assert "never runs" in second.rationale


def test_a_file_that_does_not_parse_is_kept_as_uncertain() -> None:
    candidate = Candidate(id="c", path="a.py", line=1, col=0, end_line=1, rule_id="B605", rule_name="x",
                          detector="bandit", cwe=78, detector_severity="HIGH", detector_confidence="HIGH",
                          message="m", snippet="")
    answer = ANALYST.analyze(ModelRequest(candidate=candidate, source="def (:\n", brief=""))
    assert (answer.verdict, answer.confidence) == ("uncertain", 5) and survives(answer)


def test_hard_coded_credentials_are_judged_by_the_string_not_by_names(tmp_path: Path) -> None:
    strong = judged(tmp_path, "settings.py", 'password = "xK9#mQ2$vL8@pR4z"  # sink\n')
    assert strong[0][1].verdict == "vulnerable"
    word = judged(tmp_path, "settings2.py", 'password_field = "password_reset_token"  # sink\n')
    assert word[0][1].verdict == "not_vulnerable"
    # bandit's B106 points at the callee of a call nested in a statement: the keyword's string is judged.
    keyword = judged(tmp_path, "db.py", """
        import psycopg2

        def connect():
            return psycopg2.connect(host="db", user="svc", password="xK9#mQ2$vL8@pR4z")  # sink
    """)
    [(candidate, first, _)] = [row for row in keyword if row[0].rule_id == "B106"]
    assert first.verdict == "vulnerable" and "'xK******'" in first.rationale
    # Regression: bandit's B105 on ``config["SECRET_KEY"] = "..."`` points at the key; the
    # assigned string is judged, not the setting's name.
    stored = judged(tmp_path, "config.py", 'config = {}\nconfig["SECRET_KEY"] = "xK9#mQ2$vL8@pR4z"  # sink\n')
    assert [row[1].verdict for row in stored if row[0].rule_id == "B105"] == ["vulnerable"]
    # Regression: random characters holding a newline, or ending with "/", were taken for a
    # sentence or a prefix (Flask's documented key); words and word-like prefixes still are.
    from fleetledger.analysis.verdicts import _not_credential

    assert _not_credential('_5#y2L"F4Q8z\n\xec]/') is None
    assert _not_credential("Invalid user name or password.") == "a sentence written for people"
    assert _not_credential("Don't re-use it") == "a sentence written for people"
    assert _not_credential("api/v1/") == "a prefix that other text completes"


def test_a_framework_secret_is_a_credential_whatever_its_shape(tmp_path: Path) -> None:
    """Regression: a word, an identifier or a run of one letter was judged "not a credential"
    by its shape alone, so ``app.secret_key = "my_secret_key"`` vanished from the report. What
    a framework signs sessions with is the key, however weak; elsewhere the shape still counts."""
    stored = {
        'from flask import Flask\napp = Flask(__name__)\napp.config["SECRET_KEY"] = "aaaaaaa"  # sink\n': "B105",
        'from flask import Flask\napp = Flask(__name__)\napp.secret_key = "my_secret_key"  # sink\n': "B105",
        'SECRET_KEY = "secret"  # sink\n': "B105",
        'from flask import Flask\napp = Flask(__name__)\napp.config.update(SECRET_KEY="secret")  # sink\n': "B106",
        'CONFIG = {"SECRET_KEY": "development key"}  # sink\n': "B105",
    }
    for n, (source, rule) in enumerate(stored.items()):
        [(_, first, second)] = [row for row in judged(tmp_path, f"app{n}.py", source) if row[0].rule_id == rule]
        assert (first.verdict, second.verdict) == ("uncertain", "uncertain") and survives(second), source
        assert "anyone who" in first.rationale
    # Regression (attack 7): beside a URL in one call, the secret's own value is judged.
    [(_, mixed, _)] = judged(tmp_path, "mixed.py", 'from flask import Flask\napp = Flask(__name__)\n'
                             'app.config.update(SECRET_KEY="secret", DATABASE_URL="sqlite:///app.db")  # sink\n')
    assert mixed.verdict == "uncertain" and "'se****'" in mixed.rationale
    # A name in capitals there names the setting or the variable that holds the key.
    [(_, env_name, _)] = judged(tmp_path, "names.py", 'JWT_SECRET_KEY = "FLASK_JWT_SECRET_KEY"  # sink\n')
    assert env_name.verdict == "not_vulnerable"
    # Not stored in a framework's secret: the shape still decides.
    [(_, named, _)] = judged(tmp_path, "fields.py", 'password_field = "user_password"  # sink\n')
    assert named.verdict == "not_vulnerable"
    # A run of one letter or digit is a (weak) password, a run of "*" or "x" hides one.
    from fleetledger.analysis.verdicts import _not_credential

    assert _not_credential("aaaaaaa") is None and _not_credential("0000") is None
    assert _not_credential("********") == _not_credential("xxxxxx") == "a mask of one repeated character"
    assert _not_credential("XXXX-XXXX-XXXX") == _not_credential("**** ****") == "a mask of one repeated character"
    assert _not_credential("password-reset-salt") == "an identifier made of words (a key, field or setting name)"
    assert _not_credential("correct-horse-battery-staple") is None  # a passphrase names nothing


def test_markup_given_to_a_template_that_cannot_be_read_is_kept_as_uncertain(tmp_path: Path) -> None:
    """Markup built from request data for a template the scan cannot read is an XSS sink
    (code builds markup to have it written unescaped), judged uncertain: the template may
    escape it after all. The rationale says so."""
    [(candidate, first, second)] = judged(tmp_path, "views.py", """
        from django.shortcuts import render

        def links(request):
            html = '<a href="https://example.org/%s">more</a>' % request.GET["t"]
            return render(request, "missing.html", {"link": html})  # sink
    """)
    assert candidate.rule_id == "FLT-xss" and candidate.cwe == 79
    assert (first.verdict, second.verdict) == ("uncertain", "uncertain") and survives(second)
    assert "template was not read" in first.rationale


def test_a_class_based_view_renders_the_template_its_class_names(tmp_path: Path) -> None:
    """Regression (attack 7): ``render(request, self.template_name, ...)`` in a class-based view
    rendered a template the scan took for unread, so markup given to an existing template that
    escapes it was reported; the class body's constant names the template."""
    (tmp_path / "blog" / "templates" / "blog").mkdir(parents=True)
    (tmp_path / "blog" / "templates" / "blog" / "search.html").write_text("<div>{{ notice }}</div>\n")
    (tmp_path / "blog" / "views.py").write_text(textwrap.dedent("""
        from django.shortcuts import render
        from django.views import View

        class SearchView(View):
            template_name = "blog/search.html"

            def get(self, request):
                notice = '<p class="notice">Results for <em>%s</em></p>' % request.GET["q"]
                return render(request, self.template_name, {"notice": notice})
    """).lstrip())
    import hashlib

    def xss_lines() -> list[int]:
        readable = {p: hashlib.sha256((tmp_path / p).read_bytes()).hexdigest()
                    for p in ("blog/views.py", "blog/templates/blog/search.html")}
        return [c.line for c in detect_file(tmp_path, "blog/views.py", readable=readable).candidates
                if c.rule_id == "FLT-xss"]

    assert xss_lines() == []
    # The same template writing it with |safe is an XSS sink.
    (tmp_path / "blog" / "templates" / "blog" / "search.html").write_text("<div>{{ notice|safe }}</div>\n")
    assert xss_lines() == [9]


def test_a_flow_across_modules_is_reported_with_the_files_it_crossed(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "db.py").write_text(textwrap.dedent("""
        import sqlite3

        def _find(name):
            cur = sqlite3.connect("x.db").cursor()
            cur.execute("SELECT * FROM t WHERE n = '%s'" % name)
    """).lstrip())
    (tmp_path / "shop" / "views.py").write_text(textwrap.dedent("""
        from flask import Flask, request
        from .db import _find
        app = Flask(__name__)

        @app.route("/find")
        def find():
            return str(_find(request.args["n"]))
    """).lstrip())
    import hashlib

    shas = {p: hashlib.sha256((tmp_path / p).read_bytes()).hexdigest()
            for p in ("shop/__init__.py", "shop/db.py", "shop/views.py")}
    report = detect_file(tmp_path, "shop/views.py", readable=shas)
    call, flow = [c for c in report.candidates if c.rule_id == "FLT-sql"]  # (this file's first)
    assert (flow.path, flow.line) == ("shop/db.py", 5)
    trace = flow.trace["traces"][0]
    assert (trace["source"]["path"], trace["source"]["line"]) == ("shop/views.py", 7)
    assert [(s["path"], s["line"], s["what"]) for s in trace["steps"]] == [("shop/views.py", 7, "passed to _find()")]
    # Also reported where it leaves this file: the call that passes the request's value on.
    assert (call.path, call.line, call.scope, call.trace) == ("shop/views.py", 7, "find", flow.trace)
    assert call.message.endswith("passed to _find() here (shop/db.py, line 5).")
    assert report.read == ("shop/db.py",)
    # The policy decides what may be read: without db.py the flow is not followed (and nothing fails).
    alone = detect_file(tmp_path, "shop/views.py", readable={"shop/views.py": shas["shop/views.py"]})
    assert not [c for c in alone.candidates if c.rule_id == "FLT-sql"] and alone.read == ()


def test_a_model_class_from_another_file_has_its_orm_members_typed(tmp_path: Path) -> None:
    """``Order.objects.get(pk=value)`` returns the stored row, not the value (a lookup is not a
    flow); the manager's ``raw()`` is a SQL sink. Names are the test's own, not Django's."""
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "__init__.py").write_text("")
    (tmp_path / "store" / "tables.py").write_text(textwrap.dedent("""
        from django.db import models as m

        class Widget(m.Model):
            label = m.CharField(max_length=20)
    """).lstrip())
    (tmp_path / "store" / "pages.py").write_text(textwrap.dedent("""
        import subprocess
        from django.views.generic import View
        from .tables import Widget

        class Page(View):
            def post(self, request, token):
                row = Widget.objects.get(label=token)
                subprocess.run(f"{row.tool} {row.label}".split(" "))
                return Widget.objects.raw("SELECT * FROM w WHERE x = '%s'" % token)
    """).lstrip())
    import hashlib

    shas = {p: hashlib.sha256((tmp_path / p).read_bytes()).hexdigest()
            for p in ("store/__init__.py", "store/tables.py", "store/pages.py")}
    report = detect_file(tmp_path, "store/pages.py", readable=shas)
    flows = {(c.rule_id, c.line) for c in report.candidates if c.rule_id.startswith("FLT-")}
    assert flows == {("FLT-sql", 9)}


def test_two_thousand_sinks_of_one_value_are_capped_and_the_cap_is_reported(tmp_path: Path) -> None:
    lines = ["import os, sys", "x = sys.argv[1]"] + ["os.system(x)"] * 2000
    (tmp_path / "many.py").write_text("\n".join(lines) + "\n")
    report = detect_file(tmp_path, "many.py")
    assert report.status == "scanned"
    flows = [c for c in report.candidates if c.rule_id == "FLT-command"]
    assert len(flows) == 200 == len(report.candidates)  # the engine's flow cap, then the file's candidate cap
    assert any("more flow(s) not reported" in note for note in report.not_analysed)
    assert any("1800 more candidate(s) not reported" in note for note in report.not_analysed)


def test_a_long_concatenation_is_analysed_without_deep_recursion(tmp_path: Path) -> None:
    chain = " + ".join(["x"] * 5000)
    (tmp_path / "chain.py").write_text(f"import os, sys\nx = sys.argv[1]\nos.system({chain})\n")
    report = detect_file(tmp_path, "chain.py")
    if report.status == "scanned":  # the host parser may refuse a 5,000-term chain: then it says so
        assert [c.rule_id for c in report.candidates if c.line == 3][:1] == ["FLT-command"]
    else:
        assert report.reason == "nesting too deep"


def test_a_shipped_module_named_like_a_library_does_not_switch_its_sinks_off(tmp_path: Path) -> None:
    import hashlib

    (tmp_path / "subprocess.py").write_text("def run(cmd, shell=False):\n    return cmd\n")
    (tmp_path / "app.py").write_text(textwrap.dedent("""
        import subprocess
        from flask import Flask, request
        app = Flask(__name__)

        @app.route("/x")
        def x():
            subprocess.run(request.args["c"], shell=True)
            return "ok"
    """).lstrip())
    shas = {p: hashlib.sha256((tmp_path / p).read_bytes()).hexdigest() for p in ("app.py", "subprocess.py")}
    report = detect_file(tmp_path, "app.py", readable=shas)
    assert ("FLT-command", 7) in [(c.rule_id, c.line) for c in report.candidates]


def test_a_library_scanned_in_its_own_repository_keeps_the_guarantee_of_its_sanitisers(tmp_path: Path) -> None:
    """Regression: scanning Django itself, its ``safe_join`` (modelled as a path sanitiser) was
    evaluated from its code, whose check the engine cannot prove on every path (the base may
    be the root), and the join of that with the model's result kept the taint: three "high"
    path traversals in admindocs' template view."""
    import hashlib

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    (tmp_path / "lib" / "utils").mkdir()
    (tmp_path / "lib" / "utils" / "__init__.py").write_text("")
    (tmp_path / "lib" / "utils" / "_os.py").write_text(textwrap.dedent("""
        from os.path import abspath, dirname, join

        def safe_join(base, *paths):
            final = abspath(join(base, *paths))
            if not final.startswith(abspath(base)) and dirname(base) != base:
                raise ValueError(final)
            return final
    """).lstrip())
    views = textwrap.dedent("""
        from flask import Flask, request
        from lib.utils._os import safe_join
        app = Flask(__name__)

        @app.route("/x")
        def x():
            return open(safe_join("/srv/templates", request.args["name"])).read()
    """).lstrip()
    (tmp_path / "views.py").write_text(views)
    files = ("views.py", "lib/__init__.py", "lib/utils/__init__.py", "lib/utils/_os.py")
    shas = {p: hashlib.sha256((tmp_path / p).read_bytes()).hexdigest() for p in files}

    def paths() -> list[str]:
        report = detect_file(tmp_path, "views.py", readable=shas)
        return [c.rule_id for c in report.candidates if c.rule_id == "FLT-path"]

    assert paths() == ["FLT-path"]  # the code alone does not prove its check on every path
    # Named as Django names it, the models' guarantee holds for its callers.
    shutil.move(tmp_path / "lib", tmp_path / "django")
    (tmp_path / "views.py").write_text(views.replace("lib.utils._os", "django.utils._os"))
    shas = {p.replace("lib/", "django/"): hashlib.sha256((tmp_path / p.replace("lib/", "django/")).read_bytes()).hexdigest()
            for p in files}
    assert paths() == []


def test_the_taint_engine_past_its_budget_keeps_bandits_candidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fleetledger.analysis import engine

    analyse = engine.analyse
    monkeypatch.setattr(engine, "analyse", lambda *args, **kwargs: analyse(*args, **{**kwargs, "work_units": 3}))
    (tmp_path / "app.py").write_text("import os\nos.system(input())\n")
    report = detect_file(tmp_path, "app.py")
    assert report.status == "scanned" and [c.rule_id for c in report.candidates] == ["B605"]
    assert "app.py: module body not analysed to the end (work budget used up)" in report.not_analysed


def test_a_call_chain_deeper_than_the_engine_follows_is_reported_as_not_analysed(tmp_path: Path) -> None:
    from fleetledger.analysis import summaries

    depth = summaries.MAX_CALL_DEPTH + 4
    lines = ["import os", "from flask import Flask, request", "app = Flask(__name__)", "",
             "@app.route('/run')", "def run():", "    return _w0(request.args['f'])"]
    lines += [f"def _w{n}(c):\n    return _w{n + 1}(c)" for n in range(depth)]
    lines += [f"def _w{depth}(c):\n    os.system(c)"]
    (tmp_path / "chain.py").write_text("\n".join(lines) + "\n")
    report = detect_file(tmp_path, "chain.py")
    assert any("deeper than" in note for note in report.not_analysed)


def test_cross_file_candidates_keep_the_strongest_origin_whatever_the_file_order() -> None:
    from fleetledger.jobs.scan.report import _unique_candidates
    from fleetledger.jobs.scan.shapes import FileReport

    def flow(channel: str) -> Candidate:
        trace = {"source": {"channel": channel, "what": channel, "path": "a.py", "line": 1, "col": 0},
                 "steps": [], "sink": {"path": "store.py", "line": 5, "col": 0}, "sanitisers": []}
        return Candidate(id="same", path="store.py", line=5, col=0, end_line=5, rule_id="FLT-sql", rule_name="sql",
                         detector="fleetledger-taint", cwe=89, detector_severity="HIGH", detector_confidence="HIGH",
                         message=channel, snippet="", trace={"traces": [trace], "also": []})

    def report(path: str, c: Candidate) -> FileReport:
        return FileReport(path=path, sha256="0" * 64, size_bytes=1, status="scanned", candidates=(c,))

    one = _unique_candidates({"a": report("a.py", flow("api")), "b": report("b.py", flow("http"))})
    two = _unique_candidates({"a": report("a.py", flow("http")), "b": report("b.py", flow("api"))})
    assert one == two and [t["source"]["channel"] for t in one[0].trace["traces"]] == ["http", "api"]
    # Equal traces, candidates otherwise different: the same one is kept in either order.
    from dataclasses import replace

    shown = replace(flow("http"), snippet="os.system(x)")
    assert (_unique_candidates({"a": report("a.py", shown), "b": report("b.py", flow("http"))})
            == _unique_candidates({"a": report("a.py", flow("http")), "b": report("b.py", shown)}))


def test_a_files_report_does_not_depend_on_which_files_the_worker_analysed_before(tmp_path: Path) -> None:
    """Found by the multi-host test: a summary shared from an earlier file's analysis hid the
    flows found inside that function when its own file came later."""
    import hashlib

    from fleetledger.analysis import program, summary_sharing

    (tmp_path / "a.py").write_text(textwrap.dedent("""
        import os
        from flask import request

        def handle(extra):
            os.system(request.args["c"])
            return extra
    """).lstrip())
    (tmp_path / "b.py").write_text("import sys\nfrom a import handle\n\nhandle(sys.argv[1])\n")
    shas = {p: hashlib.sha256((tmp_path / p).read_bytes()).hexdigest() for p in ("a.py", "b.py")}

    def a_after(first: list[str]) -> list[tuple[str, int]]:
        summary_sharing._SHARED.clear()
        program._SHARED_MODULES.clear()
        for path in first:
            detect_file(tmp_path, path, readable=shas)
        return [(c.rule_id, c.line) for c in detect_file(tmp_path, "a.py", readable=shas).candidates]

    assert a_after([]) == a_after(["b.py"]) and ("FLT-command", 5) in a_after([])


def test_a_summary_taken_from_the_shared_cache_brings_the_classes_its_result_names(tmp_path: Path) -> None:
    """Found on Django by bench/incremental.py (two full scans of one tree differed in the SQLite
    backend): ``make``'s summary, computed while ``first.py`` was analysed, returns a
    ``things.Thing``; ``second.py``, analysed next by the same worker, took that summary from
    the shared cache without loading ``things``, so ``made.run()`` did not resolve and the
    command injection inside it was lost."""
    import hashlib

    from fleetledger.analysis import program, summary_sharing
    from fleetledger.jobs.scan import modules

    (tmp_path / "things.py").write_text("import os\n\n\nclass Thing:\n    def __init__(self, value):\n"
                                        "        self.value = value\n\n    def run(self):\n        os.system(self.value)\n")
    (tmp_path / "factory.py").write_text("import things\n\n\ndef make(value):\n    return things.Thing(value)\n")
    (tmp_path / "first.py").write_text("from flask import request\n\nimport factory\n\n\n"
                                       "def view_one():\n    return factory.make(request.args['a'])\n")
    (tmp_path / "second.py").write_text("from flask import request\n\nimport factory\n\n\n"
                                        "def view_two():\n    made = factory.make(request.args['b'])\n    made.run()\n")
    shas = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in tmp_path.glob("*.py")}

    def second_after(first: list[str]) -> list[tuple[str, int, str]]:
        summary_sharing._SHARED.clear()
        program._SHARED_MODULES.clear()
        modules._parsed.clear()
        for path in first:
            detect_file(tmp_path, path, readable=shas)
        return [(c.path, c.line, c.rule_id) for c in detect_file(tmp_path, "second.py", readable=shas).candidates]

    assert second_after([]) == second_after(["first.py"]) == [("second.py", 8, "FLT-command"), ("things.py", 9, "FLT-command")]


def test_a_candidate_in_another_file_is_the_same_whichever_files_were_analysed_before(tmp_path: Path) -> None:
    """Found by the four-host test: a module taken from the process's shared cache was not read
    by this file's detect step, so a flow ending in it lost its snippet (and its columns could
    not be converted); the report then depended on which host found the flow."""
    import hashlib

    from fleetledger.analysis import program, summary_sharing
    from fleetledger.jobs.scan import modules

    (tmp_path / "sinks.py").write_text('import os\n\ndef run(text):\n    os.system("échö " + text)\n')
    (tmp_path / "entry.py").write_text('from flask import request\nfrom sinks import run\n\n'
                                       'def view():\n    run(request.args["q"])\n')
    (tmp_path / "other.py").write_text("import sinks\n\nsinks.run('x')\n")
    shas = {p: hashlib.sha256((tmp_path / p).read_bytes()).hexdigest() for p in ("sinks.py", "entry.py", "other.py")}

    def entry_after(first: list[str]) -> list[Candidate]:
        summary_sharing._SHARED.clear()
        program._SHARED_MODULES.clear()
        modules._parsed.clear()
        for path in first:
            detect_file(tmp_path, path, readable=shas)
        return [c for c in detect_file(tmp_path, "entry.py", readable=shas).candidates if c.path == "sinks.py"]

    fresh = entry_after([])
    assert [(c.rule_id, c.line) for c in fresh] == [("FLT-command", 4)] and "os.system" in fresh[0].snippet
    assert entry_after(["other.py"]) == fresh


def template_sinks(root: Path, view: str, template: str) -> tuple[Any, list[str]]:
    """Detects ``view`` with ``template`` readable: the report, and what each trace of its one
    XSS candidate says of its sink, sorted."""
    import hashlib

    shas = {p: hashlib.sha256((root / p).read_bytes()).hexdigest() for p in (view, template)}
    report = detect_file(root, view, readable=shas)
    [xss] = [c for c in report.candidates if c.rule_id == "FLT-xss"]
    return report, sorted(t["sink"]["what"] for t in xss.trace["traces"])


def test_a_template_that_writes_a_variable_unescaped_is_a_sink_for_what_the_view_passes(tmp_path: Path) -> None:
    (tmp_path / "blog" / "templates" / "blog").mkdir(parents=True)
    (tmp_path / "blog" / "views.py").write_text(textwrap.dedent("""
        from django.shortcuts import render

        def search(request):
            query = request.GET.get("q", "")
            posts = [request.GET.get("p")]
            return render(request, "blog/search.html", {"query": query, "posts": posts, "title": query})
    """).lstrip())
    (tmp_path / "blog" / "templates" / "blog" / "search.html").write_text(
        "<h1>{{ title }}</h1>\n{% autoescape off %}<p>{{ query }}</p>{% endautoescape %}\n"
        "{% for post in posts %}{{ post.body|safe }}{% endfor %}\n")
    report, sinks = template_sinks(tmp_path, "blog/views.py", "blog/templates/blog/search.html")
    assert any("query, written unescaped (an autoescape off block) at blog/templates/blog/search.html:2" in s for s in sinks)
    assert any("posts, written unescaped (the safe filter) at blog/templates/blog/search.html:3" in s for s in sinks)
    assert not any("title" in s for s in sinks)  # escaped: autoescaping is on there
    assert report.read == ("blog/templates/blog/search.html",)


def test_a_variable_in_a_templates_script_code_is_a_sink_where_html_escaping_does_not_protect_it(tmp_path: Path) -> None:
    """Autoescaping does not hold a value written into a script's code or an event-handler
    attribute (pygoat's XSS lab 3: letters and digits removed, the rest into a <script>); a
    quoted string literal of the script holds it, and escapejs/tojson do."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "app.py").write_text(textwrap.dedent("""
        import re
        from flask import Flask, render_template, request

        app = Flask(__name__)

        @app.route("/lab")
        def lab():
            given = re.sub(r"[a-zA-Z0-9]", "", request.form.get("name", ""))
            return render_template("lab.html", code=given, quoted=given, encoded=given, shown=given,
                                   clicked=given)
    """).lstrip())
    (tmp_path / "templates" / "lab.html").write_text(
        "<p>{{ shown }}</p>\n<script>\n  var q = \"{{ quoted }}\";\n  {{ code }}\n  var e = {{ encoded|tojson }};\n"
        "</script>\n<a onclick=\"go('{{ clicked }}')\">go</a>\n")
    _, sinks = template_sinks(tmp_path, "app.py", "templates/lab.html")
    assert [s.split(",")[0] for s in sinks] == ["the template variable clicked", "the template variable code"], sinks
    assert "a <script> block" in sinks[1] and "templates/lab.html:4" in sinks[1]

@pytest.mark.parametrize("url, verdict", [
    ("request.get_full_path()", "uncertain"),
    ('"https://%s%s" % (request.get_host(), request.path)', "uncertain"),
    ('request.get_full_path() + request.GET["next"]', "vulnerable"),
    ('request.get_full_path().split("next=")[-1]', "vulnerable"),  # a part cut out of it: the client's choice
    ('request.GET["next"]', "vulnerable"),
])
def test_a_redirect_to_the_requests_own_address_is_uncertain(tmp_path: Path, url: str, verdict: str) -> None:
    """Regression (Django's own admin and middlewares, eighteen findings): a redirect to the
    request's own path, URL or host was "vulnerable" as if the client chose any URL; a link
    chooses them only as an address of this site, an open redirect only where a path starting
    with // reaches the view. Any other outside data in the URL keeps it vulnerable."""
    [(candidate, first, second)] = [found for found in judged(tmp_path, "views.py", f"""
        from django.http import HttpResponseRedirect

        def again(request):
            return HttpResponseRedirect({url})  # sink
    """) if found[0].rule_id == "FLT-redirect"]
    assert (first.verdict, second.verdict) == (verdict, verdict), first.rationale
    assert ("leaves the site only where a path starting with //" in first.rationale) == (verdict == "uncertain")


def test_a_module_taken_from_the_shared_cache_brings_the_modules_its_globals_name(tmp_path: Path) -> None:
    """Found on Django by bench/scan_time.py (90 files reported "internal error: KeyError"):
    ``translation.py``'s body, run while an earlier file was analysed, binds ``gettext_lazy``
    to a function nested in ``lazy`` (another module); a later file that took ``translation``
    from the process's shared cache without loading that module could not resolve the name."""
    import hashlib

    from fleetledger.analysis import program, summary_sharing
    from fleetledger.jobs.scan import modules

    (tmp_path / "functional.py").write_text(textwrap.dedent("""
        def lazy(func):
            def wrapper(*args):
                return func(*args)
            return wrapper
    """).lstrip())
    (tmp_path / "translation.py").write_text("from functional import lazy\n\n\ndef gettext(message):\n"
                                             "    return message\n\n\ngettext_lazy = lazy(gettext)\n")
    (tmp_path / "first.py").write_text("from translation import gettext_lazy\n\nprint(gettext_lazy('x'))\n")
    (tmp_path / "second.py").write_text(textwrap.dedent("""
        import os
        from flask import request
        from translation import gettext_lazy as _

        def view():
            os.system(_(request.args["m"]))
    """).lstrip())
    shas = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in tmp_path.glob("*.py")}

    def second_after(first: list[str]) -> tuple[tuple[str, ...], list[tuple[str, int]]]:
        summary_sharing._SHARED.clear()
        program._SHARED_MODULES.clear()
        modules._parsed.clear()
        for path in first:
            detect_file(tmp_path, path, readable=shas)
        report = detect_file(tmp_path, "second.py", readable=shas)
        return report.internal_errors, [(c.rule_id, c.line) for c in report.candidates]

    assert second_after([]) == second_after(["first.py"]) == ((), [("FLT-command", 6)])
