"""The taint engine on annotated probe files (``tests/data/taint``), in the manner of CodeQL's
``# $ Alert`` and semgrep's ``# ruleid:`` tests.

A probe line ending in ``# $ kind`` must be flagged with a flow (or an API misuse) of that kind
at that line; ``# ok kind`` must not be; and no line may be flagged with a kind it does not
announce. The probes were written to exercise the engine, so they are tests, not benchmarks
(``bench/corpora.py`` judges the engine on code written by others).

The rename test rewrites every identifier a probe's author chose (variables, functions, classes,
parameters, attributes) and checks that no verdict changes: the engine may name library APIs and
framework conventions only.
"""

from __future__ import annotations

import io
import re
import sys
import textwrap
import tokenize
from pathlib import Path

import pytest

from fleetledger.analysis import catalog, engine, parser
from fleetledger.analysis.definitions import module_index
from fleetledger.analysis.program import Program

PROBES = Path(__file__).parent / "data" / "taint"
FILES = sorted(p.name for p in PROBES.glob("*.py"))
_MARK = re.compile(r"(\$|ok)\s+([a-z][a-z-]*)")


def expectations(text: str) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """The (kind, line) pairs a probe says must be flagged, and must not be."""
    flagged, clean = set(), set()
    for number, line in enumerate(text.splitlines(), start=1):
        if "#" not in line:
            continue
        comment = line[line.index("#", len(line.split("#")[0])):]
        for mark, kind in _MARK.findall(comment):
            (flagged if mark == "$" else clean).add((kind, number))
    return flagged, clean


def reported(name: str, text: str) -> set[tuple[str, int]]:
    """The (kind, line) pairs the engine reports for a probe (flows at their sink, misuses at
    their call)."""
    tree = parser.parse_module(text).module
    result = engine.analyse(name, tree)
    assert result.not_analysed == ()
    return {(f.kind, f.site.line) for f in result.flows if f.site.path == name} | {
        (m.kind, m.site.line) for m in result.misuses if m.site.path == name}


@pytest.mark.parametrize("name", FILES)
def test_probe(name: str) -> None:
    text = (PROBES / name).read_text()
    flagged, clean = expectations(text)
    found = reported(name, text)
    assert flagged, "a probe must announce at least one flow"
    assert sorted(flagged - found) == [], "missed"
    assert sorted(found & clean) == [], "flagged a line marked ok"
    assert sorted(found - flagged) == [], "flagged a line without a marker"


def test_a_url_whose_host_is_fixed_is_a_partial_ssrf_and_a_local_redirect_is_safe() -> None:
    text = (PROBES / "flask_app.py").read_text()
    flows = engine.analyse("flask_app.py", parser.parse_module(text).module).flows
    ssrf = {f.site.line: f.partial for f in flows if f.kind == "ssrf"}
    partial_line = next(n for n, line in enumerate(text.splitlines(), 1) if "api.example.com/items/" in line)
    assert ssrf.pop(partial_line) is True and set(ssrf.values()) == {False}
    local = next(n for n, line in enumerate(text.splitlines(), 1) if '"/profile/" + target' in line)
    assert not [f for f in flows if f.kind == "redirect" and f.site.line == local]


def test_a_checked_start_fixes_the_host_as_a_constant_start_would() -> None:
    """Where ``url.startswith("https://api.example.org/")`` holds, the URL starts so: a request
    to it is a partial SSRF and a redirect to it stays on that site, for requests and for curl
    alike; a start without the slash after the host fixes nothing (``.example.org.evil``)."""
    text = textwrap.dedent("""
        import subprocess
        import requests
        from flask import Flask, abort, redirect, request

        app = Flask(__name__)

        @app.route("/a")
        def a():
            url = request.args["u"]
            if not url.startswith(("https://api.example.org/", "https://api.example.org/v2/")):
                abort(400)
            requests.get(url)
            subprocess.run(["curl", "-s", url])
            return redirect(url)

        @app.route("/b")
        def b():
            url = request.args["u"]
            if url.startswith("https://api.example.org"):
                requests.post(url)
            return ""
    """)
    flows = engine.analyse("app.py", parser.parse_module(text).module).flows
    line = {word: n for n, row in enumerate(text.splitlines(), 1) for word in ("get(", "curl", "post(") if word in row}
    found = {(f.kind, f.site.line, f.partial) for f in flows}
    assert found == {("ssrf", line["get("], True), ("ssrf", line["curl"], True), ("ssrf", line["post("], False)}


def test_every_model_file_loads_and_every_kind_has_a_sink() -> None:
    models = catalog.default()
    assert len(models.files) >= 25
    kinds_with_sinks = {sink.kind for sinks in models.sinks.values() for sink in sinks}
    # Argument injection is found at the sinks of started programs (interp_sinks.option_sink).
    if any(s.program or s.argv_from >= 0 or s.operands_from >= 0 for sinks in models.sinks.values() for s in sinks):
        kinds_with_sinks.add("argument")
    # Comparisons with a ``[[compared]]`` type are sinks too (Expressions.compared_secret).
    kinds_with_sinks |= {model.kind for model in models.compared.values()}
    assert set(models.kinds) == kinds_with_sinks


def test_a_model_file_with_an_unknown_key_is_refused_with_its_name() -> None:
    with pytest.raises(catalog.ModelError, match=r"bad\.toml: \[\[sink\]\] #1 has unknown key\(s\) \['argz'\]"):
        catalog.load({"kinds.toml": catalog.model_texts()["kinds.toml"],
                      "bad.toml": '[[sink]]\ncall = "x.y"\nkind = "sql"\nargz = [0]\n'})
    with pytest.raises(catalog.ModelError, match="unknown kind 'nope'"):
        catalog.load({"kinds.toml": catalog.model_texts()["kinds.toml"],
                      "bad.toml": '[[sink]]\ncall = "x.y"\nkind = "nope"\nargs = [0]\n'})
    with pytest.raises(catalog.ModelError, match="pattern must be an argument position or, for a method, 'receiver'"):
        catalog.load({"kinds.toml": catalog.model_texts()["kinds.toml"],
                      "bad.toml": '[[guard]]\ncall = "x.check"\npattern = "receiver"\nkinds = ["*"]\n'})
    with pytest.raises(catalog.ModelError, match="element must be an item's position or a dict's key, not True"):
        catalog.load({"kinds.toml": catalog.model_texts()["kinds.toml"],
                      "bad.toml": '[[sink]]\ncall = "x.y"\nkind = "sql"\nargs = [0]\nelement = true\n'})


