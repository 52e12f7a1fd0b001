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
"""

__version__ = "0.1.0"

from . import errors
from .coordinator import Coordinator, HostContext, RunOptions, RunResult
from .effects import perform as effect
from .policy import Policy
from .jobs.base import Job, JobOutcome, TaskSpec
from .ledger import open_storage
from .replay import RunView, fold
from .steps import TaskContext
from .workspace import Workspace

__all__ = [
    "Coordinator", "HostContext", "Job", "JobOutcome", "Policy", "RunOptions", "RunResult", "RunView",
    "TaskContext", "TaskSpec", "Workspace", "__version__", "effect", "errors", "fold", "open_storage",
]
