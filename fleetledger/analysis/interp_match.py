"""``match`` statements in the abstract interpreter (``interp.Frame``), as Python runs them
(PEP 634): each case that may take the subject runs on a copy of the environment with its
captures bound, and the paths are joined; a constant subject takes only the cases whose
literals admit it, and none after the first that surely does.
"""

from __future__ import annotations

import ast
from typing import Any

from .interp_operators import CONST_TYPES
from .interp_statements import join_envs
from .values import Value, constant, join
from .walks import walk


class Matching:
    """``match``, mixed into ``interp.Frame``."""

    def match(self, node: ast.Match) -> None:
        """Interprets ``match``: each case that may take the subject, joined. A constant
        subject takes only the cases whose literals admit it, and none after the first that
        surely does (Python's semantics: the first matching case runs)."""
        subject = self.expr(node.subject)
        before = dict(self.env)
        ends: list[dict[str, Value]] = []
        exhaustive = False
        for case in node.cases:
            taken = _takes(case, subject)
            if taken is False:
                continue
            self.env, self.alive = dict(before), True
            for name, value in _captures(case.pattern, subject).items():
                self.env[name] = value
            if case.guard is not None:
                self.expr(case.guard)
                self.refine(case.guard, True)
            self.block(case.body)
            if self.alive:
                ends.append(self.env)
            if isinstance(case.pattern, ast.MatchAs) and case.pattern.pattern is None and case.guard is None or taken:
                exhaustive = True
                break
        if not exhaustive:
            ends.append(before)
        self.alive = bool(ends)
        self.env = join_envs(*ends) if ends else before


def _captures(pattern: ast.pattern, subject: Value) -> dict[str, Value]:
    """The names a ``case`` pattern binds: a name bound to a literal alternative holds that
    literal (``case "a" as x``), any other capture holds (part of) the subject."""
    names: dict[str, Value] = {}
    for node in walk(pattern):
        if isinstance(node, ast.MatchAs) and node.name:
            literal = _literal_pattern(node.pattern)
            names[node.name] = literal if literal is not None else (subject if node.pattern is None else subject.flatten())
        elif isinstance(node, ast.MatchStar) and node.name:
            names[node.name] = subject.flatten()
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names[node.rest] = subject.flatten()
    return names


def _takes(case: ast.match_case, subject: Value) -> bool | None:
    """Whether ``case`` takes a constant subject: True (surely, and no guard), False (its
    literals do not admit it), None (not known: not constant, or not a pattern of literals)."""
    if not subject.is_const:
        return None
    admitted = _literals(case.pattern)
    if admitted is None:
        return None
    try:
        hit = any(subject.const is literal if literal is None or isinstance(literal, bool) else subject.const == literal
                  for literal in admitted)
    except Exception:
        return None
    if not hit:
        return False
    return True if case.guard is None else None


def _literals(pattern: ast.pattern) -> list[Any] | None:
    """The constants a pattern of literals admits (``"a"``, ``"a" | "b"``, ``None``), else None."""
    if isinstance(pattern, ast.MatchValue) and isinstance(pattern.value, ast.Constant):
        return [pattern.value.value]
    if isinstance(pattern, ast.MatchSingleton):
        return [pattern.value]
    if isinstance(pattern, ast.MatchOr):
        parts = [_literals(p) for p in pattern.patterns]
        return None if any(p is None for p in parts) else [v for p in parts for v in p]  # type: ignore[union-attr]
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
        return _literals(pattern.pattern)
    return None


def _literal_pattern(pattern: ast.pattern | None) -> Value | None:
    """The value a pattern of literals admits (``"a"``, ``"a" | "b"``), else None."""
    if isinstance(pattern, ast.MatchValue) and isinstance(pattern.value, ast.Constant):
        return constant(pattern.value.value) if isinstance(pattern.value.value, CONST_TYPES) else None
    if isinstance(pattern, ast.MatchSingleton):
        return constant(pattern.value)
    if isinstance(pattern, ast.MatchOr):
        parts = [_literal_pattern(p) for p in pattern.patterns]
        return join(*parts) if all(p is not None for p in parts) else None  # type: ignore[arg-type]
    return None
