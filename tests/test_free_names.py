"""Which names a file reads but binds nowhere (``free_names``): the whole file counts, in
every scope, and a file that may bind names its syntax does not show has none."""

import ast

import pytest

from fleetledger.analysis.facts import Site
from fleetledger.analysis.free_names import bound_names, free_source, free_value


def _free(source: str) -> set[str]:
    tree = ast.parse(source)
    bound = bound_names(tree)
    site = Site(path="m.py", line=1, col=0, end_line=1, end_col=0, scope="<module>")
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            and free_value(n.id, bound, site) is not None}


def test_a_name_bound_in_any_scope_or_any_way_is_not_free() -> None:
    source = """
import a.b
from c import d as e
def f(p, *q, r=1, **s):
    global g
    g = p
    for i in q: print(i)
    with open(r) as h: print(h)
    try: pass
    except KeyError as k: print(k)
    match s:
        case {"x": x1, **rest}: print(x1, rest)
        case [y1, *ys]: print(y1, ys)
    w = [z for z in ys]
    lambda v: v
    nonlocal_user = (n := 3)
    return a, e, g, h, w, n, nonlocal_user
class C: pass
print(C, f, free1)
"""
    assert _free(source) == {"free1"}


def test_names_used_as_modules_callables_or_types_are_not_data() -> None:
    source = """
@deco
class C(Base):
    def m(self, x: Ann1) -> Ann2:
        try: return mod.attr + call()
        except Err: return data1
"""
    assert _free(source) == {"data1"}


@pytest.mark.parametrize("line", ["from m import *", "globals()['late'] = 1", "exec('late = 1')",
                                  "vars()['late'] = 1", "__builtins__.late = 1"])
def test_a_file_that_may_bind_names_unseen_has_no_free_name(line: str) -> None:
    assert bound_names(ast.parse(f"{line}\nprint(late)\n")) is None
    assert _free(f"{line}\nprint(late)\n") == set()


def test_builtins_python2_builtins_and_module_dunders_are_never_free() -> None:
    assert _free("print(len, unicode, xrange, __file__, __path__, basestring, other)") == {"other"}


def test_the_source_says_what_the_name_is_and_where() -> None:
    site = Site(path="pkg/m.py", line=4, col=7, end_line=4, end_col=9, scope="f")
    value = free_value("n1", frozenset(), site)
    assert value is not None
    (label,) = value.all_labels()
    assert (label.channel, label.path, label.line, label.col) == ("api", "pkg/m.py", 4, 7)
    assert "'n1'" in label.what and "pkg/m.py" in label.what
    assert free_source(label.what) and not free_source("parameter 'n1' of the public function f()")
