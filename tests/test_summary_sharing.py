"""Summaries shared between the analyses of one worker (``summary_sharing``): a recursive cycle's
summaries are computed once per worker, and no file's result depends on which files that
worker analysed before it."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from e2e import real_library
from fleetledger.analysis import engine, parser, program, summaries, summary_sharing
from fleetledger.jobs.scan.detect import detect_file

# A cycle across two modules (``walk`` <-> ``step``), entered at either member, from files that
# call into it directly, through a helper, or with a function of their own that the cycle calls
# back (which makes the cycle's summaries depend on the file analysed).
_PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/walker.py": ("import os\nfrom pkg import stepper\n\n\ndef walk(value, n):\n    if n:\n"
                      "        return stepper.step(value, n - 1)\n    os.system(value)\n    return value\n\n\n"
                      "def top(value):\n    return walk(value, 3)\n\n\ndef apply(fn, value):\n    return fn(walk(value, 1))\n"),
    "pkg/stepper.py": ("import subprocess\nfrom pkg import walker\n\n\ndef step(value, n):\n"
                       "    subprocess.call(value, shell=True)\n    return walker.walk(value, n)\n\n\n"
                       "def helper(value):\n    return step(value, 2)\n"),
    "pkg/first.py": ("from flask import request\nfrom pkg import walker, stepper\n\n\ndef view():\n"
                     "    found = walker.top(request.args['x'])\n    stepper.helper('ls')\n    return found\n"),
    "pkg/second.py": ("import subprocess\nfrom flask import request\nfrom pkg import walker\n\n\ndef handler():\n"
                      "    return walker.top(request.args['y'])\n"),
    "pkg/third.py": ("import pickle\nfrom flask import request\nfrom pkg import stepper, walker\n\n\n"
                     "def load(data):\n    return pickle.loads(data)\n\n\ndef view():\n"
                     "    stepper.helper(request.args['z'])\n    return walker.apply(load, request.data)\n"),
    "pkg/fourth.py": ("from flask import request\nfrom pkg import stepper\n\n\ndef view():\n"
                      "    return stepper.step(request.args['w'], 5)\n"),
}
_FILES = sorted(p for p in _PACKAGE if not p.endswith("__init__.py"))


def _result(path: str) -> tuple[object, ...]:
    found = _analysed(_PACKAGE, path)
    return (tuple(sorted((f.kind, f.site.path, f.site.line, f.label.channel, f.label.line) for f in found.flows)),
            tuple(sorted((e.kind, e.site.path, e.site.line, e.state) for e in found.evidence)), found.not_analysed)


def _analysed(files: dict[str, str], path: str) -> engine.FileAnalysis:
    """The engine's analysis of ``path`` in the package ``files`` (path -> text)."""
    shas = {p: hashlib.sha256(t.encode()).hexdigest() for p, t in files.items()}
    return engine.analyse(path, parser.parse_module(files[path]).module, paths=list(files),
                          loader=lambda p: (p, parser.parse_module(files[p]).module) if p in files else None, shas=shas)


def _flow_sites(found: engine.FileAnalysis) -> tuple[tuple[str, str, int], ...]:
    """The (kind, path, line) of each flow an analysis reports, sorted."""
    return tuple(sorted((f.kind, f.site.path, f.site.line) for f in found.flows))


@pytest.fixture(autouse=True)
def _clean() -> object:
    summary_sharing._SHARED.clear()
    yield
    summary_sharing._SHARED.clear()


def test_no_files_result_depends_on_the_files_its_worker_analysed_before() -> None:
    alone = {}
    for path in _FILES:
        summary_sharing._SHARED.clear()
        alone[path] = _result(path)
    assert any(flow[1] == "pkg/stepper.py" for flow in alone["pkg/fourth.py"][0])  # the flows are there
    assert any(flow[0] == "deserialization" for flow in alone["pkg/third.py"][0])
    # Every file first, last, and after each other one (the rotations of two opposite orders).
    orders = [_FILES[i:] + _FILES[:i] for i in range(len(_FILES))]
    for order in [*orders, *(list(reversed(o)) for o in orders)]:
        summary_sharing._SHARED.clear()
        for path in order:
            assert _result(path) == alone[path], (order, path)


def test_a_cycle_entered_the_same_way_is_computed_once_per_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    computed: Counter[str] = Counter()
    original = summaries.compute

    def counting(program, function, depth, callables=None, **kw):  # type: ignore[no-untyped-def]
        computed[function.qualname] += 1
        return original(program, function, depth, callables, **kw)

    monkeypatch.setattr(summaries, "compute", counting)
    _result("pkg/second.py")
    assert computed["walk"] and computed["step"]
    computed.clear()
    _result("pkg/first.py")  # enters the cycle through ``top`` too: the summaries computed for
    assert computed["walk"] == computed["step"] == computed["top"] == 0, computed  # second.py are adopted
    assert computed["helper"] == 1  # it reads ``step``, made inside the cycle before it started


