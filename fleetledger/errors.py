"""fleetledger's errors: one base class, one class per condition.

Each class's docstring is its default message (the Procrastinate habit), so the documentation
and the message cannot drift; the message says what to do. Extra facts are typed attributes,
and every error survives pickling (it crosses process boundaries in tests and workers).
"""

from __future__ import annotations

from typing import Any


class FleetledgerError(Exception):
    """fleetledger failed."""

    exit_code = 1

    def __init__(self, message: str | None = None, **facts: Any) -> None:
        self.facts = facts
        for name, value in facts.items():
            setattr(self, name, value)
        text = message or (self.__class__.__doc__ or "").strip().splitlines()[0]
        super().__init__(text)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.__class__, str(self), self.facts))


def _rebuild(cls: type[FleetledgerError], message: str, facts: dict[str, Any]) -> FleetledgerError:
    return cls(message, **facts)


class UsageError(FleetledgerError):
    """The command was given input it cannot use; see --help."""

    exit_code = 2


class LedgerError(FleetledgerError):
    """The ledger cannot be used; run `fleetledger verify` for details."""


class AppendOnlyViolation(LedgerError):
    """The ledger is append-only: records are never updated or deleted."""


class ConflictingResultError(LedgerError):
    """A different result is already recorded for this idempotency key; the step is not deterministic."""


class StaleEpochError(LedgerError):
    """The record's lease epoch is no longer current (fenced): another worker holds the task now; stop working on it."""


class LeaseHeldError(LedgerError):
    """The task is still leased to a live holder; wait for its lease to expire."""


class StaleCheckpointError(LedgerError):
    """A checkpoint was folded up to another record than the run's last one (another writer
    appended meanwhile); it is refused, and its writer folds the new records and tries later."""


class ChainBrokenError(LedgerError):
    """The ledger's hash chain is broken: a record was changed or removed outside fleetledger."""


class NondeterminismError(LedgerError):
    """A recorded step does not match the step the code now runs at that position; the code or its inputs changed since the run was recorded."""


class LedgerTamperedError(FleetledgerError):
    """The ledger contradicts the run's signed head (``heads``): its tail was cut or its chain
    rewritten. Nothing is appended to it; `fleetledger verify` says what differs."""


class LedgerDamagedError(FleetledgerError):
    """The ledger's file is damaged (a page or a WAL frame that does not read back); nothing is
    appended to it. Run `fleetledger salvage` to keep every readable record in a new ledger and
    see exactly what was lost."""

    exit_code = 65  # EX_DATAERR (sysexits.h): the input data was incorrect


class OutOfSpaceError(FleetledgerError):
    """The disk is full: the run is stopped (HALTED where the ledger could still record it). Free
    some space and run `fleetledger resume`."""

    exit_code = 75


class RunLockedError(FleetledgerError):
    """Another fleetledger process is running this workspace; wait for it, or stop it with `fleetledger halt`."""

    exit_code = 3


class NoRunError(FleetledgerError):
    """There is no run in this workspace; start one with `fleetledger scan PATH`."""


class StateFileError(FleetledgerError):
    """The run-state file is corrupt; it was set aside and will be rebuilt from the ledger."""


class PolicyError(FleetledgerError):
    """The policy file is invalid; fix it (see README, "Policy") and run the command again."""

    exit_code = 2


class ModelError(FleetledgerError):
    """The model call failed."""


class QuotaExhausted(ModelError):
    """The model quota is used up; the run is HALTED. Raise the quota (or wait for its reset) and run the same command again."""

    exit_code = 75


class RunHalted(FleetledgerError):
    """The run is HALTED; `fleetledger status` shows why, and `fleetledger resume` continues it."""

    exit_code = 75


class Cancelled(BaseException):
    """The run was asked to stop (SIGINT, SIGTERM or `fleetledger halt`).

    Derives from BaseException so that worker or job code cannot swallow it with
    ``except Exception``.
    """
