"""Bandit, run through its Python API on a tree detect already parsed, with what this scan
never reads left out.

``run_bandit`` drives ``BanditNodeVisitor`` over the tree ``parser.parse_module`` made of the
same text (bandit's own ``process`` would parse it again) with a check runner that keeps the
node each issue was raised on and every check failure (``RecordingTester``). Per node, bandit's
visitor and runner also log debug lines, look up ``# nosec`` lines and add up scores; none of
it is read here, and on Django it took a third of bandit's time, so ``TreeVisitor`` and
``RecordingTester`` run bandit's own steps without it: the same checks on the same contexts,
the same issues (bandit 1.8 and 1.9; a test compares the issues with bandit's own runner).

``bandit_work`` counts, before bandit runs, what it would cost (``BANDIT_WORK_UNITS``).
"""

from __future__ import annotations

import ast
import io
import logging
import tokenize
import types
import warnings
from pathlib import Path
from typing import Any

from ...analysis.walks import walk
from . import source

_formatwarning = warnings.formatwarning
with warnings.catch_warnings():
    # Importing bandit loads its plugins through stevedore, which warns (DeprecationWarning);
    # bandit's tester also replaces warnings.formatwarning process-wide, put back below.
    warnings.simplefilter("ignore")
    from bandit.core import config as b_config
    from bandit.core import context as b_context
    from bandit.core import extension_loader as b_extensions  # noqa: F401 - detect reads its blacklists
    from bandit.core import manager as b_manager
    from bandit.core import node_visitor as b_node_visitor
    from bandit.core import tester as b_tester
    from bandit.core import utils as b_utils
    from bandit.plugins import trojansource as b_trojansource
warnings.formatwarning = _formatwarning
# Bandit logs a debug line per node and a traceback per failing check; none of it is for the
# worker's log (failing checks become FileReport.internal_errors).
logging.getLogger("bandit").setLevel(logging.CRITICAL + 1)


BANDIT_NODE_UNITS = 1_000
"""What one syntax node bandit visits weighs in ``bandit_work``, in dict-key comparisons: bandit
runs every check registered for the node's type (about 20 us a node here, 13 ns a comparison)."""
BANDIT_WORK_UNITS = 1_500_000_000
"""Bandit's budget, counted on the tree before it runs (``bandit_work``): the syntax nodes it
visits (``BANDIT_NODE_UNITS`` each) plus the key comparisons of its one superlinear check (B105
looks each string of a dict literal up in the dict's keys). About 20 s of bandit on this
project's 2-core test machine: a 2 MiB file of ordinary code (600,000 nodes, 14 s) is within it;
a dict literal of 50,000 string keys (2,500,000,000 comparisons, 10 s of bandit and more with
every key added) is not. A file over it is analysed without bandit and the report says so."""


CWE_CORRECTIONS = {"B307": 95}
"""Bandit checks whose CWE bandit files wrongly, and the CWE of what they report: bandit (1.8,
1.9) lists ``eval()`` (B307) under CWE-78, OS command injection; ``eval`` runs Python code,
CWE-95 (eval injection). A report per CWE must not count it as a shell command."""


def bandit_cwe(issue: Any) -> int | None:
    """The CWE number of a bandit issue (``CWE_CORRECTIONS`` applied), or None for none."""
    return CWE_CORRECTIONS.get(issue.test_id) or int(issue.cwe.id) or None


def bandit_work(tree: ast.Module) -> tuple[int, str]:
    """Estimates, by counting, the work bandit does on ``tree`` (read-only; iterative).

    Args:
        tree: The file's syntax tree.

    Returns:
        ``(units, what weighs most)``: units are ``BANDIT_NODE_UNITS`` for each syntax node bandit
        visits plus, for each string constant that is a key or a value of a dict literal, the
        dict's key count (B105 looks it up in the keys). What weighs most is ``"N syntax
        nodes"`` or ``"a dict literal with N keys"``.
    """
    nodes = 0
    scans = 0
    largest = 0
    for node in walk(tree):
        nodes += 1
        if isinstance(node, ast.Dict):
            strings = sum(isinstance(part, ast.Constant) and isinstance(part.value, str)
                          for part in (*node.keys, *node.values))
            scans += strings * len(node.keys)
            largest = max(largest, len(node.keys))
    heaviest = f"a dict literal with {largest} keys" if scans > nodes * BANDIT_NODE_UNITS else f"{nodes} syntax nodes"
    return nodes * BANDIT_NODE_UNITS + scans, heaviest


def _may_hold_bidi(raw_context: dict[str, Any]) -> bool:
    """Whether B613 (``trojansource``) can report anything on the file: only when its text, as
    the check decodes it, holds one of the check's bidirectional control characters. False is
    certain (the check then returns nothing); a text that does not decode gives True, so that
    the check runs and its failure is recorded as bandit's own run would."""
    data = raw_context["file_data"]
    try:
        data.seek(0)
        encoding, _ = tokenize.detect_encoding(data.readline)
        data.seek(0)
        text = data.read().decode(encoding)
    except Exception:  # noqa: BLE001 - the check itself meets the same error
        return True
    finally:
        data.seek(0)
    return any(char in text for char in _BIDI)


