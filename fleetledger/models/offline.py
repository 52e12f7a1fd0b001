"""The offline analyst: a deterministic model that judges candidates by program analysis.

It needs no network and no credentials, and gives the same answer to the same request. It
reads the facts the detect step recorded with each candidate (``analysis.verdicts``): the taint
engine's trace (source -> steps -> sink, sanitisers seen), an API misuse, or, for another
detector's candidate at a sink the engine evaluated, the evidence of what reached it. It parses
the file (any syntax Python 3.14 accepts: ``analysis.parser``) to place the candidate: test code
and code that never runs are not deployed weaknesses.

Passes:
    * ``investigate``: the verdict the facts show.
    * ``revalidate``: the sceptical second look: it re-derives the verdict and re-checks test
      and dead code. It removes a finding only for a reason it can show (constants only, a
      sanitiser or check on the path, test code, dead code); an origin the analysis does not
      see keeps the finding as ``uncertain``, never dismissed.

Rules the engine does not model at the flagged place are judged by small rule checks
(``verdicts``: hard-coded credentials by the string's own content, TLS verification,
swallowed verification errors, imports) or, failing those, carried over at the detector's own
rating (the lower of its severity and confidence: HIGH 5, kept; MEDIUM 4 and LOW 3, dropped).
"""

from __future__ import annotations

import ast
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Mapping

from ..analysis import context, verdicts
from ..analysis.tree import ParseError, SourceTree
from ..analysis.verdicts import Judgement
from ..jobs.scan.shapes import Candidate, ModelAnswer, ModelRequest

ANALYST_VERSION = "7"
_CACHED_TREES = 8
_RATING = {"HIGH": 5, "MEDIUM": 4, "LOW": 3}

RULE_CHECKS: Mapping[str, Callable[[SourceTree, ast.AST, int | None], Judgement]] = {
    "B105": verdicts.credential, "B106": verdicts.credential, "B107": verdicts.credential,
    **{f"B4{n:02d}": verdicts.imports for n in range(1, 16)},
    "B110": verdicts.swallowed, "B112": verdicts.swallowed,
    "B501": verdicts.tls, "B323": verdicts.tls, "FL002": verdicts.tls, "B613": verdicts.bidi,
}
"""Detector rule id -> the check that judges it when the engine recorded no facts for it."""


class OfflineAnalyst:
    """Judges candidates by the facts recorded with them and their place in the code.

    Keeps the parsed trees of the last few files it saw (candidates arrive file by file);
    answers do not depend on the cache.
    """

    def __init__(self) -> None:
        self._trees: OrderedDict[str, SourceTree] = OrderedDict()

    def _parse(self, source: str) -> SourceTree:
        key = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
        tree = self._trees.get(key)
        if tree is None:
            tree = SourceTree.parse(source)
            self._trees[key] = tree
            while len(self._trees) > _CACHED_TREES:
                self._trees.popitem(last=False)
        else:
            self._trees.move_to_end(key)
        return tree

    def analyze(self, request: ModelRequest) -> ModelAnswer:
        """Answers one investigate or revalidate request.

        Args:
            request: The candidate (with its recorded facts), the file's source, the brief
                (unused) and the pass; on ``revalidate``, ``prior`` is the first pass's answer.

        Returns:
            The answer. Never raises for a bad source: a file that does not parse gives
            ``uncertain`` at confidence 5 (kept: the analyst could not clear it).
        """
        candidate = request.candidate
        revalidating = request.pass_name == "revalidate"
        opening = ()
        if revalidating:
            prior = request.prior or {}
            judged = f"the first pass's {prior['verdict']} ({prior.get('confidence', '?')}/10)" if "verdict" in prior else "a candidate"
            opening = (f"Revalidation of {judged}: the facts were re-derived and test and dead code re-checked.",)
        if context.is_test_path(candidate.path):
            # A test file is not deployed, whatever the candidate: no need to parse it.
            judgement = judge_without_tree(candidate)
            return _answer(Judgement(verdict="not_vulnerable", confidence=verdicts.LIKELY, cwe=judgement.cwe,
                                     facts=(*opening, *judgement.facts, f"But it is test code (the file {candidate.path} is a "
                                            "test file), which is not deployed."),
                                     signals={**judgement.signals, "in_test": True, "dead_code": False}), request)
        try:
            tree = self._parse(request.source)
        except ParseError as exc:
            return _answer(Judgement(verdict="uncertain", confidence=verdicts.KEPT, cwe=candidate.cwe,
                                     facts=(*opening, f"The file could not be analysed ({exc}), so the finding can neither be "
                                                      "confirmed nor cleared."), signals={"analysed": False}), request)
        node = _node_at(tree, candidate)
        judgement = judge(candidate, tree, node)
        test = context.test_context(tree, node, candidate.path) if node is not None else (
            f"the file {candidate.path} is a test file" if context.is_test_path(candidate.path) else None)
        test = test or _source_in_tests(candidate)
        dead = context.dead_code(tree, node) if node is not None else None
        facts = (*opening, *judgement.facts)
        signals = {**judgement.signals, "in_test": test is not None, "dead_code": dead is not None}
        if test is not None:
            return _answer(Judgement(verdict="not_vulnerable", confidence=verdicts.LIKELY, cwe=judgement.cwe,
                                     facts=(*facts, f"But it is test code ({test}), which is not deployed."), signals=signals), request)
        if dead is not None:
            return _answer(Judgement(verdict="not_vulnerable", confidence=verdicts.LIKELY, cwe=judgement.cwe,
                                     facts=(*facts, f"But the flagged code never runs: {dead}."), signals=signals), request)
        return _answer(Judgement(verdict=judgement.verdict, confidence=judgement.confidence, cwe=judgement.cwe,
                                 facts=facts, signals=signals), request)


