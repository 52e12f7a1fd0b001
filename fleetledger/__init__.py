"""fleetledger: a crash-only runtime for fleets of autonomous agent workers.

The public face is small; the machinery lives in the submodules:

* ``Coordinator``, ``RunOptions``, ``RunResult``: run a job from whatever its ledger holds.
* ``Job``, ``TaskSpec``, ``JobOutcome``: what a job provides; ``TaskContext`` is what its
  worker-side code gets (``ctx.step``), ``HostContext`` what its host-side code gets
  (``host.effect``).
* ``effect``: perform an effect exactly once as seen from its target (``effects.perform``).
* ``Workspace``, ``Policy``, ``open_storage``, ``fold``, ``RunView``: the workspace, the policy,
  the ledger and its replay.
* ``errors``: one exception class per condition, all under ``FleetledgerError``.

The public names are loaded on first use (PEP 562), so that a worker process, which imports
``fleetledger.worker`` and its job's worker-side module, does not pay for the coordinator.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .version import __version__

# public name -> (module, attribute in it; None for the module itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    "Coordinator": ("fleetledger.coordinator", "Coordinator"),
    "HostContext": ("fleetledger.coordinator", "HostContext"),
    "RunOptions": ("fleetledger.coordinator", "RunOptions"),
    "RunResult": ("fleetledger.coordinator", "RunResult"),
    "effect": ("fleetledger.effects", "perform"),
    "errors": ("fleetledger.errors", None),
    "Policy": ("fleetledger.policy", "Policy"),
    "Job": ("fleetledger.jobs.base", "Job"),
    "JobOutcome": ("fleetledger.jobs.base", "JobOutcome"),
    "TaskSpec": ("fleetledger.jobs.base", "TaskSpec"),
    "open_storage": ("fleetledger.ledger", "open_storage"),
    "RunView": ("fleetledger.replay", "RunView"),
    "fold": ("fleetledger.replay", "fold"),
    "TaskContext": ("fleetledger.steps", "TaskContext"),
    "Workspace": ("fleetledger.workspace", "Workspace"),
}

__all__ = [
    "Coordinator", "HostContext", "Job", "JobOutcome", "Policy", "RunOptions", "RunResult", "RunView",
    "TaskContext", "TaskSpec", "Workspace", "__version__", "effect", "errors", "fold", "open_storage",
]

if TYPE_CHECKING:
    from . import errors
    from .coordinator import Coordinator, HostContext, RunOptions, RunResult
    from .effects import perform as effect
    from .jobs.base import Job, JobOutcome, TaskSpec
    from .ledger import open_storage
    from .policy import Policy
    from .replay import RunView, fold
    from .steps import TaskContext
    from .workspace import Workspace


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
