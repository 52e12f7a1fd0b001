"""The offline analyst: a deterministic model that judges candidates by program analysis.

It needs no network and no credentials, and gives the same answer to the same request (no
randomness, no clock, no reliance on dict order). It parses the file, finds the flagged node
at the candidate's line and column, and runs the check for the candidate's weakness family
(``fleetledger.analysis.checks``): which argument of the sink is dangerous, where its value
comes from (constant, parameter, request data, unknown), and whether it is sanitised or
validated for that sink.

Claimed weaknesses (bandit rules in brackets): CWE-78 command injection [B601-B607], CWE-89
SQL injection [B608, B610, B611], CWE-94/95 code injection [B102, B307], CWE-502 unsafe
deserialisation [B301, B302, B506], CWE-703 security decisions in ``assert`` [B101],
CWE-259/798 hard-coded credentials [B105-B107], CWE-295 certificate verification off [B501,
B323], CWE-327/328 weak hashes [B303, B324], CWE-22 archive extraction [B202], CWE-79 text
marked as safe HTML [B308, B703, B704], CWE-636 errors swallowed by ``except: pass`` [B110,
B112], CWE-338 the ``random`` module used for secrets [B311], CWE-611/776 XML parsing
[B313-B320], and blacklisted imports [B401-B411]. Other rules are passed through as
``uncertain`` with a confidence taken from the detector's own rating, and the rationale says
they were not analysed.

Passes:
    * ``investigate``: the check's verdict; test code (by path or enclosing test function) is
      ``not_vulnerable``, because it is not deployed.
    * ``revalidate``: the sceptical second look. It re-runs the check and then demands more:
      code that can never run (``if False:``, after ``return``) is dropped; a value that comes
      from a parameter must not be shown harmless by the callers in the file (all calls pass
      constants, or all calls are in tests, or all pass values whose origin the file does not
      show); an origin the file does not show is no longer enough to keep a finding; outside
      data that passes through code the file does not show is kept only as ``uncertain``.

Library code: in a file with no entry point for outside data (no route, view, command-line
or request read: ``fleetledger.analysis.sources.entry_point``), a function's parameters hold
whatever callers elsewhere pass, and nothing shows that to be outside data. A finding that
rests on such a parameter is ``uncertain`` at 6 in the first pass (signal ``reach``:
``"library"``, which triage rates low). The sceptical pass keeps it (``uncertain`` at 5) only
when the function is an interface that splices its argument into a command, SQL, code or
serialised data unchecked and no caller in the file shows it harmless; text a function marks
as safe HTML as it was given is the caller's decision, so that is dropped, but markup the
function writes itself around an unescaped argument (``SafeString(f"<td>{value}</td>")``) is
such an interface and is kept.

Keeping a finding: the pipeline keeps a candidate whose answer is ``vulnerable``, or
``uncertain`` with confidence 5 or more (``fleetledger.jobs.scan.shapes.survives``). The
analyst's scale is set against that threshold: 9 shown by the syntax, 8 shown with one
assumption, 7 decided by a caller or by code passed through, 6 outside data through unseen code
(kept as uncertain), 5 open (kept: not cleared), 4 open after the sceptical pass (dropped),
3-5 for rules passed through (the detector's LOW/MEDIUM/HIGH confidence).
"""

from __future__ import annotations

import ast
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..analysis import context, sources
from ..analysis.assessment import CERTAIN, LIKELY, OPEN, PROBABLE, Assessment, Site, describe
from ..analysis.checks import (archive, asserts, code, command, deserialization, exceptions, hashes, imports, markup,
                               randomness, secrets, sql, tls, xml)
from ..analysis.taint import RANK, Leaf, Tracer, argument_for
from ..analysis.tree import FunctionNode, ParseError, SourceTree
from ..jobs.scan.shapes import Candidate, ModelAnswer, ModelRequest, Verdict