def judge_without_tree(candidate: Candidate) -> Judgement:
    """The verdict the recorded facts show, for a candidate whose file need not be parsed."""
    if candidate.trace or candidate.evidence:
        return judge(candidate, None, None)  # type: ignore[arg-type]
    return Judgement(verdict="uncertain", confidence=3, cwe=candidate.cwe,
                     facts=(f"The detector says: {candidate.message}",), signals={"analysed": False})


def judge(candidate: Candidate, tree: SourceTree, node: ast.AST | None) -> Judgement:
    """The verdict the candidate's recorded facts (or its rule's check) show."""
    trace = candidate.trace or {}
    if trace.get("traces"):
        return verdicts.from_trace(trace, candidate.cwe)
    if trace.get("check"):
        return verdicts.from_check(trace, candidate.cwe)
    if candidate.evidence:
        return verdicts.from_evidence(candidate.evidence, candidate.cwe, candidate.rule_id)
    check = RULE_CHECKS.get(candidate.rule_id)
    if check is not None and node is not None:
        return check(tree, node, candidate.cwe)
    rating = carried_rating(candidate.detector_severity, candidate.detector_confidence)
    return Judgement(verdict="uncertain", confidence=rating, cwe=candidate.cwe,
                     facts=(f"The offline analyst has no facts about {candidate.rule_id} ({candidate.rule_name}) at this "
                            f"place; the detector's own rating is carried over.", f"The detector says: {candidate.message}"),
                     signals={"analysed": False})


def carried_rating(severity: str, confidence: str) -> int:
    """The confidence (3-5, on the analyst's 0-10 scale) of an ``uncertain`` verdict on a detector
    result the analyst has no facts about: the mean of the detector's severity and confidence
    ratings (HIGH 5, MEDIUM 4, LOW 3, anything else 3), rounded up.

    With ``SURVIVE_UNCERTAIN_MIN_CONFIDENCE`` 5 this keeps a result the detector rates at least
    MEDIUM on one axis and HIGH on the other (bandit's ``logging.config.listen``, B612), and drops
    one it rates LOW in severity or MEDIUM on both (an ``assert``, B101). Until analyst version 6
    the lower rating was taken, which dropped every MEDIUM-severity result nothing judged,
    however sure the detector was, against "uncertain is not dismissed" (issue 12).
    """
    total = _RATING.get(severity.upper(), 3) + _RATING.get(confidence.upper(), 3)
    return -(-total // 2)


def _source_in_tests(candidate: Candidate) -> str | None:
    """Why every trace of an engine candidate starts in test code (the outside data enters only
    there, so no deployed path carries it), or None."""
    traces = (candidate.trace or {}).get("traces") or []
    paths = {trace["source"]["path"] for trace in traces}
    if paths and all(context.is_test_path(path) for path in paths):
        return f"the data enters in test code ({', '.join(sorted(paths))})"
    return None


def _node_at(tree: SourceTree, candidate: Candidate) -> ast.AST | None:
    """The innermost node starting at the candidate's position, else the first on its line."""
    for node in tree.locate(candidate.line, candidate.col, (ast.expr, ast.stmt, ast.excepthandler)):
        return node
    nodes = tree.by_line.get(candidate.line, ())
    return nodes[0] if nodes else None


def _answer(judgement: Judgement, request: ModelRequest) -> ModelAnswer:
    signals = {**judgement.signals, "rule": request.candidate.rule_id, "pass": request.pass_name}
    label = f" (CWE-{judgement.cwe})" if judgement.cwe is not None else ""
    conclusion = {"vulnerable": f"Verdict: vulnerable{label}.", "not_vulnerable": f"Verdict: not a vulnerability{label}.",
                  "uncertain": f"Verdict: uncertain{label}."}[judgement.verdict]
    return ModelAnswer(verdict=judgement.verdict, confidence=judgement.confidence, cwe=judgement.cwe,
                       rationale=" ".join([*judgement.facts, conclusion]), signals=signals)