# A cycle whose summaries depend on where it is entered: each lap rotates the arguments, and its
# rounds stop (``summaries.MAX_ROUNDS``) before the third lap. ``other`` is computed with the
# cycle entered at ``step`` in ``entered_at_step.py``; ``entered_at_walk.py`` enters it at ``walk``
# first, then calls ``other``, which must read the ``step`` computed there, not adopt the shared one.
_ROTATING = {
    "pkg/__init__.py": "",
    "pkg/walker.py": ("import os\nfrom pkg import stepper\n\n\ndef walk(a, b, c, n):\n    if n:\n"
                      "        return stepper.step(b, c, a, n - 1)\n    os.system(a)\n    return a\n\n\n"
                      "def top(x):\n    return walk('ls', 'ls', x, 3)\n"),
    "pkg/stepper.py": ("from pkg import walker\n\n\ndef step(a, b, c, n):\n    return walker.walk(b, c, a, n)\n\n\n"
                       "def other(x):\n    return step(x, 'ls', 'ls', 2)\n"),
    "pkg/entered_at_walk.py": ("from flask import request\nfrom pkg import walker, stepper\n\n\ndef view():\n"
                               "    walker.top('ls')\n    return stepper.other(request.args['x'])\n"),
    "pkg/entered_at_step.py": ("from flask import request\nfrom pkg import stepper\n\n\ndef view():\n"
                               "    return stepper.other(request.args['x'])\n"),
    "pkg/step_first.py": ("from flask import request\nfrom pkg import stepper\n\n\ndef view():\n"
                          "    stepper.step('ls', 'ls', 'ls', 2)\n    return stepper.other(request.args['x'])\n"),
}


def test_a_shared_summary_is_not_adopted_where_a_cycle_it_read_was_entered_elsewhere() -> None:
    def result(path: str) -> list[tuple[str, str, int]]:
        return list(_flow_sites(_analysed(_ROTATING, path)))

    alone = result("pkg/entered_at_walk.py")
    summary_sharing._SHARED.clear()
    assert result("pkg/entered_at_step.py") == [("command", "pkg/walker.py", 8)]
    assert result("pkg/entered_at_walk.py") == alone
    # ``other`` read the ``step`` made where the cycle was entered at ``walk``: where another
    # ``step`` was made (the cycle entered at ``step``), it is computed again, not adopted.
    summary_sharing._SHARED.clear()
    step_first = result("pkg/step_first.py")
    assert step_first == [("command", "pkg/walker.py", 8)]
    summary_sharing._SHARED.clear()
    result("pkg/entered_at_walk.py")
    assert result("pkg/step_first.py") == step_first
    # Nor where no ``step`` was made yet: computing ``other`` there enters the cycle at ``step``.
    summary_sharing._SHARED.clear()
    result("pkg/entered_at_walk.py")
    assert result("pkg/entered_at_step.py") == [("command", "pkg/walker.py", 8)]


def test_a_shared_summary_is_not_adopted_where_its_calls_would_pass_the_depth_limit() -> None:
    """A summary computed near the top of one file's call chain went 10 calls deep; adopted at
    the bottom of another file's chain it would show a sink that computing it there does not
    reach (``summaries.MAX_CALL_DEPTH``)."""
    inner = 10
    outer = summaries.MAX_CALL_DEPTH - inner + 4
    chain = ["import os\n\n\ndef g0(x):\n    os.system(x)\n"] + [f"\ndef g{i}(x):\n    return g{i - 1}(x)\n" for i in range(1, inner + 1)]
    wrappers = [f"\ndef w{i}(x):\n    return w{i + 1}(x)\n" for i in range(outer)] + [f"\ndef w{outer}(x):\n    return chain.g{inner}(x)\n"]
    files = {
        "pkg/__init__.py": "",
        "pkg/chain.py": "".join(chain),
        "pkg/near.py": f"from flask import request\nfrom pkg import chain\n\n\ndef view():\n    return chain.g{inner}(request.args['x'])\n",
        "pkg/far.py": "from flask import request\nfrom pkg import chain\n" + "".join(wrappers)
                      + "\n\ndef view():\n    return w0(request.args['x'])\n",
    }

    def result(path: str) -> tuple[object, ...]:
        found = _analysed(files, path)
        return _flow_sites(found), found.not_analysed

    far = result("pkg/far.py")
    assert far[1]  # the chain is cut there
    summary_sharing._SHARED.clear()
    assert result("pkg/near.py")[0] == (("command", "pkg/chain.py", 5),)
    assert result("pkg/far.py") == far


