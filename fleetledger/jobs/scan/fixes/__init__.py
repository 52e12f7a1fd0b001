"""Patches for confirmed findings: the offline fixer's safe rewrites (``propose``), their
validation on a scratch copy (``validate``), and what the fix sprint records.

The public face is small: ``propose``, ``Proposal``, ``validate``, ``Validation``; the rewrites,
the text edits and the string reading are private to the package.
"""

from .propose import Proposal, propose
from .validate import Validation, validate

__all__ = ["Proposal", "Validation", "propose", "validate"]
