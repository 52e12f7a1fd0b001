"""``resume --upgrade``: continue a run under changed code without mixing versions.

A run's sessions record the identity of the code that decides its results (``identity``), and
a job says which parts of that identity decide each sprint (``Job.sprint_code``). When a
person asks to continue a run recorded under other code, the sprints are taken in plan order:
those before the first sprint that a changed part decides keep their results; that sprint and
every later one that has begun are *superseded*: their tasks leave the plan (their records stay
in the ledger, as history) and the sprint is planned again under this code, since each later
sprint reads the results of the earlier ones. The decision is one ``decision`` record, written
in the same transaction as the session's ``run.resumed`` and the ``sprint.reopened`` records
(``supersede: true``), so a crash leaves either the old run or the whole decision.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .identity import differences
from .replay import RunView


@dataclass(frozen=True, kw_only=True)
class Upgrade:
    """What an upgrade keeps and redoes.

    Attributes:
        recorded: The identity of the run's last session.
        current: The identity of this code.
        changed: The parts that differ, sorted.
        kept: Sprints that have begun and keep their results, in plan order.
        redone: Sprints that have begun and are planned again, in plan order.
    """

    recorded: dict[str, str]
    current: dict[str, str]
    changed: tuple[str, ...]
    kept: tuple[str, ...]
    redone: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """Returns the ``decision`` record's ``upgrade`` payload."""
        return {"from": self.recorded, "to": self.current, "changed": list(self.changed), "kept": list(self.kept),
                "redone": list(self.redone)}

    def summary(self) -> str:
        """Returns one line for the person and the record's ``why``."""
        kept = ", ".join(self.kept) or "nothing"
        redone = ", ".join(self.redone) or "nothing"
        return (f"resume --upgrade: {'; '.join(differences(self.recorded, self.current)) or 'no part changed'}; "
                f"results kept: {kept}; planned again under this code: {redone}")


def plan(view: RunView, recorded: Mapping[str, str], current: Mapping[str, str], sprints: Iterable[str],
         deciding: Mapping[str, Iterable[str]]) -> Upgrade:
    """Decides what an upgrade of ``view`` keeps (pure).

    Args:
        view: The run.
        recorded: The identity of its last session; ``current``: this code's.
        sprints: The job's sprints, in plan order.
        deciding: Per sprint, the identity parts that decide its results; a sprint missing
            from it is decided by every part.

    Returns:
        The ``Upgrade``: the first begun sprint whose deciding parts changed, and every later
        begun sprint, are redone; the begun sprints before it are kept.
    """
    changed = {name for name in set(recorded) | set(current) if recorded.get(name) != current.get(name)}
    kept: list[str] = []
    redone: list[str] = []
    for sprint in sprints:
        begun = sprint in view.sprints and (view.sprints[sprint].status != "pending" or view.sprints[sprint].tasks)
        parts = set(deciding.get(sprint, changed))
        if redone or parts & changed:
            if begun:
                redone.append(sprint)
            elif not redone:
                break  # the first affected sprint has not begun: nothing recorded is of the old code
        elif begun:
            kept.append(sprint)
    return Upgrade(recorded=dict(recorded), current=dict(current), changed=tuple(sorted(changed)), kept=tuple(kept),
                   redone=tuple(redone))