# --- renaming ------------------------------------------------------------------------------

def _author_names(text: str) -> tuple[set[str], set[str]]:
    """Names the probe's author chose: (variables, functions, classes and parameters;
    attributes assigned on objects), without library names and framework conventions."""
    import ast

    tree = parser.parse_module(text).module
    models = catalog.default()
    conventions = {h.request_parameter for h in models.handlers if h.request_parameter}
    conventions |= {m for h in models.handlers for m in h.methods if not m.endswith("*")}
    conventions |= {m for r in models.return_sinks for m in r.methods}  # methods a framework calls
    library = {member for source in models.sources_type.values() for member in source.attributes | source.methods}
    library |= {target.rpartition(".")[2] for target in [*models.sinks, *models.sanitisers, *models.guards, *models.checks,
                                                          *models.returns]}
    library |= {d.rpartition(".")[2] for h in models.handlers for d in h.decorators}  # route(), set_defaults()
    library |= {method for h in models.handlers for method, _, _ in h.registrations}  # add_url_rule()
    imported: set[str] = set()
    names: set[str] = set()
    attributes: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                attributes.update(n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
                attributes.update(n.target.id for n in node.body  # class-body fields are attributes too
                                  if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
                attributes.update(t.id for n in node.body if isinstance(n, ast.Assign)
                                  for t in n.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            attributes.add(node.attr)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
    excluded = imported | conventions | library | {"self", "cls"} | set(dir(__builtins__))
    # Dunder names (__init__, __enter__, __name__) are Python's protocol, not the author's choice.
    excluded |= {n for n in names | attributes if n.startswith("__") and n.endswith("__")}
    return names - excluded, attributes - excluded


_PREFIXES = tuple(m[:-1] for h in catalog.default().handlers for m in h.methods if m.endswith("*"))


def _new_name(name: str) -> str:
    """A different identifier that keeps the name's leading and trailing underscores (Python's
    own convention for internal names, which the engine may rely on) and a framework's prefix
    (graphene finds the resolver of field ``x`` as ``resolve_x``: renaming the field renames
    only what follows the prefix)."""
    prefix = next((p for p in _PREFIXES if name.startswith(p) and len(name) > len(p)), "")
    if prefix:
        return prefix + _new_name(name[len(prefix):])
    core = name.strip("_")
    head, tail = name[: len(name) - len(name.lstrip("_"))], name[len(name.rstrip("_")):]
    return f"{head}zz{core[::-1]}q{tail}"


def _own_parameters(text: str) -> dict[str, set[str]]:
    """Function name (a class's: its ``__init__``'s) -> the names of its parameters, for the
    functions and classes the probe defines."""
    import ast

    out: dict[str, set[str]] = {}
    for node in ast.walk(parser.parse_module(text).module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.setdefault(node.name, set()).update(a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
        elif isinstance(node, ast.ClassDef):
            for init in (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"):
                out.setdefault(node.name, set()).update(a.arg for a in ast.walk(init.args) if isinstance(a, ast.arg))
    return out


def rename(text: str) -> str:
    """Rewrites every author-chosen identifier token (also inside f-strings, which Python 3.11
    tokenizes whole, and PEP 484 type comments); keyword arguments keep their names (they may be
    a library's), except in a call of a function the probe defines that has a parameter of
    that name (renamed with it); lines and their count stay the same."""
    names, attributes = _author_names(text)
    own = _own_parameters(text)
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    out = []
    signature = 0  # depth of brackets inside a def's parameter list (0: outside one)
    callees: list[str | None] = []  # per open bracket: the name called there, if it is a call
    for i, token in enumerate(tokens):
        before = tokens[i - 1].string if i else ""
        after = tokens[i + 1].string if i + 1 < len(tokens) else ""
        if token.type == tokenize.OP and token.string in "([{":
            called = token.string == "(" and tokens[i - 1].type == tokenize.NAME and i > 1 and tokens[i - 2].string != "def"
            callees.append(before if called else None)
        elif token.type == tokenize.OP and token.string in ")]}" and callees:
            callees.pop()
        if token.type == tokenize.OP and token.string in "([{" and (signature or i > 1 and tokens[i - 2].string == "def"):
            signature += 1
        elif token.type == tokenize.OP and token.string in ")]}" and signature:
            signature -= 1
        if token.type == tokenize.NAME:
            # In a def's parameter list, ``name=default`` is a parameter, not a keyword argument.
            # (Outside brackets, ``a, b = ...`` assigns a tuple: ``b`` is no keyword.)
            keyword = after == "=" and before in ("(", ",") and signature != 1 and bool(callees)
            if keyword and callees and token.string in own.get(callees[-1] or "", ()):
                keyword = False  # the probe's own function's parameter, renamed with it
            wanted = attributes if before == "." else names
            if token.string in wanted and not keyword:
                token = token._replace(string=_new_name(token.string))
        elif token.type == tokenize.STRING and names and re.search(r"<(\w+:)?\w+>", token.string):
            # A URL rule names the route's parameters (Flask, Bottle): a valid rename renames both.
            token = token._replace(string=re.sub(r"<(\w+:)?(\w+)>", lambda m: f"<{m.group(1) or ''}"
                                                 f"{_new_name(m.group(2)) if m.group(2) in names else m.group(2)}>",
                                                 token.string))
        elif token.type == tokenize.COMMENT and re.match(r"#\s*type:", token.string):
            # A PEP 484 type comment is code: a valid rename renames the classes it names.
            token = token._replace(string=re.sub(r"(?<![.\w])(" + "|".join(map(re.escape, sorted(names) or ["\0"])) + r")\b",
                                                 lambda m: _new_name(m.group(1)), token.string))
        elif token.type == tokenize.STRING and re.match(r"(?i)[rb]*[ft]", token.string):
            token = token._replace(string=re.sub(r"(?<![.\w])(" + "|".join(map(re.escape, sorted(names) or ["\0"])) + r")\b",
                                                 lambda m: _new_name(m.group(1)), token.string))
        out.append(token)
    return tokenize.untokenize(out)


@pytest.mark.parametrize("name", FILES)
def test_renaming_every_author_identifier_changes_no_verdict(name: str) -> None:
    text = (PROBES / name).read_text()
    renamed = rename(text)
    assert renamed != text and len(renamed.splitlines()) == len(text.splitlines())
    assert reported(name, renamed) == reported(name, text)


def test_the_probe_with_newer_syntax_is_parsed_here_whatever_the_interpreter() -> None:
    parsed = parser.parse_module((PROBES / "modern_syntax.py").read_text())
    assert parsed.parser == ("cpython" if sys.version_info >= (3, 14) else "tree-sitter")


_CYCLE = {
    "pkg/__init__.py": "",
    "pkg/walker.py": "from pkg import stepper\n\n\ndef walk(value, n):\n    if n:\n        return stepper.step(value, n - 1)\n"
                     "    return value\n\n\ndef top(value):\n    return walk(value, 3)\n",
    "pkg/stepper.py": "import os\nfrom pkg import walker\n\n\ndef step(value, n):\n    os.system(value)\n"
                      "    return walker.walk(value, n)\n",
    "pkg/first.py": "from flask import request\nfrom pkg import walker, stepper\n\n\ndef view():\n"
                    "    stepper.step('ls', 1)\n    return walker.top(request.args['x'])\n",
    "pkg/second.py": "import subprocess\nfrom flask import request\nfrom pkg import walker\n\n\ndef handler():\n"
                     "    subprocess.call(walker.top(request.args['y']), shell=True)\n",
}


def test_what_a_recursive_cycle_across_modules_reaches_does_not_depend_on_the_order_files_are_analysed() -> None:
    """Regression: summaries made inside a cycle were shared with the next files one worker
    analysed, and a function entered at another member of the cycle missed the sinks of the
    member in progress, so one file's flows depended on which files that worker saw before
    (``pkg/first.py`` lost its flow after ``pkg/second.py``)."""
    import hashlib
    import itertools

    from fleetledger.analysis import summary_sharing

    shas = {p: hashlib.sha256(t.encode()).hexdigest() for p, t in _CYCLE.items()}

    def load(path: str):  # type: ignore[no-untyped-def]
        return (path, parser.parse_module(_CYCLE[path]).module) if path in _CYCLE else None

    seen: dict[str, set[tuple[tuple[str, str, int, str], ...]]] = {}
    names = sorted(p for p in _CYCLE if not p.endswith("__init__.py"))
    for order in itertools.permutations(names):
        summary_sharing._SHARED.clear()
        for path in order:
            result = engine.analyse(path, parser.parse_module(_CYCLE[path]).module, paths=list(_CYCLE), loader=load, shas=shas)
            seen.setdefault(path, set()).add(tuple(sorted((f.kind, f.site.path, f.site.line, f.label.channel) for f in result.flows)))
    summary_sharing._SHARED.clear()
    assert {path: len(results) for path, results in seen.items()} == {path: 1 for path in names}
    assert ("command", "pkg/stepper.py", 6, "http") in next(iter(seen["pkg/first.py"]))



_OTHER_FILES_FLOW = {
    "pkg/__init__.py": "",
    "pkg/inner.py": "import os\nfrom flask import request\n\n\ndef run():\n    os.system(request.args['x'])\n    return 1\n",
    "pkg/outer.py": "from pkg import inner\n\n\ndef call():\n    return inner.run()\n",
}


def test_a_flow_inside_another_files_function_is_that_files_to_report_whatever_was_analysed_before() -> None:
    """Regression: the flow inside ``inner.run`` was reported in ``outer.py``'s analysis when
    ``run``'s summary was computed there, and not when ``inner.py``, analysed first by the same
    worker, had shared it: one file's findings depended on the order the worker took files."""
    import hashlib
    import itertools

    from fleetledger.analysis import summary_sharing

    shas = {p: hashlib.sha256(t.encode()).hexdigest() for p, t in _OTHER_FILES_FLOW.items()}

    def load(path: str):  # type: ignore[no-untyped-def]
        return (path, parser.parse_module(_OTHER_FILES_FLOW[path]).module) if path in _OTHER_FILES_FLOW else None

    seen: dict[str, set[tuple[tuple[str, int, str], ...]]] = {}
    for order in itertools.permutations(["pkg/inner.py", "pkg/outer.py"]):
        summary_sharing._SHARED.clear()
        for path in order:
            result = engine.analyse(path, parser.parse_module(_OTHER_FILES_FLOW[path]).module, paths=list(_OTHER_FILES_FLOW),
                                    loader=load, shas=shas)
            seen.setdefault(path, set()).add(tuple(sorted((f.site.path, f.site.line, f.kind) for f in result.flows)))
    summary_sharing._SHARED.clear()
    assert seen == {"pkg/inner.py": {(("pkg/inner.py", 6, "command"),)}, "pkg/outer.py": {()}}

_STAR = {
    "app/__init__.py": "",
    "app/helpers.py": "import os\nimport subprocess as sp\n\n\ndef here():\n    return os.path.dirname(__file__)\n",
    "app/limited.py": "import os\n__all__ = ['nothing']\nnothing = 1\n",
    "app/views.py": "from flask import request\nfrom app.helpers import *\n\n\ndef view():\n"
                    "    sp.call(request.args['c'], shell=True)\n"
                    "    with open(os.path.join(here(), 'hooks', 'user.py'), 'w') as f:\n"
                    "        f.write(request.form['code'])\n",
    "app/other.py": "from flask import request\nfrom app.limited import *\n\n\ndef view():\n"
                    "    os.system(request.args['c'])\n",
}


def test_a_star_import_binds_the_library_modules_the_other_module_imported() -> None:
    """Regression (pygoat's apis.py): ``from app.helpers import *`` binds the modules
    helpers.py imported (``os``, ``sp``), as Python does for a module without ``__all__``;
    they were taken for unknown names, so their sinks were not seen. A module with ``__all__``
    binds only what it lists."""

    def load(path: str):  # type: ignore[no-untyped-def]
        return (path, parser.parse_module(_STAR[path]).module) if path in _STAR else None

    def flows(path: str) -> set[tuple[str, int]]:
        result = engine.analyse(path, parser.parse_module(_STAR[path]).module, paths=list(_STAR), loader=load)
        return {(f.kind, f.site.line) for f in result.flows if f.site.path == path}

    assert flows("app/views.py") == {("command", 6), ("code", 8)}
    assert flows("app/other.py") == set()


_FETCH = {
    "svc/__init__.py": "",
    "svc/helpers.py": "import os\nimport subprocess\n\n\ndef run_cmd(cmd):\n    return os.popen(cmd).read()\n\n\n"
                      "def run_vec(vec):\n    return subprocess.run(vec, capture_output=True)\n\n\n"
                      "def run_listing(vec):\n    return subprocess.run(vec, capture_output=True)\n",
    "svc/views.py": "from flask import request\nfrom svc import helpers\n\n\ndef view():\n"
                    "    url = f\"http://{request.args['host']}:80/\"\n"
                    "    helpers.run_cmd(f'curl --insecure {url}')\n"
                    "    helpers.run_vec(['wget', '-q', url])\n"
                    "    helpers.run_listing(['ls', '-l', url])\n",
}


def test_a_url_that_a_helper_hands_to_curl_or_wget_is_a_request_forgery_where_it_runs() -> None:
    """A helper that runs the command line or vector it is given (``os.popen(cmd)``) learns
    which program runs only from its caller: the URL curl or wget fetches is read again from
    what the call passed (``summaries.resink``), and ``ls`` fetches nothing."""

    def load(path: str):  # type: ignore[no-untyped-def]
        return (path, parser.parse_module(_FETCH[path]).module) if path in _FETCH else None

    result = engine.analyse("svc/views.py", parser.parse_module(_FETCH["svc/views.py"]).module, paths=list(_FETCH),
                            loader=load)
    found = {(f.kind, f.site.path, f.site.line) for f in result.flows}
    assert {("ssrf", "svc/helpers.py", 6), ("ssrf", "svc/helpers.py", 10), ("command", "svc/helpers.py", 6)} <= found
    assert not [f for f in result.flows if f.site.line == 14]  # run_listing()'s ls


def test_getters_that_read_each_other_are_analysed_to_the_end() -> None:
    """Regression: a property whose getter reads itself (or another that reads it back) made
    applying its summary read the property again without end; the whole view was then left
    "not analysed" (a RecursionError), hiding every flow in it."""
    text = (PROBES / "properties.py").read_text()
    result = engine.analyse("properties.py", parser.parse_module(text).module)
    assert result.not_analysed == ()
    assert any(f.kind == "command" and "query.first" in text.splitlines()[f.site.line - 1] for f in result.flows)


def test_a_wsgi_application_is_known_by_the_status_line_it_starts_its_response_with() -> None:
    """environ of a function that calls a parameter with a status line is the network's data; a
    function calling a callback with other data is an ordinary function (its callers decide)."""
    assert _channels("wsgi_apps.py") == {("application", "http"), ("tool", "http"), ("Middleware.__call__", "http"),
                                         ("notify", "api"), ("synchronise", "api"), ("missing", "http")}


def test_a_request_in_a_module_of_a_known_framework_is_that_frameworks_alone() -> None:
    """Regression: a render method's ``request`` parameter was also typed as any framework's
    request (the naming convention for modules whose imports name no framework), so Twisted's
    ``request.uri`` was reported as "uri of the Tornado request"."""
    text = (PROBES / "twisted_resources.py").read_text()
    result = engine.analyse("twisted_resources.py", parser.parse_module(text).module)
    sources = {f.label.what for f in result.flows if f.label.channel == "http"}
    assert "uri of the Twisted request" in sources
    assert not [s for s in sources if "Twisted" not in s]


def test_a_return_annotation_or_an_isinstance_check_types_a_result_the_code_does_not_show() -> None:
    """``def archiver(name) -> Archiver`` returning a plugin looked up by name: the view's call
    of ``.pack()`` on it runs ``Archiver.pack`` with the request's data; so does a call after
    ``if not isinstance(plugin, Compressor): raise``. Without them, the method's own parameter
    is all that is known to reach the sink."""
    text = (PROBES / "annotated_variables.py").read_text()
    result = engine.analyse("annotated_variables.py", parser.parse_module(text).module)
    for command in ("tar czf", "gzip -r"):  # the second's object is known by an isinstance check
        line = next(n for n, t in enumerate(text.splitlines(), 1) if command in t)
        assert "http" in {f.label.channel for f in result.flows if f.site.line == line}, command


_OWN_TWISTED = {
    "twisted/__init__.py": "",
    "twisted/web/__init__.py": "",
    "twisted/web/resource.py": "class Resource:\n    pass\n",
    # The library's own class declares the attribute its model says is the request's data.
    "twisted/web/http.py": "import os\n\nfrom twisted.web import resource\n\n\nclass Request:\n    uri = b'(no uri yet)'\n\n\n"
                           "class Files(resource.Resource):\n    def render_GET(self, request):\n"
                           "        os.system(b'ls ' + request.uri)\n        return b'ok'\n",
}


def test_a_librarys_own_class_keeps_what_its_model_says_of_its_attributes() -> None:
    """Regression: scanning Twisted itself, ``request.uri`` read the class body's ``uri =
    b"(no uri yet)"`` of ``twisted.web.http.Request`` (the scanned code's own class), not the
    model's source, and the request's data was lost in Twisted's own resources."""
    result = _analyse_package(_OWN_TWISTED, "twisted/web/http.py")
    assert [(f.kind, f.site.line, f.label.what) for f in result.flows] == [("command", 12, "uri of the Twisted request")]


def test_a_long_chain_of_subclasses_costs_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Attacked: a module of 400 classes, each the subclass of the one before and none but the
    last with ``__init__``, read ``self.x`` in every method. Looking for what the subclasses'
    constructors store walked every subclass's bases for every base asked about (a tenth of a
    second per class here; minutes for a few thousand). Counted in walks of a class's bases,
    the work stays linear in the number of classes."""
    walks = 0
    walk = Program.class_mro

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal walks
        walks += 1
        return walk(self, *args, **kwargs)

    monkeypatch.setattr(Program, "class_mro", counting)
    count = 400
    lines = ["import subprocess", "", "", "class C0:", "    def run(self):", "        return self.x.go()", ""]
    for i in range(1, count):
        lines += [f"class C{i}(C{i - 1}):", "    def run(self):", f"        return self.y{i}.go()", ""]
    lines += [f"class Last(C{count - 1}):", "    def __init__(self):", "        self.x = subprocess", ""]
    engine.analyse("chain.py", parser.parse_module("\n".join(lines)).module)
    assert walks < 100 * count


def test_flask_views_registered_by_calls_are_handlers() -> None:
    """add_url_rule and register_error_handler register views as the decorators do; a
    MethodView's HTTP methods are views, its other public methods an API."""
    assert _channels("flask_registrations.py") == {
        ("lookup", "http"), ("not_found", "http"), ("Items.get", "http"), ("Items.helper", "api"),
        ("create_app.ping", "http"), ("create_app.failed", "http")}


def _analyse_package(modules: dict[str, str], path: str) -> engine.FileAnalysis:
    """The engine's analysis of ``path``, one of ``modules`` (path -> text), which it may read."""

    def load(other: str):  # type: ignore[no-untyped-def]
        return (other, parser.parse_module(modules[other]).module) if other in modules else None

    return engine.analyse(path, parser.parse_module(modules[path]).module, paths=list(modules), loader=load)


def _channels(name: str) -> set[tuple[str, str]]:
    """(scope of the sink, channel of the source) of each flow the engine reports in a probe."""
    text = (PROBES / name).read_text()
    result = engine.analyse(name, parser.parse_module(text).module)
    return {(f.site.scope, f.label.channel) for f in result.flows}


_VENDORED_REQUESTS = {
    "tool/__init__.py": "",
    "tool/_vendor/__init__.py": "",
    # A copy of the library: its __init__ binds the names the models know it by.
    "tool/_vendor/requests/__init__.py": "from .api import request, get, head, post, patch, put, delete, options\n"
                                         "from .sessions import session, Session\nfrom .models import Request, Response\n",
    "tool/_vendor/requests/api.py": "from . import sessions\n\n\ndef get(url, **kwargs):\n"
                                    "    return sessions.Session().get(url, **kwargs)\n",
    "tool/_vendor/requests/sessions.py": "class Session:\n    def get(self, url, **kwargs):\n        return url\n",
    "tool/_vendor/requests/models.py": "class Response:\n    pass\n",
    "tool/_vendor/requests/utils.py": "import os\n\n\ndef shell(text):\n    os.system(text)\n",
    # An application's own package that only shares the library's name.
    "tool/friends/__init__.py": "",
    "tool/friends/requests/__init__.py": "def get(name):\n    return {'headers': {'x-name': name}}\n",
}
_SAVES_HEADER = ("import os\n{import_line}\n\n\ndef _save(folder, url):\n    response = {call}\n"
                 "    return open(os.path.join(folder, response.headers['x-name']), 'wb')\n")


@pytest.mark.parametrize("import_line, call, vendored", [
    ("from tool._vendor import requests", "requests.get(url)", True),
    ("from tool._vendor.requests import Session", "Session().get(url)", True),
    ("import tool._vendor.requests", "tool._vendor.requests.get(url)", True),
    ("from tool._vendor.requests.sessions import Session as S\nclass Mine(S):\n    pass", "Mine().get(url)", True),
    ("from tool.friends import requests", "requests.get(url)", False),
])
def test_a_vendored_copy_of_a_library_is_the_library(import_line: str, call: str, vendored: bool) -> None:
    """pip's ``pip._vendor.requests``: the copy's response headers come from the network, as the
    library's models say (its own code ends in ``return url``); an application's package that
    only bears the library's name is read as its own code."""
    modules = {**_VENDORED_REQUESTS, "tool/fetch.py": _SAVES_HEADER.format(import_line=import_line, call=call)}
    flows = {(f.kind, f.label.channel) for f in _analyse_package(modules, "tool/fetch.py").flows}
    assert (("path", "network") in flows) is vendored


def test_a_function_of_a_vendored_copy_no_model_knows_is_read_as_code() -> None:
    """Only names the models know are the library's: the copy's other functions are followed."""
    modules = {**_VENDORED_REQUESTS, "tool/view.py": "from flask import request\nfrom tool._vendor.requests import utils\n\n\n"
                                                     "def view():\n    utils.shell(request.args['c'])\n"}
    flows = _analyse_package(modules, "tool/view.py").flows
    assert [(f.kind, f.site.path, f.label.channel) for f in flows] == [("command", "tool/_vendor/requests/utils.py", "http")]


@pytest.mark.parametrize("copied", [True, False], ids=["a copy", "a wrapper"])
def test_a_single_module_library_vendored_as_one_file_is_the_library(copied: bool) -> None:
    """Regression (pypiserver 1.2.5 ships bottle as ``pypiserver/bottle.py``): a copy of a
    single-module library was never taken for the library (only packages were), so none of the
    application's routes was an entry point. A module of that name binding only a few of the
    library's names (a wrapper) stays the application's own code."""
    from fleetledger.analysis import vendoring

    members = sorted(vendoring.library_members(catalog.default(), "bottle"))
    bound = members if copied else members[:1]
    copy = "".join(f"class {m}:\n    pass\n\n\n" if m[0].isupper() else f"def {m}(*args, **kwargs):\n    return args\n\n\n"
                   for m in bound)
    modules = {"tool/__init__.py": "", "tool/bottle.py": copy,
               "tool/app.py": "import os\nfrom . import bottle\n\n\n"
                              "@bottle.route('/run/<name>')\ndef run(name):\n    os.system(name)\n"}
    flows = _analyse_package(modules, "tool/app.py").flows
    assert (("command", "http") in {(f.kind, f.label.channel) for f in flows}) is copied


def test_a_module_named_like_a_standard_library_module_is_no_vendored_copy() -> None:
    """``tool/subprocess.py`` is the package's own module (a standard library name is never a copy),
    so its harmless ``run`` is read, not subprocess.run's model."""
    modules = {"tool/__init__.py": "", "tool/subprocess.py": "def run(command, shell=False):\n    return command\n",
               "tool/cli.py": "from flask import request\nfrom tool import subprocess\n\n\ndef view():\n"
                              "    return subprocess.run(request.args['c'], shell=True)\n"}
    assert _analyse_package(modules, "tool/cli.py").flows == ()


def test_a_caller_that_turns_a_switch_on_is_flagged_at_the_sink() -> None:
    """``parse_document``'s safe default keeps it out of the report as a library function
    (probe switch_defaults.py); a view passing ``resolve_entities=True`` with an upload is XXE."""
    text = (PROBES / "switch_defaults.py").read_text() + (
        "\n\nfrom flask import request\n\n\ndef view():\n"
        "    return parse_document(request.files['doc'], resolve_entities=True)\n")
    flows = engine.analyse("switch_defaults.py", parser.parse_module(text).module).flows
    assert ("xxe", 12, "http") in {(f.kind, f.site.line, f.label.channel) for f in flows}
    assert ("xxe", 12, "api") not in {(f.kind, f.site.line, f.label.channel) for f in flows}


def test_a_module_lookup_costs_a_unit_of_the_work_budget() -> None:
    """Regression: looking a module up was not counted, and setuptools 69.5.1's
    command/develop.py, whose analysis made about 40 lookups (each adding what the module
    depends on to every summary being computed around it) per unit of counted work, ran for
    over 20 minutes at 1.1 GB with most of its 2,000,000 units unspent. Each lookup now costs
    a unit. (That file is analysed whole now, in seconds: ``test_a_value_standing_for_many_
    library_objects_is_read_through_a_bounded_number_of_them``.)"""
    from fleetledger.analysis.budget import Budget, BudgetExceeded
    from fleetledger.analysis.program import Program

    program = Program(catalog.default(), ["pkg/__init__.py"], lambda path: None, Budget(10))
    for _ in range(10):
        program.find_module("pkg.missing")
    with pytest.raises(BudgetExceeded):
        program.find_module("pkg")


def test_a_value_standing_for_many_library_objects_is_read_through_a_bounded_number_of_them() -> None:
    """Regression (setuptools 69.5.1's package_index, read from command/develop.py): a loop
    reading attributes of a library reference one way or another made the value stand for
    every path of attribute names (``urlopen.a.c.e.b.d...``), each read multiplying them: tens
    of thousands of names, and the file was cut at its budget. Each read now goes through at
    most ``MAX_REFS`` names, and the file is analysed whole (the same as renamed: a bound, not
    a list of names)."""
    text = textwrap.dedent("""\
        import urllib.request

        from flask import request


        class Index:
            def __init__(self):
                self.opener = urllib.request.urlopen

            def crawl(self, urls):
                o = self.opener
                for url in urls:
                    for part in url:
                        o = o.a if part else o.b
                        o = o.c if url else o.d
                        o = o.e if part else o.f
                return o.g


        def view():
            return urllib.request.urlopen(request.args["u"])
        """)
    result = engine.analyse("index.py", parser.parse_module(text).module)
    assert result.not_analysed == ()
    assert result.work_units_used < 100_000
    assert {(f.kind, f.site.line) for f in result.flows} == {("ssrf", 21)}


def test_dependencies_adopted_by_reference_are_read_whole_when_flattened() -> None:
    """A piece adopted by another is kept by reference (O(1) at every adoption): what is added
    to it later, and what it adopted in turn (a cycle included), is in ``flattened()``."""
    from fleetledger.analysis.dependencies import Dependencies

    module, summary, lookup = Dependencies(files={"a.py"}), Dependencies(), Dependencies(names={"b": "b.py"})
    summary.add(module)
    module.add(summary)  # a module whose body looked itself up
    module.add(lookup)
    module.templates["t.html"] = None
    flat = summary.flattened()
    assert (flat.files, flat.names, flat.templates, flat.parts) == ({"a.py"}, {"b": "b.py"}, {"t.html": None}, {})
    assert summary.to_json({"a.py": "1"})["files"] == {"a.py": "1"}


def test_a_variable_declared_with_a_class_holds_its_objects() -> None:
    """``store: Optional[Store] = None`` at module level, set by a start-up hook: the request
    data a view passes to ``store.rows(...)`` reaches the method's sink (not only its caller's
    parameter). Also for a class of another module (which the annotation loads)."""
    assert ("Store.rows", "http") in _channels("annotated_variables.py")
    modules = {
        "shop/__init__.py": "",
        "shop/store.py": "import sqlite3\n\n\nclass Store:\n    def __init__(self, path):\n"
                         "        self.connection = sqlite3.connect(path)\n\n"
                         "    def rows(self, sql):\n        return self.connection.execute(sql)\n",
        "shop/views.py": "from flask import request\nfrom shop.store import Store\n\nstore: Store | None = None\n\n\n"
                         "def view():\n    store.rows(request.args['q'])\n",
    }

    result = _analyse_package(modules, "shop/views.py")
    assert {(f.site.path, f.site.line, f.label.channel) for f in result.flows} == {("shop/store.py", 9, "http")}


@pytest.mark.parametrize("packages", [True, False], ids=["packages", "namespace packages"])
def test_a_handler_whose_base_class_is_another_modules_subclass_of_the_framework_class(packages: bool) -> None:
    """Regression (jupyter_server's login redirect, CVE-2023-39968): a Tornado handler whose
    base class, a ``RequestHandler`` subclass, is imported from another module was no entry
    point, since the base's module was not loaded when the handler's class hierarchy was read;
    and a relative import in folders without ``__init__.py`` (namespace packages) read from
    no module at all."""
    modules = {
        "app/base/handlers.py": "from tornado import web\n\n\nclass Base(web.RequestHandler):\n"
                                "    def helper(self):\n        return 1\n",
        "app/auth/login.py": "from ..base.handlers import Base\n\n\nclass Login(Base):\n"
                             "    def _go(self, url):\n        self.redirect(url)\n\n"
                             "    def get(self):\n        self._go(self.get_argument('next'))\n",
    }
    if packages:
        modules |= {"app/__init__.py": "", "app/base/__init__.py": "", "app/auth/__init__.py": ""}

    result = _analyse_package(modules, "app/auth/login.py")
    assert {(f.kind, f.site.line, f.label.channel) for f in result.flows} == {("redirect", 6, "http")}


def test_an_absolute_import_of_a_namespace_package_under_a_source_folder_is_read() -> None:
    """Regression (apache-airflow-providers-common-sql, CVE-2025-30473): in
    ``src/airflow/providers/common/sql/``, ``airflow``, ``providers`` and ``common`` are
    namespace packages (no ``__init__.py``, PEP 420) and ``sql`` the first regular one; the
    operators' ``from airflow.providers.common.sql.hooks.sql import DbApiHook`` resolved to no
    file (only ``src.airflow...`` and ``sql.hooks.sql`` were known), so the hook's sinks were
    never reached. A name two files could have stays neither's."""
    modules = {
        "src/corp/plugins/db/__init__.py": "",
        "src/corp/plugins/db/hooks.py": "import sqlite3\n\n\nclass Hook:\n    def rows(self, text):\n"
                                        "        return sqlite3.connect('x').execute(text)\n",
        "src/corp/plugins/db/views.py": "from flask import request\n"
                                        "from corp.plugins.db.hooks import Hook\n\n\n"
                                        "def view():\n    return Hook().rows(request.args['q'])\n",
        "a/plugins/db/hooks.py": "",
        "b/plugins/db/hooks.py": "",
    }
    result = _analyse_package(modules, "src/corp/plugins/db/views.py")
    assert {(f.site.path, f.site.line, f.label.channel) for f in result.flows} == {
        ("src/corp/plugins/db/hooks.py", 6, "http")}
    by_name, _ = module_index(tuple(sorted(modules)))
    assert by_name["corp.plugins.db.hooks"] == "src/corp/plugins/db/hooks.py"
    assert "plugins.db.hooks" not in by_name  # three files have it: none gets it


def test_a_closure_reading_its_enclosing_methods_parameter_is_not_given_its_own_argument() -> None:
    """Regression: a nested function reading ``self`` of the method defining it carried a label
    of that method's parameter 0; applying the nested function's summary replaced it with the
    nested function's own argument 0 (``clause(n)``: the ``n`` of a loop over ``self.names``),
    so ``self.where`` became "the ``where`` of an item of ``names``" and the constructor's
    ``where`` reached no sink through it."""
    modules = {
        "lib/__init__.py": "",
        "lib/ops.py": "import sqlite3\n\n\nclass Check:\n    def __init__(self, names, where):\n"
                      "        self.names = names\n        self.where = where\n\n"
                      "    def query(self):\n        def clause(name):\n"
                      "            return f'{name} WHERE {self.where}'\n\n"
                      "        return ' UNION '.join(clause(n) for n in self.names)\n\n"
                      "    def run(self):\n        return sqlite3.connect('x').execute(self.query())\n",
    }
    result = _analyse_package(modules, "lib/ops.py")
    assert {(f.site.line, f.label.what) for f in result.flows} >= {
        (16, "parameter 'where' of the public constructor Check()")}


def test_a_chain_of_classes_passing_an_attribute_on_costs_no_function_its_analysis() -> None:
    """Attack: 300 classes, each constructing the one before with its own ``self.b``
    (``K1(self.b)`` in ``K2``...): reading ``self.b`` of the first asked what each next class
    passes, 300 lookups inside one another, and the stack ran out: every ``m()`` of the file
    was "not analysed to the end". Lookups nest at most ``passed_types.MAX_NESTED`` deep."""
    parts = ["import requests\n\n\nclass K0:\n    def __init__(self, b):\n        self.b = b\n\n"
             "    def m(self, u):\n        return self.b.get(u)\n"]
    parts += [f"\n\nclass K{i}:\n    def __init__(self, b):\n        self.b = b\n\n"
              f"    def m(self, u):\n        return K{i - 1}(self.b).m(u)\n" for i in range(1, 300)]
    text = "".join(parts) + "\n\nX = K299(requests.Session())\n"
    result = engine.analyse("chain.py", parser.parse_module(text).module)
    assert result.not_analysed == ()


def test_reading_a_class_hierarchy_that_loads_a_module_does_not_break_a_walk_over_the_classes() -> None:
    """Regression: when reading any class's bases loaded the module of one (a first version of
    ``Program.class_mro``), the walk over every known class that looks for the subclasses of a
    method's class (``engine._constructor_parameter``) raised "dictionary changed size during
    iteration" out of the engine, and Django's files lost their analysis. Bases are loaded only
    with ``load=True`` now; this keeps the shape that broke, in case they are again."""
    modules = {
        "shop/__init__.py": "",
        "shop/base.py": "class Base:\n    pass\n\n\nclass Other(Base):\n    pass\n",
        "shop/views.py": "import requests\nfrom shop.base import Base\n\n\nclass Loader:\n"
                         "    def __init__(self, url):\n        self.url = url\n\n"
                         "    def load(self):\n        return requests.get(self.url)\n\n\n"
                         "class Child(Base):\n    pass\n",
    }

    result = _analyse_package(modules, "shop/views.py")
    assert {(f.kind, f.site.line, f.label.channel) for f in result.flows} == {("ssrf", 10, "api")}


def test_an_annotation_string_nested_past_the_parsers_limits_names_nothing() -> None:
    """Regression: a string annotation of 200,000 unary minus signs made CPython's parser raise
    ``MemoryError`` out of the engine, so the file's analysis was lost (a hostile repository's
    way to hide a file's flows). It names nothing; the file's flows are still found."""
    deep = '"' + "-" * 200_000 + 'x"'
    text = (f"import os\nfrom flask import request\n\nx: {deep} = None\n\n\n"
            f"def view(y: {deep} = None, z: \"\\x00\" = None):\n    os.system(request.args['c'])\n")
    result = engine.analyse("m.py", parser.parse_module(text).module)
    assert {(f.kind, f.site.line) for f in result.flows} == {("command", 8)}


_CLASSMETHOD = {
    "shop/__init__.py": "",
    "shop/store.py": "class Store:\n    def __init__(self, conn):\n        self.conn = conn\n\n"
                     "    def run(self, sql):\n        return self.conn.execute(sql)\n\n"
                     "    @classmethod\n    def open(cls, conn):\n        return cls(conn)\n\n"
                     "    @classmethod\n    def query(cls, conn, sql):\n        return cls(conn).run(sql)\n\n\n"
                     "class Orders(Store):\n    def named(self, name):\n"
                     "        return self.run(\"SELECT * FROM orders WHERE name = '%s'\" % name)\n",
    "shop/views.py": "import sqlite3\nfrom flask import request\nfrom shop.store import Orders, Store\n\n\n"
                     "def view():\n    conn = sqlite3.connect('shop.db')\n"
                     "    Store.query(conn, request.args['q'])\n"
                     "    Store.open(conn).run(request.args['q'])\n"
                     "    Orders.open(conn).named(request.args['q'])\n",
}


def test_a_class_method_of_another_module_gets_its_class_first() -> None:
    """Regression: ``Store.query(conn, sql)`` with ``Store`` imported from another module
    bound ``conn`` to ``cls`` (the call passed no class), and ``cls(conn)`` in a class method
    was taken for a call of an instance. A class method's first parameter is the class it is
    called on: ``Orders.open(conn)`` makes an ``Orders``, whose own methods apply."""

    result = _analyse_package(_CLASSMETHOD, "shop/views.py")
    sources = {(f.site.path, f.site.line, f.label.line) for f in result.flows if f.kind == "sql"}
    assert sources == {("shop/store.py", 6, 8), ("shop/store.py", 6, 9), ("shop/store.py", 6, 10)}


_FRAMEWORK = {
    "tornado/__init__.py": "",
    "tornado/web.py": "class RequestHandler:\n    def __init__(self, application, request):\n"
                      "        self.request = request\n\n"
                      "    def redirect(self, url, permanent=False):\n        self.location = url\n\n\n"
                      "class StaticFileHandler(RequestHandler):\n    def get(self, path):\n"
                      "        if not self.request.path.endswith('/'):\n"
                      "            self.redirect(self.request.path + '/', permanent=True)\n",
}


def test_a_frameworks_own_class_keeps_the_models_of_its_type() -> None:
    """Regression (CVE-2023-28370, Tornado's StaticFileHandler): scanning a framework itself,
    its own ``RequestHandler`` is the modelled ``tornado.web.RequestHandler``, so a method the
    models make a sink (``redirect``) stays one although the scan reads its body too."""

    result = _analyse_package(_FRAMEWORK, "tornado/web.py")
    assert {(f.kind, f.site.line) for f in result.flows} == {("redirect", 12)}


_REEXPORT = {
    "geo/__init__.py": "",
    "geo/compat.py": "try:\n    from lxml import etree\nexcept ImportError:\n    import xml.etree.ElementTree as etree\n"
                     "import subprocess as sp\n",
    "geo/loop_a.py": "from geo.loop_b import thing\n",
    "geo/loop_b.py": "from geo.loop_a import thing\n",
    "geo/client.py": "import requests\nfrom geo.compat import etree, sp\n\n\ndef fetch(url):\n"
                     "    response = requests.get('https://maps.example.org/wms', params={'q': url})\n"
                     "    return etree.fromstring(response.content)\n\n\n"
                     "def run(line):\n    return sp.check_output(line, shell=True)\n\n\n"
                     "def loop(line):\n    from geo.loop_a import thing\n    thing(line)\n"
                     "    return sp.check_output(line, shell=True)\n",
}


def test_a_library_module_another_module_re_exports_is_that_library() -> None:
    """Regression (CVE-2023-27476, OWSLib): ``from owslib.etree import etree`` where
    ``owslib/etree.py`` imports lxml's (or, failing that, the standard library's) is either
    library's ``etree``, so their parsers' models apply. Two modules re-exporting a name from
    each other define nothing, and the analysis goes on (the attack's cycle stopped it)."""

    result = _analyse_package(_REEXPORT, "geo/client.py")
    assert {(f.kind, f.site.line) for f in result.flows} >= {("xxe", 7), ("command", 11), ("command", 17)}
    assert result.not_analysed == ()


def test_constants_a_hostile_file_builds_by_formatting_stay_small() -> None:
    """Regression: ``"%200000000s" % "x"`` was folded by Python before its length was checked,
    so a three-line hostile file made the engine allocate hundreds of MB. A width from the
    arguments (``*``), a repeated ``%(key)s`` or ``{0}`` field, and a keyword field are
    bounded before anything is built."""
    import tracemalloc

    text = textwrap.dedent('''\
        import re
        WIDE = "%200000000s" % "x"
        STARRED = "%*s" % (200000000, "y")
        KEYED = ("%(a)s" * 2000) % {"a": "y" * 4000}
        PLACED = ("{0}" * 2000).format("z" * 4000)
        NAMED = ("{w}" * 2000).format(w="z" * 4000)


        def check(text):
            return re.match("(a+)+$" + WIDE + STARRED + KEYED + PLACED + NAMED, text)
        ''')
    tracemalloc.start()
    try:
        engine.analyse("hostile.py", parser.parse_module(text).module)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000, f"{peak / 1e6:.0f} MB traced while analysing a 10-line file"


def test_receivers_a_factory_with_thousands_of_assignments_and_views_stays_in_budget() -> None:
    """Regression: following a decorator's receiver through the factory's assignments was
    redone for every view, so 1,500 views after 1,500 reassignments of ``app`` took 80 s and
    stopped at the work budget (``receivers``: each name is evaluated once per program). The
    budget counts work, not time, so this does not depend on the machine."""
    assignments = "".join(f"    app = app.part{i}()\n" for i in range(1500))
    views = "".join(f"    @app.route('/p{i}')\n    def view{i}(x):\n        return x\n" for i in range(1500))
    text = f"from flask import Flask\n\n\ndef create():\n    app = Flask(__name__)\n{assignments}{views}    return app\n"
    analysis = engine.analyse("factory.py", parser.parse_module(text).module)
    assert not [note for note in analysis.not_analysed if "work budget" in note], analysis.not_analysed


def test_a_call_through_a_class_runs_that_method_not_its_overrides() -> None:
    """Regression: ``Base.__init__(self, ...)`` in each of a generated schema's classes was
    judged as if it might run every subclass's override, so each class met the others' and the
    call chains grew past the depth bound: pysaml2's ``authn_context`` took 80 s and left 50 of
    its classes "not followed". A method read from a class runs that very method."""
    classes = "".join(f"class C{i}({'Base' if i % 10 == 0 else f'C{i - 1}'}):\n"
                      f"    def __init__(self, text=None):\n"
                      f"        {'Base' if i % 10 == 0 else f'C{i - 1}'}.__init__(self, text=text)\n\n\n"
                      for i in range(300))
    text = ("class Base(object):\n    def __init__(self, text=None):\n        self.text = text\n\n\n" + classes
            + "def build(value):\n    return C299(text=value)\n")
    analysis = engine.analyse("schema.py", parser.parse_module(text).module)
    assert not [note for note in analysis.not_analysed if "not followed" in note], analysis.not_analysed[:3]


def test_a_subclass_of_a_class_a_model_names_safe_is_safe_and_says_so_where_another_detector_flags_it() -> None:
    """sockeye's fixed release (CVE-2021-43811) loads its configuration with a subclass of
    ``yaml.SafeLoader`` that adds a tuple constructor: no object of the document's choosing is
    built, so no deserialization flow; bandit's B506 there is judged by the engine's evidence."""
    text = ("import yaml\nfrom flask import request\n\n\nclass K1(yaml.SafeLoader):\n    pass\n\n\n"
            "class K2(yaml.FullLoader):\n    pass\n\n\n"
            "def v1():\n    return yaml.load(request.data, Loader=K1)\n\n\n"
            "def v2():\n    return yaml.load(request.data, Loader=K2)\n")
    found = engine.analyse("k.py", parser.parse_module(text).module)
    assert [(f.kind, f.site.line) for f in found.flows] == [("deserialization", 18)]
    assert {(e.site.line, e.state) for e in found.evidence if e.kind == "deserialization"} == {(14, "sanitised"), (18, "tainted")}


def test_an_exception_a_library_call_raised_is_never_taken_for_a_constant() -> None:
    """A handler's exception holds what the try block raised, and what any operation there may
    raise (``int(x)``'s ValueError holds x): of unknown origin, not constant, so bandit's B605
    at the handler is not dismissed as built from constants (it was, before)."""
    source = textwrap.dedent("""\
        import os
        def run(text):
            try:
                return int(text)
            except ValueError as error:
                os.system(str(error))
            os.system("ls")
        """)
    found = engine.analyse("m.py", parser.parse_module(source).module)
    assert {(e.site.line, e.state) for e in found.evidence if e.kind == "command"} == {(6, "unknown"), (7, "constant")}
