"""Exceptions in the abstract interpreter (``interp.Frame``): a ``try`` statement's handlers start
in any state its body passes through, and the block of ``with contextlib.suppress(...)`` may end
at any of its statements.
"""

from __future__ import annotations

import ast

from .interp_expressions import opaque
from .interp_statements import join_envs
from .tree import walk_scope
from .values import Value, join


class Exceptions:
    """``try`` and swallowing ``with`` blocks, mixed into ``interp.Frame``."""

    def swallowed(self, body: list[ast.stmt]) -> None:
        """The block of ``with suppress(...)``: what it raises ends it, and the code after it runs
        in the state the exception left (``if not ok(x): abort()`` proves nothing there): the
        states before the block, between its statements and at its end are joined, as ``try_``
        joins those where its handlers start."""
        before = dict(self.env)
        self.env, self.alive = join_envs(before, *self.midway(body)), True

    def midway(self, body: list[ast.stmt]) -> list[dict[str, Value]]:
        """Interprets a block and returns the states after each of its statements while the
        path lives (where an exception raised by the next one would leave the block)."""
        states: list[dict[str, Value]] = []
        for statement in body:
            if not self.alive:
                break
            self.program.budget.spend()
            self.statement(statement)
            if self.alive:
                states.append(dict(self.env))
        return states

    def try_(self, node: ast.Try) -> None:
        before = dict(self.env)
        outer_raised, self.raised = self.raised, []
        # A handler may start after any statement of the body: each one may raise before the
        # next runs (``x = input(); x = int(x)`` leaves the text in x when int() raises).
        # The states between the body's statements, joined, are where the handlers start
        # (inside a nested block, only its state before and after is seen).
        swallows = any(isinstance(n, (ast.Return, ast.Break, ast.Continue))
                       for statement in node.finalbody for n in (statement, *walk_scope(statement)))
        self.swallowing += swallows  # a ``finally`` that returns swallows what the body raised
        try:
            midway = self.midway(node.body)
        finally:
            self.swallowing -= swallows
        # The handlers' exception: what the body and the code's functions it called raised, and
        # what any other operation may (``int(x)``'s ValueError holds x): never a constant.
        raised = join(*self.raised, opaque("an exception the try block raised", self.site(node)))
        self.raised = outer_raised + self.raised
        after_body, body_alive = self.env, self.alive
        ends: list[dict[str, Value]] = []
        if body_alive:
            self.env, self.alive = after_body, True
            self.block(node.orelse)
            if self.alive:
                ends.append(self.env)
        for handler in node.handlers:
            self.env, self.alive = join_envs(before, *midway[:-1], after_body), True
            if handler.type is not None:
                self.expr(handler.type)
            if handler.name:
                self.env[handler.name] = raised  # what the try block raised (``e.args[0]``)
            self.block(handler.body)
            if self.alive:
                ends.append(self.env)
        self.alive = bool(ends)
        self.env = join_envs(*ends) if ends else join_envs(before, after_body)
        if node.finalbody:
            alive = self.alive
            self.alive = True
            self.block(node.finalbody)
            self.alive = self.alive and alive