ANALYST_VERSION = "4"
# Confidence of an "uncertain" answer the sceptical pass means to drop: one below the pipeline's
# keep threshold (fleetledger.jobs.scan.shapes.SURVIVE_UNCERTAIN_MIN_CONFIDENCE, 5).
_DROPPED = 4
_CACHED_TREES = 8
# Confidence of a finding that rests on a parameter of library code (kept, uncertain).
_LIBRARY = 6
_INTERFACE = 5

_CALL = (ast.Call,)
_STRING = (ast.Constant, ast.JoinedStr, ast.BinOp, ast.Call)
_SECRET = (ast.Constant, ast.Call, ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True, kw_only=True)
class _Check:
    assess: Callable[[Site], Assessment | None]
    kinds: tuple[type[ast.AST], ...]


_COMMAND = _Check(assess=command.assess, kinds=_CALL)
_SQL = _Check(assess=sql.assess, kinds=_STRING)
_CODE = _Check(assess=code.assess, kinds=_CALL)
_DATA = _Check(assess=deserialization.assess, kinds=_CALL)
_ASSERT = _Check(assess=asserts.assess, kinds=(ast.Assert,))
_SECRETS = _Check(assess=secrets.assess, kinds=_SECRET)
_TLS = _Check(assess=tls.assess, kinds=_CALL)
_HASH = _Check(assess=hashes.assess, kinds=_CALL)
_ARCHIVE = _Check(assess=archive.assess, kinds=_CALL)
_IMPORT = _Check(assess=imports.assess, kinds=(ast.Import, ast.ImportFrom))
_MARKUP = _Check(assess=markup.assess, kinds=_CALL)
_SWALLOW = _Check(assess=exceptions.assess, kinds=(ast.ExceptHandler,))
_RANDOM = _Check(assess=randomness.assess, kinds=_CALL)
_XML = _Check(assess=xml.assess, kinds=_CALL)

CHECKS_BY_RULE: Mapping[str, _Check] = {
    **{rule: _COMMAND for rule in ("B601", "B602", "B603", "B604", "B605", "B606")},
    "B607": _Check(assess=command.assess_partial_path, kinds=_CALL),
    "B608": _SQL, "B610": _SQL, "B611": _SQL,
    "B102": _CODE, "B307": _CODE,
    "B301": _DATA, "B302": _DATA, "B506": _DATA,
    "B101": _ASSERT,
    "B105": _Check(assess=secrets.assess, kinds=(ast.Constant,)),
    "B106": _Check(assess=secrets.assess, kinds=_CALL),
    "B107": _Check(assess=secrets.assess, kinds=(ast.FunctionDef, ast.AsyncFunctionDef)),
    "B501": _TLS, "B323": _TLS,
    "B303": _HASH, "B324": _HASH,
    "B202": _ARCHIVE,
    **{f"B4{n:02d}": _IMPORT for n in range(1, 12)},
    "B308": _MARKUP, "B703": _MARKUP, "B704": _MARKUP,
    "B110": _SWALLOW, "B112": _SWALLOW,
    "B311": _RANDOM,
    **{f"B3{n}": _XML for n in range(13, 21)},
}
# For candidates from other detectors, by the CWE they report.
CHECKS_BY_CWE: Mapping[int, _Check] = {
    78: _COMMAND, 88: _COMMAND, 89: _SQL, 94: _CODE, 95: _CODE, 502: _DATA, 703: _ASSERT,
    259: _SECRETS, 798: _SECRETS, 295: _TLS, 327: _HASH, 328: _HASH, 22: _ARCHIVE,
    79: _MARKUP, 80: _MARKUP, 330: _RANDOM, 338: _RANDOM, 611: _XML, 776: _XML, 636: _SWALLOW,
}
_DETECTOR_CONFIDENCE = {"HIGH": 5, "MEDIUM": 4, "LOW": 3}


