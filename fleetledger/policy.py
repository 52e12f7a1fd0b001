"""The policy: what a run may do, read afresh from the user's configuration at every start.

A policy file is TOML with a ``[policy]`` table (see ``docs/policy.md``)::

    [policy]
    tools = ["bandit", "analyst", "brief"]   # tools that may run
    read = ["$TARGET/**"]                    # paths tools may read
    write = ["$WORKSPACE/**"]                # paths that may be written
    egress = []                              # host:port destinations tools may reach
    models = ["offline"]                     # model providers that may be called
    max_model_calls = 500                    # budgets per run (omit for none)
    max_input_tokens = 2_000_000
    max_output_tokens = 200_000
    max_cost_usd = 5.0                       # prices: models.toml (fleetledger.models.config)
    approval_required = ["ticket"]           # effect kinds that need `fleetledger approve`
    repository_may_exclude = false           # may the repository's rules hide files the job analyses?
    fix = false                              # propose a patch per confirmed finding (as `scan --fix`)

Repository rules (``.fleetledger.toml`` in the scanned repository, ``[rules]`` table) may only
narrow the policy: exclude paths, lower the budgets, drop tools or models. The
repository is untrusted, so any key that would widen the policy (egress, write, read, more
tools, a larger budget, fewer approvals, or a key we do not know) is refused and reported,
never applied. Its ``exclude`` patterns keep files from the workers, but not the files the job
analyses (the scan's source files) unless the user's policy sets ``repository_may_exclude``:
a repository must not be able to opt its own code out of its scan. The gate applies that
(``Gate``, with the job's ``analyses``); the reports list what each exclusion did.
"""

from __future__ import annotations

import functools
import hashlib
import math
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from . import errors
from .ledger.records import canonical_json

REPO_RULES_FILE = ".fleetledger.toml"
BUDGETS = ("max_model_calls", "max_input_tokens", "max_output_tokens", "max_cost_usd")
"""Budget keys: per run, may only be lowered by repository rules."""
MAX_RULES_BYTES = 64 * 1024