_BIDI = tuple(getattr(b_trojansource, "BIDI_CHARACTERS", ()))
_PRECONDITIONS = {"B613": _may_hold_bidi} if _BIDI else {}
"""Bandit check id -> a test, much cheaper than the check, that is False only where the check
finds nothing; the check is then not run. B613 reads the whole file line by line for each of
ten characters: 2% of detect's time on Django, where no file holds one."""


# What a check run adds to bandit's scores here: nothing (bandit's RANKING has 4 levels). Read
# only, shared by every node's run.
_NO_SCORES = types.MappingProxyType({"SEVERITY": (0,) * 4, "CONFIDENCE": (0,) * 4})
_NO_CONFIG = object()  # a check without bandit's ``_config`` attribute is called with the context alone


class RecordingTester(b_tester.BanditTester):
    """Bandit's per-node check runner, keeping two things bandit's own drops: the node each
    issue was raised on (a check may move the issue's line to an argument but leaves the
    column at the node's), and check failures (bandit only logs them)."""

    def __init__(self, testset: Any, metrics: Any) -> None:
        super().__init__(testset, False, {}, metrics)
        self.found: list[tuple[Any, int]] = []  # (bandit Issue, line of the node it was raised on)
        self._failures: dict[str, tuple[str, int]] = {}  # check name -> (first failure, count)
        self._checks: dict[str, tuple[tuple[Any, Any, Any], ...]] = {}  # node type -> (check, precondition, config)

    def has_checks(self, checktype: str) -> bool:
        """Whether any check runs on nodes of this type (``run_tests`` would run one)."""
        return bool(self._checks_of(checktype))

    def _checks_of(self, checktype: str) -> tuple[tuple[Any, Any, Any], ...]:
        checks = self._checks.get(checktype)
        if checks is None:  # once per node type: most have no check
            checks = self._checks[checktype] = tuple(
                (test, _PRECONDITIONS.get(getattr(test, "_test_id", "")), getattr(test, "_config", _NO_CONFIG))
                for test in self.testset.get_tests(checktype))
        return checks

    def run_tests(self, raw_context: dict[str, Any], checktype: str) -> Any:
        """``BanditTester.run_tests`` (bandit 1.8 and 1.9) without what this runner never uses:
        bandit's ``# nosec`` look-ups (its nosec lines are always empty here; fleetledger
        reads the comments itself, ``nosec.py``), its debug logging and its scores (the
        metrics are not read). The checks run, and their issues are completed, as bandit does:
        a third of a scan's bandit time went to that bookkeeping, per node and check."""
        checks = self._checks_of(checktype)
        if not checks:
            return _NO_SCORES
        # Bandit gives each check its own copy of the node's context, in case a check changes
        # it; none of bandit's does, so every check reads one read-only view (a check that
        # tried to write would raise, and be reported as a failure of that check).
        temp_context = types.MappingProxyType(raw_context)
        context = b_context.Context(temp_context)
        for test, precondition, config in checks:
            if precondition is not None and not precondition(raw_context):
                continue  # the check cannot report anything here
            try:
                result = test(context) if config is _NO_CONFIG else test(context, config)
            except Exception as error:  # noqa: BLE001 - recorded, as bandit's own runner does
                self.report_error(test.__name__, context, error)
                continue
            if result is None:
                continue
            filename = temp_context["filename"]
            result.fname = filename.decode("utf-8") if isinstance(filename, bytes) else filename
            result.fdata = temp_context["file_data"]
            if result.lineno is None:
                result.lineno = temp_context["lineno"]
            if result.linerange == []:  # computed here, not for every node (``TreeVisitor.pre_visit``)
                result.linerange = (temp_context["linerange"] if "linerange" in temp_context
                                    else b_utils.linerange(temp_context["node"]))
            if result.col_offset == -1:
                result.col_offset = temp_context["col_offset"]
            result.end_col_offset = temp_context.get("end_col_offset", 0)
            result.test = test.__name__
            if result.test_id == "":
                result.test_id = test._test_id
            self.results.append(result)
            self.found.append((result, raw_context.get("lineno", 0)))
        return _NO_SCORES

    def report_error(self, test: str, context: Any, error: Exception) -> None:  # type: ignore[override]
        if isinstance(error, RecursionError):
            raise error  # The file nests too deep for bandit; skip it rather than half-check it.
        first, count = self._failures.get(test, (None, 0))
        if first is None:
            line = getattr(context.node, "lineno", None)
            first = f"raised {type(error).__name__}: {error}" + (f" at line {line}" if line else "")
        self._failures[test] = (first, count + 1)

    def error_lines(self) -> tuple[str, ...]:
        ids = {check.__name__: check._test_id for checks in self.testset.tests.values() for check in checks}
        return tuple(
            f"{ids.get(name, '?')} {name} {first}" + (f" ({count} times)" if count > 1 else "")
            for name, (first, count) in sorted(self._failures.items())
        )


