"""The deterministic work budget that bounds every analysis (counted in statements and
expressions evaluated, never timed), and the exception that stops work when it is used up.
"""

from __future__ import annotations

from dataclasses import dataclass


class BudgetExceeded(Exception):
    """The analysis of a file used up its work budget; what was not analysed is reported."""


@dataclass
class Budget:
    """A deterministic work budget: units are statements and expressions evaluated. Counted,
    never timed, so a file is cut at the same point on any machine (replay depends on it).

    Attributes:
        limit: Units allowed.
        used: Units spent so far; it stops at ``limit`` (nothing is spent past it).
        exhausted: True once a spend was refused.
    """

    limit: int
    used: int = 0
    exhausted: bool = False

    def spend(self, units: int = 1) -> None:
        """Spends ``units``, or none when that would pass the limit.

        Raises:
            BudgetExceeded: the budget is used up (the work must stop; what it did not finish
                is reported by the caller).
        """
        if self.used + units > self.limit:
            self.used = self.limit
            self.exhausted = True
            raise BudgetExceeded(f"work budget of {self.limit} units used up")
        self.used += units