@dataclass(frozen=True, kw_only=True)
class Policy:
    """What a run may do. The defaults are the safe defaults for ``scan``: read-only access to
    the target, no network from tools, writes only in the workspace, the offline model.

    Attributes:
        tools: Tools that may run (``"bandit"``, ``"analyst"``, ``"brief"``).
        read: Glob patterns of paths tools may read (``$TARGET`` is the scanned root).
        write: Glob patterns of paths that may be written (``$WORKSPACE`` is the workspace).
        exclude: Glob patterns (relative to the target) that may not be read, from the
            repository rules; applied after ``read``.
        egress: ``host:port`` destinations tools may reach; empty means no network.
        models: Model providers that may be called (``"offline"``, ``"openai:*"``).
        max_model_calls: Budget of model calls for the run, or None for no limit.
        max_input_tokens, max_output_tokens: Budgets of model tokens for the run, or None.
        max_cost_usd: Budget of model spend for the run in US dollars, or None (the prices
            per model come from the model configuration).
        approval_required: Effect kinds that need an ``approval.granted`` record first.
        repository_may_exclude: Whether the repository's ``exclude`` patterns may hide the
            files the job analyses (the scan's source files). False (the default): such files
            are read all the same and the reports say the rule was refused; the patterns still
            keep other files (README, packaging) from the workers. Only the user's policy may
            set it.
        fix: Whether a scan proposes patches for its confirmed findings (the ``fix`` sprint),
            as ``scan --fix`` does; only the user's policy may set it. Left out of the hash
            while false, so the policies written before it keep their hashes.
        source: Where the policy came from; not part of the hash.
        refused_rules: Repository rules that were refused (they would widen the policy),
            one sentence each; not part of the hash.
    """

    tools: tuple[str, ...] = ("bandit", "analyst", "brief")
    read: tuple[str, ...] = ("$TARGET/**",)
    write: tuple[str, ...] = ("$WORKSPACE/**",)
    exclude: tuple[str, ...] = ()
    egress: tuple[str, ...] = ()
    models: tuple[str, ...] = ("offline",)
    max_model_calls: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_cost_usd: float | None = None
    approval_required: tuple[str, ...] = ()
    repository_may_exclude: bool = False
    fix: bool = False
    source: str = field(default="defaults", compare=False)
    refused_rules: tuple[str, ...] = field(default=(), compare=False)

    def body(self) -> dict[str, Any]:
        """The policy's content (what the hash covers), JSON-ready."""
        return {k: v for k, v in asdict(self).items() if k not in ("source", "refused_rules") and (k != "fix" or v)}

    @functools.cached_property
    def hash(self) -> str:
        """SHA-256 (16 hex digits) of the policy's content, stamped on every record (computed
        once: a policy does not change)."""
        return hashlib.sha256(canonical_json(self.body()).encode()).hexdigest()[:16]

    @classmethod
    def load(cls, path: Path | None) -> "Policy":
        """Reads a policy file, or returns the defaults for None.

        Raises:
            PolicyError: the file cannot be read, is not TOML, or has unknown keys or values of
                the wrong type; the message names the key.
        """
        if path is None:
            return cls()
        table = _read_table(path, "policy", errors.PolicyError)
        known = {f for f in cls.__dataclass_fields__ if f not in ("source", "refused_rules", "exclude")}
        unknown = sorted(set(table) - known)
        if unknown:
            raise errors.PolicyError(f"policy {path}: unknown keys {unknown}; known keys: {sorted(known)}")
        values = {key: _value(key, value, path) for key, value in table.items()}
        return cls(source=str(path), **values)

    def narrowed_by(self, rules_path: Path) -> "Policy":
        """Applies the repository's rules file, if any: only narrowing keys take effect.

        Args:
            rules_path: ``<target>/.fleetledger.toml``; a missing file changes nothing.

        Returns:
            The narrowed policy; ``refused_rules`` lists what was refused and why. A rules file
            that cannot be read or parsed is refused whole (and reported), not trusted in part.
        """
        if not rules_path.is_file() or rules_path.is_symlink():
            return self
        try:
            if rules_path.stat().st_size > MAX_RULES_BYTES:
                raise errors.PolicyError(f"larger than {MAX_RULES_BYTES} bytes")
            table = _read_table(rules_path, "rules", errors.PolicyError)
        except errors.PolicyError as exc:
            return replace(self, refused_rules=(f"{rules_path.name} ignored: {exc}",))
        refused: list[str] = []
        changes: dict[str, Any] = {}
        for key, value in table.items():
            if key == "exclude" and _strings(value):
                changes["exclude"] = tuple(dict.fromkeys((*self.exclude, *value)))
                if value and not self.repository_may_exclude:
                    refused.append(f"exclude {value} refused for the files the job analyses (a scan's source files): the "
                                   "policy does not let a repository hide them (repository_may_exclude = false), so "
                                   "they are read all the same; other files it names stay excluded")
            elif key in BUDGETS and _budget_ok(key, value):
                current = getattr(self, key)
                if current is not None and value > current:
                    refused.append(f"{key} = {value} refused: it would raise the budget of {current}")
                else:
                    changes[key] = value
            elif key in ("tools", "models") and _strings(value):
                wider = sorted(set(value) - set(getattr(self, key)))
                if wider:
                    refused.append(f"{key} {wider} refused: the repository cannot allow what the policy does not")
                changes[key] = tuple(v for v in getattr(self, key) if v in value)
            elif key in BUDGETS:
                refused.append(f"{key} = {value!r} refused: a budget is a non-negative finite number")
            elif key in ("egress", "read", "write", "approval_required", "repository_may_exclude", "fix"):
                refused.append(f"{key} refused: only the user's policy may set it (a repository can only narrow)")
            else:
                refused.append(f"{key} refused: not a key repository rules may set (exclude, {', '.join(BUDGETS)}, tools, models)")
        return replace(self, source=f"{self.source} + {rules_path}", refused_rules=tuple(refused), **changes)


def _read_table(path: Path, table: str, error: type[errors.FleetledgerError]) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise error(f"cannot read {path}: {exc}") from exc
    body = data.get(table, data)
    if not isinstance(body, dict):
        raise error(f"{path}: [{table}] must be a table")
    stray = sorted(set(data) - {table}) if table in data else []
    if stray:  # keys above the header, or another table: silently dropping them would hide intent
        raise error(f"{path}: {', '.join(stray)} outside [{table}]; put every key under [{table}]")
    return body


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _budget_ok(key: str, value: Any) -> bool:
    kinds = (int, float) if key == "max_cost_usd" else (int,)
    return isinstance(value, kinds) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _value(key: str, value: Any, path: Path) -> Any:
    if key in ("repository_may_exclude", "fix"):
        if not isinstance(value, bool):
            raise errors.PolicyError(f"policy {path}: {key} must be true or false")
        return value
    if key in BUDGETS:
        if value is not None and not _budget_ok(key, value):
            what = "a non-negative number (US dollars)" if key == "max_cost_usd" else "a non-negative integer"
            raise errors.PolicyError(f"policy {path}: {key} must be {what}")
        return value
    if not _strings(value):
        raise errors.PolicyError(f"policy {path}: {key} must be a list of strings")
    return tuple(value)
