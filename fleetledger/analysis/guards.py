"""Checks that make a value safe on the paths where they hold.

``if name not in ALLOWED: abort(400)`` before a use, or a use inside ``if re.fullmatch(P,
name):``, restricts ``name`` there. ``validation`` reads one ``if`` test and says whether its
truth (or falsehood) restricts a name enough for a sink:

* membership in a constant collection (an allowlist) or equality with a constant;
* a regular-expression match whose pattern is anchored (``fullmatch``, or ``match``/``search``
  with ``$``/``\\Z``) and admits only characters that are inert in the sink (see
  ``patterns.alphabet`` and ``sinks.SAFE_ALPHABETS``);
* ``str.isdigit()``/``isdecimal()``/``isnumeric()`` (digits) and ``isalnum()``/``isalpha()``/
  ``isidentifier()`` (letters and digits: enough for a shell word, an SQL identifier or HTML
  text, not for Python source);
* ``isinstance(name, int | float | bool)``;
* for deserialisation, an HMAC comparison (``hmac.compare_digest``) of the data's signature.

``assert`` statements are never counted: ``python -O`` removes them.
"""

from __future__ import annotations

import ast
from typing import Protocol

from . import patterns
from .sinks import SAFE_ALPHABETS, SinkKind
from .tree import SourceTree

_DIGIT_CHECKS = frozenset({"isdigit", "isdecimal", "isnumeric"})
_WORD_CHECKS = frozenset({"isalnum", "isalpha", "isidentifier"})
_NUMERIC_TYPES = frozenset({"int", "float", "bool", "decimal.Decimal", "uuid.UUID"})
_EXIT_CALLS = frozenset({"abort", "exit", "_exit", "quit"})
_MAX_TERMS = 64


class Facts(Protocol):
    """What a guard needs to know about other expressions (implemented by the taint tracer)."""

    def literal(self, expr: ast.expr) -> ast.expr:
        """Follows a name to the single expression bound to it; returns ``expr`` otherwise."""

    def is_constant(self, expr: ast.expr) -> bool:
        """Tells whether every value ``expr`` can have is built from constants."""


def validation(tree: SourceTree, facts: Facts, test: ast.expr, name: str, sink: SinkKind, holds: bool) -> str | None:
    """Tells whether a condition restricts ``name`` enough for ``sink``.

    Args:
        tree: The parsed file.
        facts: Resolves names to their values.
        test: The condition of an ``if`` (or a comprehension's ``if``).
        name: The variable the sink uses.
        sink: The sink kind.
        holds: True for the branch where the condition is true, False for the other one.

    Returns:
        A description such as ``"allowlist check `host in ALLOWED_HOSTS` (line 12)"``, or None.
    """
    stack = [(test, holds)]
    seen = 0
    while stack and seen < _MAX_TERMS:
        expr, truth = stack.pop()
        seen += 1
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            stack.append((expr.operand, not truth))
        elif isinstance(expr, ast.BoolOp):
            # On the true branch of `a and b` both hold; on the false branch of `a or b` neither.
            if isinstance(expr.op, ast.And) == truth:
                stack.extend((value, truth) for value in reversed(expr.values))
        else:
            found = _atom(tree, facts, expr, name, sink, truth)
            if found is not None:
                return f"{found} `{tree.segment(test, 60)}` (line {test.lineno})"
    return None


def integrity_check(tree: SourceTree, test: ast.expr, holds: bool) -> str | None:
    """Tells whether a condition verifies a MAC, so the data it protects was signed by the app.

    Args:
        tree: The parsed file.
        test: An ``if`` condition.
        holds: Which branch the code is on (True: the condition holds).

    Returns:
        A description, or None.
    """
    stack = [(test, holds)]
    seen = 0
    while stack and seen < _MAX_TERMS:
        expr, truth = stack.pop()
        seen += 1
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            stack.append((expr.operand, not truth))
        elif isinstance(expr, ast.BoolOp):
            if isinstance(expr.op, ast.And) == truth:
                stack.extend((value, truth) for value in expr.values)
        elif truth and isinstance(expr, ast.Call):
            name = tree.qualname(expr.func) or ""
            if name.rsplit(".", 1)[-1] == "compare_digest":
                return f"MAC check `{tree.segment(test, 60)}` (line {test.lineno})"
    return None