def test_a_summary_that_applied_a_function_of_the_analysed_file_is_not_shared() -> None:
    """``run`` (recursive, so shared with what it made) calls ``app.fill(box)`` passing no data:
    while ``app.py`` is analysed, ``fill`` is applied in full and stores outside data in
    ``box``; elsewhere it is not (its own file's analysis reports it), so ``run`` returns other
    data there and must be computed there."""
    files = {
        "pkg/__init__.py": "",
        "pkg/lib.py": ("from pkg import app\n\n\nclass Box:\n    pass\n\n\ndef run(n):\n    if n:\n        return run(n - 1)\n"
                       "    box = Box()\n    app.fill(box)\n    return box.value\n"),
        "pkg/app.py": ("import os\nfrom flask import request\nfrom pkg import lib\n\n\ndef fill(target):\n"
                       "    target.value = request.args['x']\n\n\ndef view():\n    os.system(lib.run(2))\n"),
        "pkg/other.py": "import os\nfrom pkg import lib\n\n\ndef view():\n    os.system(lib.run(2))\n",
    }

    def result(path: str) -> tuple[tuple[str, str, int], ...]:
        return _flow_sites(_analysed(files, path))

    alone = result("pkg/other.py")
    summary_sharing._SHARED.clear()
    assert result("pkg/app.py") == (("command", "pkg/app.py", 11),)
    assert result("pkg/other.py") == alone


def test_a_cycle_computed_inside_another_cycles_later_round_is_not_shared() -> None:
    """``h`` is a cycle whose second round computes the ``walk``/``step`` cycle again, not
    iterated there (``summaries.MAX_ROUNDS``: nesting must not multiply rounds); that ``walk``
    sees less than one computed on its own, and must not be taken for it."""
    files = dict(_ROTATING)
    files["pkg/outer.py"] = ("import os\nfrom pkg import walker\n\n\ndef h(x, n):\n    os.system(x)\n    if n:\n"
                             "        return h(x, n - 1)\n    return walker.walk('ls', 'ls', x, 3)\n")
    files["pkg/nested.py"] = "from flask import request\nfrom pkg import outer\n\n\ndef view():\n    return outer.h(request.args['x'], 2)\n"
    files["pkg/direct.py"] = ("from flask import request\nfrom pkg import walker\n\n\ndef view():\n"
                              "    return walker.walk('ls', 'ls', request.args['x'], 3)\n")

    def result(path: str) -> tuple[tuple[str, str, int], ...]:
        return _flow_sites(_analysed(files, path))

    alone = {path: result(path) for path in ("pkg/direct.py", "pkg/nested.py")}
    assert alone["pkg/direct.py"] == (("command", "pkg/walker.py", 8),)
    for order in (["pkg/nested.py", "pkg/direct.py"], ["pkg/direct.py", "pkg/nested.py"]):
        summary_sharing._SHARED.clear()
        for path in order:
            assert result(path) == alone[path], (order, path)


def test_a_base_class_is_known_whichever_modules_were_loaded_before() -> None:
    """``Sub.__init__`` stores ``self.root`` through ``super().__init__`` of ``Base`` in a third
    module. The class's bases are looked up by loading their modules (Python imports them to
    define the class), so its summary is the same whether it is computed while ``app.py`` is
    analysed or first in another file's analysis (``other.py`` reads ``Sub``'s attributes) and
    adopted. Found on Flask 3.0.3: the worker that analysed ``templating.py`` before ``app.py``
    reported ``open_resource``'s path flow without the constructor's ``root_path``."""
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": "class Base:\n    def __init__(self, root):\n        self.root = root\n",
        "pkg/sub.py": ("from pkg.base import Base\n\n\nclass Sub(Base):\n    def __init__(self, root, flag=False):\n"
                       "        super().__init__(root)\n        self.flag = flag\n"),
        "pkg/app.py": ("import os\nfrom pkg.sub import Sub\n\n\nclass App(Sub):\n    def __init__(self, root):\n"
                       "        super().__init__(root)\n\n    def open_it(self, name):\n"
                       "        return open(os.path.join(self.root, name))\n"),
        "pkg/other.py": "from pkg.sub import Sub\n\n\ndef show(obj: Sub):\n    return obj.flag\n",
    }

    def result(path: str) -> tuple[tuple[str, int, str], ...]:
        found = _analysed(files, path)
        return tuple(sorted((f.kind, f.site.line, f.label.what) for f in found.flows))

    alone = result("pkg/app.py")
    assert ("path", 10, "parameter 'root' of the public constructor App()") in alone
    summary_sharing._SHARED.clear()
    result("pkg/other.py")
    assert result("pkg/app.py") == alone


def test_flasks_app_is_analysed_alike_after_any_file_of_its_package(tmp_path: Path) -> None:
    """The real case of the test above: each file of Flask's package analysed by a fresh worker
    and then after ``templating.py`` or ``debughelpers.py`` (the two orders that hid the flow)."""
    root = real_library(tmp_path / "flask")
    paths = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    readable = {p: hashlib.sha256((root / p).read_bytes()).hexdigest() for p in paths}

    def report(path: str) -> list[dict[str, object]]:
        return [c.to_json() for c in detect_file(root, path, readable=readable).candidates]

    app = "src/flask/app.py"
    summary_sharing._SHARED.clear()
    program._SHARED_MODULES.clear()
    alone = report(app)
    assert any("'root_path' of the public constructor Flask()" in json.dumps(c) for c in alone)
    for before in ("src/flask/templating.py", "src/flask/debughelpers.py"):
        summary_sharing._SHARED.clear()
        program._SHARED_MODULES.clear()
        report(before)
        assert report(app) == alone, before