class OfflineAnalyst:
    """Judges candidates by program analysis on the Python syntax tree (see the module doc).

    Keeps the parsed trees of the last few files it saw (candidates arrive file by file), so a
    file with many candidates is parsed once; answers do not depend on the cache.
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
            request: The candidate, the file's source, the brief (unused) and the pass; on
                ``revalidate``, ``prior`` is the first pass's answer as JSON.

        Returns:
            The answer. Never raises for a bad source: a file that does not parse gives
            ``uncertain`` at confidence 5 (kept: the analyst could not clear it).
        """
        candidate = request.candidate
        revalidating = request.pass_name == "revalidate"
        try:
            tree = self._parse(request.source)
        except ParseError as exc:
            return _answer("uncertain", OPEN, candidate.cwe,
                           [f"The file could not be analysed ({exc}), so the detector's finding can neither be confirmed nor cleared."],
                           {"analysed": False, "reason": "parse-error"}, request)
        check = CHECKS_BY_RULE.get(candidate.rule_id) or (CHECKS_BY_CWE.get(candidate.cwe) if candidate.cwe else None)
        if check is None:
            reason = f"The offline analyst does not analyse rule {candidate.rule_id} ({candidate.rule_name}); the detector's own rating is carried over."
            return _pass_through(candidate, request, tree, reason)
        found = None
        seen = False
        for node in tree.locate(candidate.line, candidate.col, check.kinds):
            seen = True
            site = Site(tree=tree, node=node, path=candidate.path, rule_id=candidate.rule_id,
                        detector_cwe=candidate.cwe, in_test=context.test_context(tree, node, candidate.path))
            found = check.assess(site)
            if found is not None:
                break
        if found is None:
            what = "one the analyst recognises" if seen else "found"
            reason = f"The construct rule {candidate.rule_id} flags at line {candidate.line} is not {what}, so it was not analysed; the detector's own rating is carried over."
            return _pass_through(candidate, request, tree, reason)
        if revalidating:
            return _revalidate(site, found, request)
        return _investigate(site, found, request)


def _investigate(site: Site, found: Assessment, request: ModelRequest) -> ModelAnswer:
    facts = list(found.facts)
    signals = {**found.signals, "analysed": True, "in_test": site.in_test is not None}
    if site.in_test is not None:
        if found.verdict != "not_vulnerable":
            facts.append(f"But it is test code ({site.in_test}), which is not deployed; in application code this would be {found.verdict}.")
        else:
            facts.append(f"It is also test code ({site.in_test}).")
        return _answer("not_vulnerable", max(found.confidence, LIKELY), found.cwe, facts, signals, request)
    library = _library_parameter(site, found)
    if library is not None:
        facts.append(library)
        signals["reach"] = "library"
        return _answer("uncertain", _LIBRARY, found.cwe, facts, signals, request)
    return _answer(found.verdict, found.confidence, found.cwe, facts, signals, request)


def _library_parameter(site: Site, found: Assessment) -> str | None:
    """Says why a finding that rests on a parameter of library code is not shown to be
    reachable by outside data; None when the finding does not rest on one, or the file has an
    entry point."""
    worst = found.trace.worst() if found.trace is not None else None
    if found.verdict != "vulnerable" or worst is None or worst.kind != "parameter":
        return None
    if sources.entry_point(site.tree) is not None:
        return None
    return (f"Nothing in this file is an entry point for outside data (no route, view, command line or request read), "
            f"so {worst.param!r} of {worst.function}() holds whatever callers elsewhere pass; it reaches the sink "
            "unchecked, which is a weakness only where a caller passes outside data.")