class TreeVisitor(b_node_visitor.BanditNodeVisitor):
    """Bandit's visitor, given the tree detect already parsed from the same text (its
    ``process`` would parse the text a second time; this is ``process`` without that), and
    without its per-node debug logging and score keeping (``pre_visit``, ``post_visit`` and
    ``update_scores`` as in bandit 1.8 and 1.9, less those). The context's ``linerange``, which
    no check reads (only the runner, for an issue without one), is computed by
    ``RecordingTester.run_tests`` for the issues found rather than for every node: a twentieth
    of bandit's time on Django."""

    def process_tree(self, tree: ast.Module) -> Any:
        self._visitors: dict[str, Any] = {}  # node type -> bandit's visit_ method for it, or None
        self.generic_visit(tree)
        self.context = {"file_data": self.fdata, "filename": self.fname, "lineno": 0, "linerange": [0, 1],
                        "col_offset": 0}
        self.tester.run_tests(self.context, "File")
        return self.scores

    def pre_visit(self, node: ast.AST) -> bool:
        context: dict[str, Any] = {"imports": self.imports, "import_aliases": self.import_aliases}
        if hasattr(node, "lineno"):
            context["lineno"] = node.lineno
        if hasattr(node, "col_offset"):
            context["col_offset"] = node.col_offset
        if hasattr(node, "end_col_offset"):
            context["end_col_offset"] = node.end_col_offset
        context["node"] = node
        context["filename"] = self.fname
        context["file_data"] = self.fdata
        self.context = context
        self.depth += 1
        return True

    def post_visit(self, node: ast.AST) -> None:
        self.depth -= 1
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):  # as bandit: leave the definition's namespace
            self.namespace = b_utils.namespace_path_split(self.namespace)[0]

    def update_scores(self, scores: Any) -> None:
        """Bandit adds each check run's scores up here; nothing reads them in this scan."""

    def generic_visit(self, node: ast.AST) -> None:
        """Bandit's ``generic_visit`` (1.8 and 1.9), without the work for a node nothing reads:
        a node of a type that has no check and no ``visit_`` method of bandit's (most of a
        tree: names, loads, operators, constants) gets no context, and no check runner is
        called for it. Every node still gets the links checks follow (``_bandit_parent``,
        ``_bandit_sibling``, set on a node's children before they are visited) and is walked
        at the same recursion depth as bandit's (one frame per level: a file too deep for
        bandit stays too deep here). Bandit's issues on Django 5.1.4 are the same, in a quarter
        less time (with ``RecordingTester``'s per-type check lists and shared context)."""
        children: list[ast.AST] = []
        for _, value in ast.iter_fields(node):
            if isinstance(value, list):
                last = len(value) - 1
                for index, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        item._bandit_sibling = value[index + 1] if index < last else None  # type: ignore[attr-defined]
                        item._bandit_parent = node  # type: ignore[attr-defined]
                        children.append(item)
            elif isinstance(value, ast.AST):
                value._bandit_sibling = None  # type: ignore[attr-defined]
                value._bandit_parent = node  # type: ignore[attr-defined]
                children.append(value)
        for child in children:
            name = child.__class__.__name__
            visitor = self._visitors.get(name, self)
            if visitor is self:
                visitor = self._visitors[name] = getattr(self, "visit_" + name, None)
            if visitor is None and not self.tester.has_checks(name):
                self.generic_visit(child)
                continue
            self.pre_visit(child)
            if visitor is not None:
                visitor(child)
            else:
                self.tester.run_tests(self.context, name)
            self.generic_visit(child)
            self.post_visit(child)


def run_bandit(path: Path, data: bytes, decoded: source.DecodedSource, tree: ast.Module) -> RecordingTester:
    """Runs every bandit check on the decoded text, whose tree (``parser.parse_module`` of the
    same text) is ``tree``.

    Raises:
        RecursionError: the syntax tree nests deeper than bandit's recursive visitor can go.
    """
    manager = b_manager.BanditManager(b_config.BanditConfig(), "file")
    fname = str(path)
    manager.metrics.begin(fname)
    # Whole-file checks (B613) re-read and re-decode file_data themselves: give them bytes that
    # decode to the text validated here (the file's own, unless bad bytes were replaced).
    if decoded.warnings:
        data = decoded.text.encode(decoded.encoding, "replace")
    file_data = io.BytesIO(data)
    visitor = TreeVisitor(fname, file_data, manager.b_ma, manager.b_ts, False, {}, manager.metrics)
    visitor.tester = tester = RecordingTester(manager.b_ts, manager.metrics)
    # A tree read with its type comments (``parser``) lists its ``# type: ignore`` comments as
    # ``TypeIgnore`` nodes, which have no ``end_lineno``: bandit's visitor fails on them. Bandit
    # reads the same statements without that list (its own ``ast.parse`` never makes it).
    visitor.process_tree(ast.Module(body=tree.body, type_ignores=[]) if tree.type_ignores else tree)
    return tester
