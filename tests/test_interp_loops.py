"""When a loop's state is stable: a body's upward-exposed reads, and the round that is not run
when only names outside them changed (``fleetledger.analysis.interp_loops``). The verdicts
this must keep are in the probe ``tests/data/taint/loop_state.py``."""

from __future__ import annotations

import ast
import textwrap

import pytest

from fleetledger.analysis import engine, interp_statements, parser
from fleetledger.analysis.interp_loops import exposed_reads


def _loop(source: str) -> ast.For | ast.While:
    tree = ast.parse(textwrap.dedent(source))
    return next(node for node in ast.walk(tree) if isinstance(node, (ast.For, ast.While)))


@pytest.mark.parametrize(("source", "exposed"), [
    # assigned at the top level before any read: not exposed
    ("for x in xs:\n    part = x.strip()\n    use(part)\n", {"use"}),
    ("for x in xs:\n    a, *b = x\n    use(a, b)\n", {"use"}),
    ("for x in xs:\n    n: int = len(x)\n    use(n)\n", {"use", "int", "len"}),
    # read before it is assigned, in the same statement or an earlier one
    ("for x in xs:\n    total = total + x\n", {"total"}),
    ("for x in xs:\n    total += x\n", {"total"}),
    ("for x in xs:\n    use(last)\n    last = x\n", {"use", "last"}),
    # bound only in a branch, a with, a try, a walrus or a nested loop: stays exposed when read
    ("for x in xs:\n    if x:\n        v = x\n    use(v)\n", {"use", "v"}),
    ("for x in xs:\n    with f() as v:\n        pass\n    use(v)\n", {"f", "use", "v"}),
    ("for x in xs:\n    if (v := x):\n        pass\n    use(v)\n", {"use", "v"}),
    ("for x in xs:\n    for v in x:\n        pass\n    use(v)\n", {"use", "v"}),
    # an item or attribute target defines no name, and reads its owner
    ("for x in xs:\n    d[x] = 1\n    self.y = x\n", {"d", "self"}),
    ("for x in xs:\n    a, d[0] = x\n    use(a)\n", {"d", "use", "a"}),
    # loads anywhere inside a statement count, nested functions included; del is a read
    ("for x in xs:\n    f = lambda: late\n    late = x\n", {"late"}),
    ("for x in xs:\n    def g():\n        return later\n    later = x\n", {"later"}),
    ("for x in xs:\n    del gone\n    gone = x\n", {"gone"}),
    # the for target is assigned before the body; an attribute target reads its owner
    ("for self.x in xs:\n    use(self)\n", {"self", "use"}),
    # a while loop reads what its test loads
    ("while more(state):\n    state = step()\n", {"more", "state", "step"}),
])
def test_exposed_reads_leave_out_only_names_certainly_assigned_first(source: str, exposed: set[str]) -> None:
    assert exposed_reads(_loop(source)) == exposed


def _rounds(source: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """How often the engine interprets the statement marked ``# counted`` in ``source``."""
    text = textwrap.dedent(source)
    line = next(n for n, t in enumerate(text.splitlines(), start=1) if "# counted" in t)
    seen = []
    original = interp_statements.Statements.statement

    def statement(self: interp_statements.Statements, node: ast.stmt) -> None:
        if node.lineno == line:
            seen.append(node)
        original(self, node)

    monkeypatch.setattr(interp_statements.Statements, "statement", statement)
    engine.analyse("m.py", parser.parse_module(text).module)
    return len(seen)


def test_a_round_that_changed_only_names_the_body_assigns_first_is_the_last(monkeypatch: pytest.MonkeyPatch) -> None:
    only_temporaries = """
        def f(items):
            out = ""
            for item in items:
                part = item.strip()  # counted
                out = part
            return out
    """
    carried = only_temporaries.replace("out = part", "out = out + part")
    assert _rounds(only_temporaries, monkeypatch) == 1
    assert _rounds(carried, monkeypatch) == 2