def _revalidate(site: Site, found: Assessment, request: ModelRequest) -> ModelAnswer:
    prior = request.prior or {}
    judged = f"the first pass's {prior['verdict']} ({prior.get('confidence', '?')}/10)" if "verdict" in prior else "a candidate with no first-pass answer"
    opening = (f"Revalidation of {judged} re-ran the analysis and checked test code, dead code and, for a value "
               "from a parameter, the callers in this file.")
    facts = [opening, *found.facts]
    signals: dict[str, Any] = {**found.signals, "analysed": True, "in_test": site.in_test is not None, "dead_code": False}
    if site.in_test is not None:
        facts.append(f"It is test code ({site.in_test}), which is not deployed.")
        return _answer("not_vulnerable", CERTAIN, found.cwe, facts, signals, request)
    dead = context.dead_code(site.tree, site.node)
    if dead is not None:
        signals["dead_code"] = True
        facts.append(f"The flagged code never runs: {dead}.")
        return _answer("not_vulnerable", LIKELY, found.cwe, facts, signals, request)
    if found.verdict == "not_vulnerable":
        facts.append("Re-checked: the first pass's concern is not borne out." if prior.get("verdict") == "vulnerable" else "Re-checked: still not a weakness.")
        return _answer("not_vulnerable", found.confidence, found.cwe, facts, signals, request)
    worst = found.trace.worst() if found.trace is not None else None
    if found.verdict == "uncertain":
        confirmed = _confirmed_by_caller(site, found, worst, facts, signals, request) if worst is not None and worst.kind == "parameter" else None
        if confirmed is not None:
            return confirmed
        facts.append("A kept finding needs its dangerous value shown to come from outside the function; it is not, so it is dropped."
                     if found.trace is not None else "The sceptical pass does not keep a finding the analysis could not decide.")
        return _answer("uncertain", min(found.confidence, _DROPPED), found.cwe, facts, signals, request)
    if worst is not None and worst.kind == "parameter":
        if sources.entry_point(site.tree) is None:
            signals["reach"] = "library"
        return _revalidate_parameter(site, found, worst.function, worst.param, facts, signals, request)
    if worst is not None and worst.through is not None:
        facts.append(f"The outside data reaches the sink only through {worst.through}, which this file does not show; "
                     "it may sanitise, so the finding is kept as uncertain.")
        return _answer("uncertain", 6, found.cwe, facts, signals, request)
    facts.append("Confirmed: the value reaches the sink as traced, in code that runs and is not test code.")
    return _answer("vulnerable", found.confidence, found.cwe, facts, signals, request)


