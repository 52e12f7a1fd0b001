"""The gate: every action is checked against the policy in force *now*, before it runs.

The policy (``policy.py``) is data, read afresh at every start; its hash is stamped on every
record. The ledger never grants a permission: a past allowance, a summary or a log line
is not an approval. ``Gate.check`` returns a ``Decision``; the caller records a denial as
``policy.denied`` (with the rule that denied it) and does not act.
"""

from __future__ import annotations

import fnmatch
import glob
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .policy import Policy


@dataclass(frozen=True, kw_only=True)
class Action:
    """An action about to happen.

    Attributes:
        kind: ``"tool"``, ``"model"``, ``"read"``, ``"write"``, ``"effect"`` or ``"egress"``.
        target: What it acts on: a tool name, a model spec, a path, an effect kind, a host:port.
        detail: Free-form facts for the denial record.
    """

    kind: str
    target: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Decision:
    """The gate's answer: ``allowed``, and the ``rule`` that decided (quoted in denials)."""

    allowed: bool
    rule: str


class Gate:
    """Checks actions against one policy, with the run's ``$TARGET`` and ``$WORKSPACE`` bound.

    Args:
        policy: The policy in force now.
        target: The scanned root (absolute).
        workspace: The workspace folder (absolute).
        analysed: Whether the job analyses a file (its path relative to ``target``), e.g. a
            scan's source files: a repository's ``exclude`` rule denies reading such a file only
            when the policy's ``repository_may_exclude`` is true. By default: no file.
    """

    def __init__(self, policy: Policy, *, target: Path, workspace: Path,
                 analysed: Callable[[str], bool] = lambda path: False) -> None:
        self.policy = policy
        self.analysed = analysed
        self.target = str(target)
        self._vars = {"$TARGET": str(target), "$WORKSPACE": str(workspace)}

    def _expand(self, pattern: str, *, as_glob: bool) -> str:
        """Puts the run's paths in for ``$TARGET`` and ``$WORKSPACE``; with ``as_glob``, with
        their ``*?[`` escaped, so that a folder called ``proj[1]`` matches itself."""
        for name, value in self._vars.items():
            pattern = pattern.replace(name, glob.escape(value) if as_glob else value)
        return pattern

    def check(self, action: Action) -> Decision:
        """Decides whether ``action`` may happen now (read-only, deterministic).

        Returns:
            ``Decision(allowed=True, rule=...)`` naming the rule that allowed it, or
            ``allowed=False`` naming the rule (or the missing rule) that denied it.
        """
        p = self.policy
        if action.kind == "tool":
            ok = action.target in p.tools
            return Decision(allowed=ok, rule=f"policy.tools {'includes' if ok else 'does not include'} {action.target!r}")
        if action.kind == "model":
            ok = any(fnmatch.fnmatchcase(action.target, m) or action.target.split(":")[0] == m for m in p.models)
            return Decision(allowed=ok, rule=f"policy.models {list(p.models)} {'allows' if ok else 'does not allow'} {action.target!r}")
        if action.kind == "read":
            relative = action.target[len(self.target) + 1:] if action.target.startswith(self.target + "/") else None
            pattern = next((x for x in p.exclude if relative is not None and fnmatch.fnmatchcase(relative, x)), None)
            if pattern is not None and (p.repository_may_exclude or not self.analysed(relative or "")):
                return Decision(allowed=False, rule=f"repository rule exclude {pattern!r}")
            # else: a file the job analyses, which the policy does not let the repository hide
            # (the reports list it as scanned despite the rule): the read patterns decide.
        if action.kind in ("read", "write"):
            patterns = p.read if action.kind == "read" else p.write
            for pattern in patterns:
                if (fnmatch.fnmatchcase(action.target, self._expand(pattern, as_glob=True))
                        or action.target == self._expand(pattern, as_glob=False).removesuffix("/**")):
                    return Decision(allowed=True, rule=f"policy.{action.kind} {pattern!r}")
            return Decision(allowed=False, rule=f"no policy.{action.kind} pattern matches {action.target!r}")
        if action.kind == "egress":
            ok = action.target in p.egress
            return Decision(allowed=ok, rule=f"policy.egress {'allows' if ok else 'does not allow'} {action.target!r}")
        if action.kind == "effect":
            if action.target in p.approval_required:
                return Decision(allowed=False, rule=f"policy.approval_required includes {action.target!r}")
            return Decision(allowed=True, rule=f"policy.approval_required does not include {action.target!r}")
        return Decision(allowed=False, rule=f"unknown action kind {action.kind!r}")
