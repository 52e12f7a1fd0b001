"""``set_after.attribute_set``: what the code sets on an object right after a call made it, read
through straight-line statements only and at most ``MAX_FOLLOWING`` of them (a hostile block of
thousands of such calls must not cost their square)."""

from __future__ import annotations

import ast

from fleetledger.analysis import set_after


def _made(tree: ast.AST) -> ast.Call:
    """The call of ``make`` (the one that makes the object)."""
    return next(node for node in ast.walk(tree) if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "make")


def _set(source: str) -> tuple[str, object] | None:
    tree = ast.parse(source)
    function = tree.body[0]
    return set_after.attribute_set(function, _made(function), {"mimetype": ["application/json"]})


def test_the_first_assignment_after_the_call_is_read_through_straight_line_statements() -> None:
    assert _set("def f(b):\n    r = make(b)\n    r.headers['X'] = '1'\n    r.mimetype = 'application/json'\n") == (
        "mimetype", "application/json")
    assert _set("def f(b):\n    r = make(b)\n    r.mimetype = kind(b)\n") == ("mimetype", None)


def test_a_branch_a_return_or_a_rebinding_in_between_ends_the_reading() -> None:
    assert _set("def f(b):\n    r = make(b)\n    if b:\n        return r\n    r.mimetype = 'application/json'\n") is None
    assert _set("def f(b):\n    r = make(b)\n    r = other()\n    r.mimetype = 'application/json'\n") is None
    assert _set("def f(b):\n    r = g(make(b))\n    r.mimetype = 'application/json'\n") is None  # not the whole value


def test_no_more_than_max_following_statements_are_read() -> None:
    near = "".join(f"    x{n} = {n}\n" for n in range(set_after.MAX_FOLLOWING - 1))
    far = "".join(f"    x{n} = {n}\n" for n in range(set_after.MAX_FOLLOWING))
    tail = "    r.mimetype = 'application/json'\n"
    assert _set("def f(b):\n    r = make(b)\n" + near + tail) == ("mimetype", "application/json")
    assert _set("def f(b):\n    r = make(b)\n" + far + tail) is None