def _revalidate_parameter(site: Site, found: Assessment, function_name: str | None, param: str | None,
                          facts: list[str], signals: dict[str, Any], request: ModelRequest) -> ModelAnswer:
    """Asks the function's callers in this file what they pass for the dangerous parameter."""
    tree = site.tree
    library = signals.get("reach") == "library"
    function = _function_named(tree, site.node, function_name, param)
    arg = next((a for a in _parameters(function) if a.arg == param), None) if function is not None else None
    if function is None or arg is None or found.sink is None:
        if library:
            return _interface(found, "The value comes from a parameter whose function could not be found again", facts, signals, request)
        facts.append("The value comes from a parameter whose function could not be found again; the finding stands.")
        return _answer("vulnerable", found.confidence, found.cwe, facts, signals, request)
    sites = _outside_callers(tree, function, site.path)
    signals["callers"] = [s.call.lineno for s in sites]
    if not sites:
        if library:
            return _interface(found, f"No call of {function.name}() in this file, and the file has no entry point for outside data",
                              facts, signals, request)
        facts.append(f"No call of {function.name}() in this file; callers elsewhere pass whatever they like, so the finding stands.")
        return _answer("vulnerable", found.confidence, found.cwe, facts, signals, request)
    production = [s for s in sites if s.in_test is None]
    if not production:
        lines = ", ".join(str(s.call.lineno) for s in sites)
        facts.append(f"{function.name}() is called only from test code in this file (line {lines}); it is reachable only from tests.")
        signals["reachable_only_from_tests"] = True
        return _answer("not_vulnerable", PROBABLE, found.cwe, facts, signals, request)
    worst = _passed(tree, found, function, arg, production)
    if worst is not None and worst.kind == "request":
        facts.append(f"A caller passes outside data for {param!r}: {describe(worst)}.")
        signals.update(source="request", channel=worst.channel)
        return _answer("vulnerable", CERTAIN if worst.through is None else PROBABLE, found.cwe, facts, signals, request)
    if worst is not None and (worst.kind == "unknown" or worst.kind == "parameter" and worst.through is not None):
        facts.append(f"Callers in this file pass {describe(worst)} for {param!r}, whose origin this file does not show; "
                     "nothing shows outside data reaching it, so it is dropped.")
        return _answer("uncertain", _DROPPED, found.cwe, facts, signals, request)
    if worst is not None and library:
        return _interface(found, f"Callers in this file pass {describe(worst)} for {param!r}, and the file has no entry point for outside data",
                          facts, signals, request)
    if worst is not None:
        facts.append(f"Callers in this file pass {describe(worst)} for {param!r}, which this file does not fix; the finding stands.")
        return _answer("vulnerable", found.confidence, found.cwe, facts, signals, request)
    lines = ", ".join(str(s.call.lineno) for s in production)
    if function.name.startswith("_") or tree.function_of(function) is not None:
        facts.append(f"Every call of the private {function.name}() passes constants or checked values for {param!r} (line {lines}).")
        return _answer("not_vulnerable", PROBABLE, found.cwe, facts, signals, request)
    facts.append(f"Every call of {function.name}() in this file passes constants or checked values for {param!r} (line {lines}); "
                 "nothing shows outside data reaching it, so the finding is dropped.")
    return _answer("uncertain", _DROPPED, found.cwe, facts, signals, request)


def _outside_callers(tree: SourceTree, function: FunctionNode, path: str) -> list[context.CallSite]:
    """The calls of ``function`` in the file, except its recursive calls of itself (they pass
    values derived from its own parameters, so they show no new origin)."""
    return [s for s in context.callers(tree, function, path)
            if not any(ancestor is function for ancestor in tree.ancestors(s.call))]


def _passed(tree: SourceTree, found: Assessment, function: FunctionNode, arg: ast.arg,
            production: list[context.CallSite]) -> Leaf | None:
    """The worst origin of what the given calls pass for ``arg``, or None when all are safe."""
    tracer = Tracer(tree, found.sink or "any")
    worst = None
    for call_site in production:
        passed = argument_for(function, call_site.call, arg)
        if passed is None:
            continue
        leaf = tracer.trace(passed).worst()
        if leaf is not None and (worst is None or RANK[leaf.kind] > RANK[worst.kind]):
            worst = leaf
    return worst


def _confirmed_by_caller(site: Site, found: Assessment, leaf: Leaf, facts: list[str], signals: dict[str, Any],
                         request: ModelRequest) -> ModelAnswer | None:
    """For an uncertain finding that rests on a parameter: the answer when a caller in this file
    passes outside data for it, else None (the finding is then dropped as undecided)."""
    function = _function_named(site.tree, site.node, leaf.function, leaf.param)
    arg = next((a for a in _parameters(function) if a.arg == leaf.param), None) if function is not None else None
    if function is None or arg is None or found.sink is None:
        return None
    production = [s for s in _outside_callers(site.tree, function, site.path) if s.in_test is None]
    worst = _passed(site.tree, found, function, arg, production)
    if worst is None or worst.kind != "request":
        return None
    facts.append(f"A caller passes outside data for {leaf.param!r}: {describe(worst)}.")
    signals.update(source="request", channel=worst.channel, callers=[s.call.lineno for s in production])
    return _answer("vulnerable", PROBABLE, found.cwe, facts, signals, request)


