"""The gate: every action is checked against the policy in force *now*, before it runs.

The policy is data (a frozen dataclass), read afresh at every start; its hash is stamped on
every record. The ledger never grants a permission: a past allowance, a summary or a log line
is not an approval. ``Gate.check`` returns a ``Decision``; the caller records a denial as
``policy.denied`` (with the rule that denied it) and does not act.
"""

from __future__ import annotations

import fnmatch
import hashlib
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import errors
from .ledger.records import canonical_json


@dataclass(frozen=True, kw_only=True)
class Policy:
    """What a run may do. Defaults are the safe defaults for ``scan``.

    Attributes:
        tools: Tools that may run (``"bandit"``, ``"analyst"``, ``"brief"``).
        read: Glob patterns of paths tools may read (``"$TARGET/**"`` is the scan target).
        write: Glob patterns of paths that may be written (``"$WORKSPACE/**"``).
        egress: ``host:port`` destinations tools may reach; empty means no network.
        models: Model providers that may be called (``"offline"``, ``"openai:*"``).
        max_model_calls: Budget of model calls for the run, or None for no limit.
        approval_required: Effect kinds that need an ``approval.granted`` record first.
        source: Where the policy came from (a path, or ``"defaults"``); not part of the hash.
    """

    tools: tuple[str, ...] = ("bandit", "analyst", "brief")
    read: tuple[str, ...] = ("$TARGET/**",)
    write: tuple[str, ...] = ("$WORKSPACE/**",)
    egress: tuple[str, ...] = ()
    models: tuple[str, ...] = ("offline",)
    max_model_calls: int | None = None
    approval_required: tuple[str, ...] = ()
    source: str = field(default="defaults", compare=False)

    @property
    def hash(self) -> str:
        """SHA-256 (16 hex digits) of the policy's content, stamped on every record."""
        body = {k: v for k, v in asdict(self).items() if k != "source"}
        return hashlib.sha256(canonical_json(body).encode()).hexdigest()[:16]

    @classmethod
    def load(cls, path: Path | None) -> "Policy":
        """Reads a policy TOML file (``[policy]`` table), or returns the defaults for None.

        Raises:
            PolicyError: the file cannot be read, is not TOML, or has unknown keys or bad types.
        """
        if path is None:
            return cls()
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise errors.PolicyError(f"cannot read policy {path}: {exc}") from exc
        table = data.get("policy", data)
        known = {f for f in cls.__dataclass_fields__ if f != "source"}
        unknown = sorted(set(table) - known)
        if unknown:
            raise errors.PolicyError(f"policy {path}: unknown keys {unknown}; known keys: {sorted(known)}")
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key == "max_model_calls":
                if value is not None and (not isinstance(value, int) or value < 0):
                    raise errors.PolicyError(f"policy {path}: max_model_calls must be a non-negative integer")
                values[key] = value
            elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise errors.PolicyError(f"policy {path}: {key} must be a list of strings")
            else:
                values[key] = tuple(value)
        return cls(source=str(path), **values)


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
    """

    def __init__(self, policy: Policy, *, target: Path, workspace: Path) -> None:
        self.policy = policy
        self._vars = {"$TARGET": str(target), "$WORKSPACE": str(workspace)}

    def _expand(self, pattern: str) -> str:
        for name, value in self._vars.items():
            pattern = pattern.replace(name, value)
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
        if action.kind in ("read", "write"):
            patterns = p.read if action.kind == "read" else p.write
            for pattern in patterns:
                expanded = self._expand(pattern)
                if fnmatch.fnmatchcase(action.target, expanded) or action.target == expanded.removesuffix("/**"):
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
