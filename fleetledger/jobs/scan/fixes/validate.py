"""Validation of a proposed patch on a scratch copy: it applies cleanly, the file still parses,
and a re-scan of the patched copy no longer reports the finding and reports nothing new.

The re-scan runs the same detectors (bandit and the taint engine, ``detect_file``) on the file
before and after the patch, in a scratch folder holding the file and the other files the
engine read for it, so that both scans see the same context and only the patch differs.
"""

from __future__ import annotations

import ast
import hashlib
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..shapes import Candidate, FileReport
from .propose import Proposal, decode, encode, site_of
from .text import DiffDoesNotApply, apply_diff, other_files


@dataclass(frozen=True, kw_only=True)
class Validation:
    """What the checks of one patch found.

    Attributes:
        ok: Every check passed; only then is the patch exported as a fix.
        reason: Why it failed (the first failing check), or ``"all checks passed"``.
        applies: The diff applied to the file it was made against.
        parses: The patched file parses.
        cleared: The re-scan of the patched copy no longer reports the finding (None when
            not reached).
        new: What the re-scan reports on the patched copy that it did not before
            (``"RULE in SCOPE"``), the rewrite's known residue left out.
        accepted: The rewrite's known residue the re-scan reported (``Proposal.expected``).
        tests: The repository's tests: ``"passed"``, ``"failed: ..."`` or ``"not run: <why>"``.
        patched_sha256: SHA-256 of the patched file's bytes, or None.
    """

    ok: bool
    reason: str
    applies: bool
    parses: bool = False
    cleared: bool | None = None
    new: tuple[str, ...] = ()
    accepted: tuple[str, ...] = ()
    tests: str = "not run: the checks before it failed"
    patched_sha256: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Returns the validation as a JSON-ready dict (read-only)."""
        return {"ok": self.ok, "reason": self.reason, "applies": self.applies, "parses": self.parses,
                "cleared": self.cleared, "new": list(self.new), "accepted": list(self.accepted), "tests": self.tests,
                "patched_sha256": self.patched_sha256}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Validation":
        """Builds a validation from ``to_json()`` output."""
        return cls(ok=data["ok"], reason=data["reason"], applies=data["applies"], parses=data.get("parses", False),
                   cleared=data.get("cleared"), new=tuple(data.get("new", ())), accepted=tuple(data.get("accepted", ())),
                   tests=data.get("tests", ""), patched_sha256=data.get("patched_sha256"))


def patched_bytes(proposal: Proposal, data: bytes) -> bytes:
    """Returns the file's bytes with the proposal's diff applied.

    Raises:
        DiffDoesNotApply: the diff does not apply (the bytes differ from the patch's base).
        ValueError: the proposal has no diff, or the bytes cannot be decoded.
    """
    if proposal.diff is None:
        raise ValueError("the proposal has no diff")
    text, encoding = decode(data)
    return encode(apply_diff(text, proposal.diff), encoding)


NOT_RUN = "not run: the policy's tools do not include \"pytest\" (list it to run the repository's tests in the sandbox)"


def validate(proposal: Proposal, candidate: Candidate, data: bytes, *, scratch: Path,
             context: Mapping[str, bytes] | None = None, tests: Callable[[bytes], str] | None = None,
             local: Callable[[str], bool] = lambda module: False) -> Validation:
    """Checks a proposed patch on a scratch copy of its file.

    Args:
        proposal: The patch (with a diff).
        candidate: The finding it is for.
        data: The file's bytes the patch was made against.
        scratch: An empty folder to write the copies in (never the repository).
        context: Other files of the repository the engine read for this file (path -> bytes),
            copied beside it so both re-scans follow the same imports.
        tests: Runs the repository's tests on the patched bytes and says how they ended
            (``repo_tests.compare``: ``passed``, ``failed: ...``, ``not comparable: ...``,
            ``not run: ...``), called only when every other check passed; None: not run
            (``NOT_RUN``).
        local: Whether a module name is the repository's own (a file of it): a patch that adds
            an import of one (or a relative import) is refused, since the re-scan has only the
            files the unpatched one read, and a sink moved into that module would look cleared.

    Returns:
        The ``Validation``; ``ok`` only when every check passed.
    """
    from ..detect import detect_file

    if hashlib.sha256(data).hexdigest() != proposal.base_sha256:
        return Validation(ok=False, applies=False, reason="the file is not the one the patch was made against")
    others = other_files(proposal.diff or "", proposal.path)
    if others:  # exported as it is, it would change another file than the one checked here
        return Validation(ok=False, applies=False, reason=f"the patch names another file than {proposal.path}: "
                                                          f"{', '.join(others)[:200]}")
    try:
        after = patched_bytes(proposal, data)
    except (DiffDoesNotApply, ValueError, SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return Validation(ok=False, applies=False, reason=f"the patch does not apply: {exc}")
    sha = hashlib.sha256(after).hexdigest()
    try:
        ast.parse(decode(after)[0])
    except (SyntaxError, ValueError) as exc:
        return Validation(ok=False, applies=True, parses=False, patched_sha256=sha,
                          reason=f"the patched file does not parse: {exc}")
    hidden = _opaque(decode(after)[0]) - _opaque(decode(data)[0])
    added = sorted(m for m in _imports(decode(after)[0]) - _imports(decode(data)[0]) if m.startswith(".") or local(m))
    if added:
        return Validation(ok=False, applies=True, parses=True, patched_sha256=sha,
                          reason=f"the patch imports the repository's own {', '.join(added)[:200]}, which the re-scan "
                                 "of this file does not read, so that it clears the finding cannot be shown")
    sink = (site_of(candidate).api or "").rsplit(".", 1)[-1]
    if sink.isidentifier() and _uncalled(decode(after)[0], sink) > _uncalled(decode(data)[0], sink):
        hidden["the sink's function passed as a value"] += 1  # map(eval, [x]), functools.partial(eval)
    if hidden:  # e.g. eval(x) -> getattr(__builtins__, "ev" + "al")(x): the sink is still there, unseen
        return Validation(ok=False, applies=True, parses=True, patched_sha256=sha,
                          reason=f"the patch adds code whose calls a re-scan cannot follow ({', '.join(sorted(hidden))}), "
                                 "so that it clears the finding cannot be shown")
    reports = []
    for side, content in (("before", data), ("after", after)):
        root = scratch / side
        for path, other in {**(context or {}), proposal.path: content}.items():
            if not _inside(path):  # never written outside the scratch folder, whatever a record says
                return Validation(ok=False, applies=True, parses=True, patched_sha256=sha,
                                  reason=f"{path!r} is not a path inside the repository")
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(other)
        readable = {path: hashlib.sha256(b).hexdigest() for path, b in (context or {}).items()}
        reports.append(detect_file(root, proposal.path, readable=readable or None))
    before, patched = reports
    if patched.status != "scanned":
        return Validation(ok=False, applies=True, parses=True, patched_sha256=sha,
                          reason=f"the patched copy could not be re-scanned: {patched.reason}")
    was, now = _counts(before), _counts(patched)
    key = (candidate.rule_id, candidate.scope)
    if not was[key]:  # the file alone (with what it read) does not show it: a clearing cannot be shown either
        return Validation(ok=False, applies=True, parses=True, patched_sha256=sha,
                          reason=f"the re-scan of the unpatched copy does not report {candidate.rule_id} in "
                                 f"{candidate.scope} either, so whether the patch clears it cannot be shown")
    cleared = now[key] < was[key]
    grown = now - was
    accepted = tuple(sorted(f"{rule} in {scope}" for (rule, scope) in grown if rule in proposal.expected))
    new = tuple(sorted(f"{rule} in {scope}" for (rule, scope) in grown if rule not in proposal.expected))
    tests_result = "not run: the checks before them failed"
    if not cleared:
        return Validation(ok=False, applies=True, parses=True, cleared=False, new=new, accepted=accepted,
                          tests=tests_result, patched_sha256=sha,
                          reason=f"the re-scan of the patched copy still reports {candidate.rule_id} in {candidate.scope}")
    if new:
        return Validation(ok=False, applies=True, parses=True, cleared=True, new=new, accepted=accepted,
                          tests=tests_result, patched_sha256=sha,
                          reason=f"the re-scan of the patched copy reports something new: {', '.join(new)}")
    tests_result = tests(after) if tests is not None else NOT_RUN
    if tests_result.startswith("failed"):
        return Validation(ok=False, applies=True, parses=True, cleared=True, accepted=accepted, tests=tests_result,
                          patched_sha256=sha, reason=f"the repository's tests {tests_result}")
    return Validation(ok=True, applies=True, parses=True, cleared=True, accepted=accepted, tests=tests_result,
                      patched_sha256=sha, reason="all checks passed")


def _counts(report: FileReport) -> Counter[tuple[str, str]]:
    """How many candidates of each (rule, scope) a report holds (lines move with a patch;
    scopes do not). A detector's finding folded into an engine candidate is not counted, so a
    fold that comes apart (bandit's B506 alone once the engine's flow is gone) counts as new."""
    counts: Counter[tuple[str, str]] = Counter()
    for c in report.candidates:
        counts[(c.rule_id, c.scope)] += 1
    return counts


OPAQUE_CALLS = frozenset({"getattr", "setattr", "__import__", "eval", "exec", "compile", "globals", "locals", "vars"})
"""Built-in functions (called by name) that name what they call, import or run with a value, so
a static re-scan cannot tell what runs: a patch must not add one (a sink moved behind one would
look cleared)."""
OPAQUE_METHODS = frozenset({"import_module", "methodcaller", "attrgetter", "reload"})
"""The same, called as ``module.function`` (``importlib.import_module``, ``operator.methodcaller``)."""
OPAQUE_NAMES = frozenset({"__builtins__", "builtins", "__dict__", "__getattribute__", "__globals__", "importlib"})
"""Names through which a call hides what it calls (``__builtins__.__dict__["eval"]``)."""


def _opaque(text: str) -> Counter[str]:
    """How many times the text's code calls each of ``OPAQUE_CALLS`` and ``OPAQUE_METHODS`` and uses ``OPAQUE_NAMES``
    (read or imported); a text that does not parse counts nothing."""
    found: Counter[str] = Counter()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return found
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in OPAQUE_CALLS:
                found[f"{func.id}()"] += 1
            elif isinstance(func, ast.Attribute) and func.attr in OPAQUE_METHODS:
                found[f"{func.attr}()"] += 1
        elif isinstance(node, ast.Name) and node.id in OPAQUE_NAMES:
            found[node.id] += 1
        elif isinstance(node, ast.Attribute) and node.attr in OPAQUE_NAMES:
            found[node.attr] += 1
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found.update(m.split(".")[0] for m in modules if m.split(".")[0] in OPAQUE_NAMES)
    return found


def _uncalled(text: str, name: str) -> int:
    """How many times the text names ``name`` (a name, an attribute, an imported name) other
    than as the function of a call: the sink's function handed to code that calls it later."""
    tree = ast.parse(text)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return sum(1 for node in ast.walk(tree) if id(node) not in called and (
        isinstance(node, ast.Name) and node.id == name or isinstance(node, ast.Attribute) and node.attr == name
        or isinstance(node, ast.alias) and node.name.rsplit(".", 1)[-1] == name))


def _inside(path: str) -> bool:
    """True for a relative path that stays below the folder it is joined to (no ``..``)."""
    parts = PurePosixPath(path).parts
    return bool(parts) and not PurePosixPath(path).is_absolute() and ".." not in parts


def _imports(text: str) -> set[str]:
    """The modules a text imports (``from . import x`` as ``.x``, ``from .a import b`` as ``.a``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            prefix = "." * node.level
            if node.module:
                found.add(prefix + node.module)
            else:
                found.update(prefix + alias.name for alias in node.names)
    return found