def _interface(found: Assessment, premise: str, facts: list[str], signals: dict[str, Any],
               request: ModelRequest) -> ModelAnswer:
    """Answers for a parameter of library code that no caller in the file shows harmless."""
    worst = found.trace.worst() if found.trace is not None else None
    if worst is not None and worst.through is not None:
        facts.append(f"{premise}, and the parameter reaches the sink only through {worst.through}, which this file does not "
                     "show: the function does not put its argument into the sink itself, so it is dropped.")
        return _answer("uncertain", _DROPPED, found.cwe, facts, signals, request)
    if found.sink == "html" and not found.signals.get("builds_markup"):
        facts.append(f"{premise}: marking a caller's text as safe HTML is that caller's decision, and nothing here shows "
                     "outside data reaching it, so it is dropped.")
        return _answer("uncertain", _DROPPED, found.cwe, facts, signals, request)
    if found.sink == "html":
        facts.append(f"{premise}: callers elsewhere decide what the argument holds, but the function itself writes markup "
                     f"({found.signals['builds_markup']}) around it and marks the whole safe without escaping it, an "
                     "interface that is cross-site scripting whenever a caller passes outside data, so it is kept as "
                     "uncertain for a reviewer to check its callers.")
        return _answer("uncertain", _INTERFACE, found.cwe, facts, signals, request)
    facts.append(f"{premise}: callers elsewhere decide. The function puts its argument into the sink unchecked, an interface "
                 "that is injectable whenever a caller passes outside data, so it is kept as uncertain for a reviewer to check "
                 "its callers.")
    return _answer("uncertain", _INTERFACE, found.cwe, facts, signals, request)


def _pass_through(candidate: Candidate, request: ModelRequest, tree: SourceTree, reason: str) -> ModelAnswer:
    """Answers for a rule the analyst does not claim, or a construct it could not find."""
    why = ("Revalidation: " if request.pass_name == "revalidate" else "") + reason
    signals: dict[str, Any] = {"analysed": False, "in_test": False}
    node = next(iter(tree.by_line.get(candidate.line, ())), None)
    test = context.test_context(tree, node, candidate.path) if node is not None else (
        f"the file {candidate.path} is a test file" if context.is_test_path(candidate.path) else None)
    if test is not None:
        signals["in_test"] = True
        return _answer("not_vulnerable", 6, candidate.cwe, [why, f"It is test code ({test}), which is not deployed."], signals, request)
    confidence = _DETECTOR_CONFIDENCE.get(candidate.detector_confidence.upper(), 3)
    return _answer("uncertain", confidence, candidate.cwe, [why, f"The detector says: {candidate.message}"], signals, request)


def _answer(verdict: Verdict, confidence: int, cwe: int | None, facts: list[str], signals: dict[str, Any],
            request: ModelRequest) -> ModelAnswer:
    signals = {**signals, "rule": request.candidate.rule_id, "pass": request.pass_name}
    label = f" (CWE-{cwe})" if cwe is not None else ""
    conclusion = {"vulnerable": f"Verdict: vulnerable{label}.", "not_vulnerable": f"Verdict: not a vulnerability{label}.",
                  "uncertain": f"Verdict: uncertain{label}."}[verdict]
    return ModelAnswer(verdict=verdict, confidence=confidence, cwe=cwe, rationale=" ".join([*facts, conclusion]), signals=signals)


def _function_named(tree: SourceTree, node: ast.AST, name: str | None, param: str | None) -> FunctionNode | None:
    """The function ``name`` that declares ``param``: an enclosing one first, then the first in the file."""
    def declares(function: ast.AST) -> bool:
        return (isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function.name == name
                and any(a.arg == param for a in _parameters(function)))
    for ancestor in tree.ancestors(node):
        if declares(ancestor):
            return ancestor  # type: ignore[return-value]
    return next((n for n in ast.walk(tree.module) if declares(n)), None)  # type: ignore[return-value]


def _parameters(function: FunctionNode) -> list[ast.arg]:
    args = function.args
    return [a for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a is not None]