def exits(body: list[ast.stmt], tree: SourceTree) -> bool:
    """Tells whether a block always leaves the enclosing flow.

    Args:
        body: The statements of the block.
        tree: The parsed file (to resolve ``abort``/``sys.exit`` names).

    Returns:
        True when the block's last statement is ``return``, ``raise``, ``continue``, ``break``
        or a call of ``abort``/``exit``/``_exit``/``quit``.
    """
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        name = tree.qualname(last.value.func) or ""
        return name.rsplit(".", 1)[-1] in _EXIT_CALLS
    return False


def _atom(tree: SourceTree, facts: Facts, expr: ast.expr, name: str, sink: SinkKind, truth: bool) -> str | None:
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and _is_name(expr.left, name):
        op, right = expr.ops[0], expr.comparators[0]
        if (isinstance(op, ast.In) and truth or isinstance(op, ast.NotIn) and not truth) and _constant_collection(facts, right):
            return "allowlist check"
        if (isinstance(op, (ast.Eq, ast.Is)) and truth or isinstance(op, (ast.NotEq, ast.IsNot)) and not truth) and facts.is_constant(right):
            return "equality with a constant"
        return None
    if not truth or not isinstance(expr, ast.Call):
        return None
    func_name = tree.qualname(expr.func) or ""
    if func_name == "isinstance" and len(expr.args) == 2 and _is_name(expr.args[0], name):
        types = expr.args[1].elts if isinstance(expr.args[1], ast.Tuple) else [expr.args[1]]
        if types and all((tree.qualname(t) or "") in _NUMERIC_TYPES for t in types):
            return "type check"
        return None
    if isinstance(expr.func, ast.Attribute) and _is_name(expr.func.value, name) and not expr.args:
        method = expr.func.attr
        if method in _DIGIT_CHECKS:
            return f"{method}() check"
        if method in _WORD_CHECKS and sink in ("shell", "sql", "html"):
            return f"{method}() check"
        return None
    return _regex_check(tree, facts, expr, name, sink)


def _regex_check(tree: SourceTree, facts: Facts, call: ast.Call, name: str, sink: SinkKind) -> str | None:
    func_name = tree.qualname(call.func) or ""
    method = func_name.rsplit(".", 1)[-1]
    if method not in ("fullmatch", "match", "search"):
        return None
    if func_name in ("re.fullmatch", "re.match", "re.search"):
        if len(call.args) < 2 or not _is_name(call.args[1], name):
            return None
        pattern_expr = facts.literal(call.args[0])
    elif isinstance(call.func, ast.Attribute) and call.args and _is_name(call.args[0], name):
        compiled = facts.literal(call.func.value)
        if not (isinstance(compiled, ast.Call) and tree.qualname(compiled.func) == "re.compile" and compiled.args):
            return None
        pattern_expr = facts.literal(compiled.args[0])
    else:
        return None
    if not (isinstance(pattern_expr, ast.Constant) and isinstance(pattern_expr.value, str)):
        return None
    pattern = pattern_expr.value
    chars = patterns.alphabet(pattern)
    if chars is None or not patterns.anchored(pattern, method):
        return None
    if not chars <= SAFE_ALPHABETS.get(sink, frozenset()):
        return None
    return "regular-expression validation"


def _constant_collection(facts: Facts, expr: ast.expr) -> bool:
    target = facts.literal(expr)
    if isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute) and target.func.attr in ("keys", "values"):
        target = facts.literal(target.func.value)
    if isinstance(target, ast.Call) and isinstance(target.func, ast.Name) and target.func.id in ("set", "frozenset", "tuple", "list", "dict") and len(target.args) == 1:
        target = facts.literal(target.args[0])
    return isinstance(target, (ast.Set, ast.List, ast.Tuple, ast.Dict)) and facts.is_constant(target)


def _is_name(expr: ast.expr, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name
