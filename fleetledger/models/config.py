"""Model configuration: where each provider is, what its models cost, how calls are retried.

Read on the coordinator's host only, from ``$FLEETLEDGER_MODEL_CONFIG`` or else
``<workspace>/models.toml`` (see ``docs/models.md``)::

    [openai]                            # any OpenAI-compatible endpoint
    base_url = "http://127.0.0.1:8000/v1"   # else $OPENAI_BASE_URL, else the SDK's default
    api_key_env = "OPENAI_API_KEY"          # the variable that holds the key
    timeout_s = 60
    max_output_tokens = 1024
    response_format = "json_schema"         # or "json_object" for servers without structured outputs

    [anthropic]
    base_url = "https://api.anthropic.com"  # else $ANTHROPIC_BASE_URL, else the SDK's default

    [prices."openai:gpt-4o-mini"]           # US dollars per million tokens
    input_usd_per_mtok = 0.15
    output_usd_per_mtok = 0.60

    [retry]
    transient_attempts = 4                  # tries of a call that meets server errors or timeouts
    backoff_s = 1.0                         # first wait between those tries, doubled each time
    rate_limit_retries = 20                 # 429 rate limits waited out per call
    max_rate_limit_wait_s = 120             # a longer retry-after halts the run until the reset
    malformed_attempts = 3                  # tries of a call whose answer breaks the schema

Keys never live in the file: each provider reads its key from the environment variable named
by ``api_key_env``, in the coordinator's process (workers get a clean environment).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .. import errors

if TYPE_CHECKING:
    from ..workspace import Workspace

CONFIG_FILE = "models.toml"
CONFIG_ENV = "FLEETLEDGER_MODEL_CONFIG"


@dataclass(frozen=True, kw_only=True)
class Price:
    """What a model costs, in US dollars per million tokens."""

    input_usd_per_mtok: float
    output_usd_per_mtok: float

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float:
        """Returns the price of a call that used these tokens."""
        return (input_tokens * self.input_usd_per_mtok + output_tokens * self.output_usd_per_mtok) / 1_000_000


@dataclass(frozen=True, kw_only=True)
class ProviderSettings:
    """How to reach one provider.

    Attributes:
        base_url: Endpoint, or None for ``$<PROVIDER>_BASE_URL`` and then the SDK's default.
        api_key_env: Environment variable holding the key.
        timeout_s: Seconds one HTTP request may take.
        max_output_tokens: Most tokens one answer may have.
        response_format: OpenAI only: ``"json_schema"`` (structured outputs) or
            ``"json_object"`` (JSON mode, for compatible servers without structured outputs).
    """

    base_url: str | None = None
    api_key_env: str = ""
    timeout_s: float = 60.0
    max_output_tokens: int = 1024
    response_format: str = "json_schema"

    def __post_init__(self) -> None:
        if self.response_format not in ("json_schema", "json_object"):
            raise errors.UsageError(f"response_format must be json_schema or json_object, not {self.response_format!r}")


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How the broker retries one call (see the module docstring for the keys)."""

    transient_attempts: int = 4
    backoff_s: float = 1.0
    rate_limit_retries: int = 20
    max_rate_limit_wait_s: float = 120.0
    malformed_attempts: int = 3


_DEFAULT_KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


@dataclass(frozen=True, kw_only=True)
class ModelConfig:
    """Providers, prices and retries, as configured for this host.

    Attributes:
        providers: Settings per provider name (``"openai"``, ``"anthropic"``).
        prices: Price per model spec (``"openai:gpt-4o-mini"``).
        retry: How calls are retried.
        source: The file read, or ``"defaults"``.
    """

    providers: Mapping[str, ProviderSettings] = field(default_factory=lambda: MappingProxyType({}))
    prices: Mapping[str, Price] = field(default_factory=lambda: MappingProxyType({}))
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    source: str = "defaults"

    def settings(self, provider: str) -> ProviderSettings:
        """Returns the settings of ``provider`` (defaults when the file does not name it)."""
        found = self.providers.get(provider)
        if found is not None:
            return found
        return ProviderSettings(api_key_env=_DEFAULT_KEYS.get(provider, f"{provider.upper()}_API_KEY"))

    @classmethod
    def for_workspace(cls, workspace: "Workspace", scanned: Sequence[Path] = ()) -> "ModelConfig":
        """Reads ``$FLEETLEDGER_MODEL_CONFIG``, else ``<workspace>/models.toml``, else defaults.

        Args:
            workspace: The run's workspace.
            scanned: The folders the job reads: a ``models.toml`` in a workspace inside them
                may come from the repository, and is refused (``Workspace.config_file``).

        Raises:
            UsageError: the file is not valid (the message names the key), or it is in a
                workspace inside a scanned folder.
        """
        named = os.environ.get(CONFIG_ENV)
        if named:
            return cls.load(Path(named))
        path = workspace.config_file(CONFIG_FILE, scanned, instead=f"{CONFIG_ENV}=FILE")
        return cls.load(path) if path is not None else cls()

    @classmethod
    def load(cls, path: Path) -> "ModelConfig":
        """Reads a model configuration file.

        Raises:
            UsageError: the file cannot be read, is not TOML, or has an unknown key or a value
                of the wrong type; the message names it.
        """
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise errors.UsageError(f"cannot read model configuration {path}: {exc}") from exc
        providers: dict[str, ProviderSettings] = {}
        prices: dict[str, Price] = {}
        retry = RetryPolicy()
        for name, table in data.items():
            where = f"model configuration {path}, [{name}]"
            if not isinstance(table, dict):
                raise errors.UsageError(f"{where} must be a table")
            if name == "prices":
                for spec, price in table.items():
                    prices[spec] = _build(Price, price, f'{where}."{spec}"')
            elif name == "retry":
                retry = _build(RetryPolicy, table, where)
            elif name in _DEFAULT_KEYS:
                providers[name] = _build(ProviderSettings, {"api_key_env": _DEFAULT_KEYS[name], **table}, where)
            else:
                raise errors.UsageError(f"{where}: unknown table; known: {sorted([*_DEFAULT_KEYS, 'prices', 'retry'])}")
        return cls(providers=MappingProxyType(providers), prices=MappingProxyType(prices), retry=retry, source=str(path))


def _build(cls: type, table: Any, where: str) -> Any:
    if not isinstance(table, dict):
        raise errors.UsageError(f"{where} must be a table")
    kinds = {f.name: f.type for f in fields(cls)}
    unknown = sorted(set(table) - set(kinds))
    if unknown:
        raise errors.UsageError(f"{where}: unknown keys {unknown}; known keys: {sorted(kinds)}")
    for key, value in table.items():
        number = "float" in kinds[key] or "int" in kinds[key]
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0) if number else isinstance(value, str)
        if not ok:
            raise errors.UsageError(f"{where}: {key} must be {'a non-negative number' if number else 'a string'}")
    return cls(**table)
