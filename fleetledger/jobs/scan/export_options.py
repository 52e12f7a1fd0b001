"""How a scan's reports are written for code scanning: options that change the export only.

None of these changes what the workers find or judge, so none is part of the run's identity:
they are recorded in the job description (``describe()["options"]["export"]``), restored when a
run is rebuilt from its ledger, and the same run can be exported again with other values.

The repository root is found without running anything from the scanned repository: git is not
called at all (a hostile repository's config could name programs git runs: ``core.fsmonitor``,
hooks, filters); the folders from the target up are looked at for a ``.git`` entry the way git's
discovery does (``git rev-parse --show-toplevel``: the nearest folder holding a ``.git`` folder
with a ``HEAD``, or a ``.git`` file as linked worktrees and submodules have), by ``lstat`` only:
nothing in it is read and a ``.git`` that is a symbolic link is not followed.
"""

from __future__ import annotations

import os
import stat
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ...errors import UsageError

TOOL_CATEGORY = "fleetledger"


@dataclass(frozen=True, kw_only=True)
class ExportOptions:
    """The export's code-scanning options (immutable; JSON round trip by ``to_json``/``from_json``).

    Attributes:
        repo_root: Absolute path of the repository root that SARIF URIs are relative to
            (``originalUriBaseIds.SRCROOT``); None: the scanned folder itself.
        category: ``runs[0].automationDetails.id`` (SARIF §3.17, §3.14.28), GitHub's
            ``category/`` form (a trailing "/": no run id); None: ``default_category``.
        honour_nosec: Turn recorded ``# nosec`` / ``# noqa: B...`` comments into SARIF
            ``suppressions`` (§3.27.23, kind ``inSource``) and mark those findings suppressed.
            Off by default: the scan reviews code it does not own, and a comment written by the
            code's author is a claim, not a verdict; a reviewer opts in.
        baseline: Path of a previous SARIF log (e.g. the main branch's) to compare with
            (``baseline``); None: no ``baselineState``.
        absent_results: With a baseline, include its results that are gone as results with
            ``baselineState: "absent"`` (§3.27.24). GitHub code scanning turns every result
            into an alert whatever its ``baselineState`` or ``kind``, so a file for upload is
            written with this off (``--no-absent-results``).
        only_new: The command fails (``EXIT_NEW_FINDINGS``) only when a result is ``new``
            against the baseline; recorded so ``resume`` keeps the same exit rule.

    Raises:
        UsageError: the category is empty or has control characters or whitespace, or the
            repository root is not absolute.
    """

    repo_root: str | None = None
    category: str | None = None
    honour_nosec: bool = False
    baseline: str | None = None
    absent_results: bool = True
    only_new: bool = False

    def __post_init__(self) -> None:
        if self.category is not None:
            if not self.category.strip("/") or any(ch.isspace() or not ch.isprintable() for ch in self.category):
                raise UsageError(f"--category {self.category!r}: give a non-empty name without spaces, e.g. "
                                 "fleetledger/shop/")
            if not self.category.endswith("/"):  # GitHub's upload-sarif adds the "/" the same way
                object.__setattr__(self, "category", self.category + "/")
        if self.repo_root is not None and not os.path.isabs(self.repo_root):
            raise UsageError(f"--repo-root {self.repo_root!r} must be an absolute path")

    def to_json(self) -> dict[str, Any]:
        """Returns the options that differ from the defaults (read-only): ``{}`` for none."""
        default = ExportOptions()
        return {k: v for k, v in asdict(self).items() if v != getattr(default, k)}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> "ExportOptions":
        """Builds options from ``to_json()`` output; unknown keys are ignored."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (data or {}).items() if k in names})

    def prefix(self, target: str) -> str:
        """Returns the scanned folder relative to the repository root ("" when it is the root).

        Args:
            target: Absolute path of the scanned folder.

        Raises:
            UsageError: the target is not inside the repository root.
        """
        if self.repo_root is None:
            return ""
        try:
            rel = Path(target).relative_to(self.repo_root)
        except ValueError:
            raise UsageError(f"the scanned folder {target} is not inside the repository root {self.repo_root}; "
                             "give --repo-root a folder that holds it") from None
        return "" if rel == Path(".") else rel.as_posix()

    def automation_id(self, target: str) -> str:
        """Returns ``automationDetails.id``: ``category`` or ``default_category``."""
        return self.category or default_category(self.prefix(target))


def default_category(prefix: str) -> str:
    """Returns the default category of a scan of ``prefix`` (a folder relative to the repository
    root; "" for the root): ``fleetledger/`` for the root, ``fleetledger/shop/`` for ``shop``.
    Two scans of one repository (the root and a subfolder, or two subfolders) never share one,
    so their uploads do not replace each other's alerts (GitHub keys an analysis by category).
    """
    return f"{TOOL_CATEGORY}/{prefix}/" if prefix else f"{TOOL_CATEGORY}/"


def find_repository_root(target: Path) -> Path | None:
    """Returns the root of the git repository holding ``target``, or None outside any.

    Git's own discovery rule, by ``lstat`` only (see the module docstring): from ``target`` up,
    the first folder with a ``.git`` folder that has a ``HEAD`` entry, or a ``.git`` regular
    file (a linked worktree or a submodule). Read-only; nothing of the repository is run or
    read. ``GIT_CEILING_DIRECTORIES`` is honoured as git honours it (no folder above a ceiling
    is looked at).

    Args:
        target: The scanned folder (made absolute).
    """
    ceilings = {Path(p).resolve() for p in os.environ.get("GIT_CEILING_DIRECTORIES", "").split(os.pathsep) if p}
    folder = Path(target).resolve()
    while True:
        entry = folder / ".git"
        try:
            mode = os.lstat(entry).st_mode
        except OSError:
            mode = 0
        if stat.S_ISREG(mode):
            return folder
        if stat.S_ISDIR(mode) and os.path.lexists(entry / "HEAD"):
            return folder
        if folder.parent == folder or folder.parent in ceilings:
            return None
        folder = folder.parent


def resolve_repo_root(target: Path, given: str | None) -> str | None:
    """Returns the repository root the export uses: ``given`` (``--repo-root``), else the one
    ``find_repository_root`` finds, else None (URIs relative to the scanned folder).

    Raises:
        UsageError: ``given`` is not a folder, or does not hold ``target``.
    """
    target = Path(target).expanduser().resolve()
    if given is None:
        found = find_repository_root(target)
        return str(found) if found is not None else None
    root = Path(given).expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"--repo-root {given}: not a folder; give the repository's top folder")
    if not target.is_relative_to(root):
        raise UsageError(f"--repo-root {given}: the scanned folder {target} is not inside it")
    return str(root)
