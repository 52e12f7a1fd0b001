"""Expectations: what a corpus says must, or must not, be flagged, and where.

An expectation is a file, the statement span(s) it covers (none: the whole file), a family
(``families``), vulnerable or not, and the split it belongs to. Three sources:

* semgrep-rules test files: ``# ruleid: <id>`` (and ``todoruleid``, ``deepruleid``) marks the
  next code statement as a positive for the rule's CWE, ``# ok: <id>`` (and ``todook``,
  ``deepok``) as a negative (``semgrep_expectations``);
* SecurityEval: every sample under ``Testcases_Insecure_Code/CWE-NNN/`` is a positive for that
  CWE anywhere in the file (``securityeval_expectations``);
* our JSON labels for the deliberately vulnerable apps (``app_expectations``).

Spans come from the Python syntax tree (``statement_span``).
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import yaml

from .families import family_of

__all__ = [
    "Expectation", "LabelError", "RULE_CWE_OVERRIDES", "SPLITS", "app_expectations", "parse_annotations",
    "securityeval_expectations", "semgrep_expectations", "split_of", "statement_span",
]

SPLITS = ("tune", "judge")
POSITIVE_MARKS = frozenset({"ruleid", "todoruleid", "deepruleid"})
NEGATIVE_MARKS = frozenset({"ok", "todook", "deepok"})
_ANNOTATION = re.compile(r"^#\s*(ruleid|ok|todoruleid|todook|deepruleid|deepok)\s*:\s*(.+?)\s*$")

RULE_CWE_OVERRIDES: dict[str, int] = {
    "tainted-sql-string": 89,
}
"""semgrep-rules rules whose ``metadata.cwe`` contradicts their own message. ``tainted-sql-string``
(flask) says "user input used to manually construct a SQL string ... SQL injection" but is filed
under CWE-704 (incorrect type conversion)."""


class LabelError(ValueError):
    """A label file does not fit the corpus folder it is used with (wrong commit or a typo):
    fix the label, or fetch the corpus at the commit the label file names."""


@dataclass(frozen=True, kw_only=True)
class Expectation:
    """One thing a corpus says about its code.

    Attributes:
        corpus: The corpus name.
        path: The file, relative to the corpus root, forward slashes.
        spans: Inclusive ``(first, last)`` line ranges it covers; empty for the whole file.
        family: A key of ``families.FAMILIES``.
        vulnerable: True for a positive (must be flagged), False for a negative (must not).
        split: ``"tune"`` or ``"judge"``.
        source: Where it comes from (the annotation and rule, the folder, or the label's note).
    """

    corpus: str
    path: str
    spans: tuple[tuple[int, int], ...]
    family: str
    vulnerable: bool
    split: str
    source: str

    def covers(self, line: int) -> bool:
        """True when ``line`` is in one of the spans (any line when the spans are empty)."""
        return not self.spans or any(first <= line <= last for first, last in self.spans)


def split_of(path: str) -> str:
    """Returns the split of a file: ``"tune"`` when the SHA-256 of its corpus-relative path
    (UTF-8) is even, else ``"judge"``. Stable across runs, machines and Python versions."""
    digest = hashlib.sha256(path.encode("utf-8")).digest()
    return "tune" if digest[-1] % 2 == 0 else "judge"


# ---------------------------------------------------------------- statement spans


def _header_end(node: ast.stmt) -> int:
    """Last line of a statement's own text: the whole statement when simple, the lines before
    its body when compound (``def``/``with``/``if`` and their decorators or conditions)."""
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        return max(node.lineno, body[0].lineno - 1)
    return node.end_lineno or node.lineno


def _statement_spans(tree: ast.AST) -> list[tuple[int, int]]:
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            decorators = getattr(node, "decorator_list", None) or []
            first = min([node.lineno] + [d.lineno for d in decorators])
            spans.append((first, _header_end(node)))
    return spans


def statement_span(tree: ast.AST | None, line: int) -> tuple[int, int]:
    """Returns the span of the innermost statement whose own text covers ``line``.

    Args:
        tree: The file's syntax tree, or None when it does not parse (then the line alone).
        line: A 1-based line.

    Returns:
        ``(first, last)``: a simple statement's whole extent; a compound statement's header
        (decorators and signature, condition, ``with`` items); ``(line, line)`` when no
        statement covers the line.
    """
    if tree is None:
        return (line, line)
    covering = [s for s in _statement_spans(tree) if s[0] <= line <= s[1]]
    if not covering:
        return (line, line)
    return min(covering, key=lambda s: (s[1] - s[0], -s[0]))


def _parse(text: str) -> ast.AST | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


# ---------------------------------------------------------------- semgrep-rules


@dataclass(frozen=True, kw_only=True)
class Annotation:
    """A semgrep test annotation: ``mark`` (ruleid, ok, ...), the rule ids, the comment's line
    and the code line it is about."""

    mark: str
    rule_ids: tuple[str, ...]
    line: int
    target: int


def _comments_and_code_lines(text: str) -> tuple[list[tuple[int, str]], set[int]]:
    """Comments (line, text) and the lines holding code tokens; falls back to a line scan for
    a file that does not tokenize (semgrep-rules has a few Python 2 files)."""
    comments: list[tuple[int, str]] = []
    code_lines: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER, tokenize.ENCODING}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                comments.append((tok.start[0], tok.string))
            elif tok.type not in skip:
                code_lines.update(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        comments, code_lines = [], set()
        for number, raw in enumerate(text.splitlines(), start=1):
            stripped = raw.strip()
            if stripped.startswith("#"):
                comments.append((number, stripped))
            elif stripped:
                code_lines.add(number)
    return comments, code_lines


def parse_annotations(text: str) -> list[Annotation]:
    """Reads the semgrep test annotations of a Python file.

    An annotation is a comment ``# <mark>: <rule-id>[, <rule-id>...]`` where mark is ruleid,
    ok, todoruleid, todook, deepruleid or deepok; it is about the next line that holds code
    (stacked annotations and blank lines are skipped). A bare ``# ok`` with no rule id is not
    an annotation.

    Args:
        text: The file's source.

    Returns:
        The annotations in file order; one whose comment has no code after it is dropped.
    """
    comments, code_lines = _comments_and_code_lines(text)
    last = max(code_lines, default=0)
    found = []
    for line, comment in comments:
        match = _ANNOTATION.match(comment.strip())
        if not match:
            continue
        target = next((n for n in range(line + 1, last + 1) if n in code_lines), None)
        if target is None:
            continue
        ids = tuple(i.strip() for i in match.group(2).split(",") if i.strip())
        found.append(Annotation(mark=match.group(1), rule_ids=ids, line=line, target=target))
    return found


@dataclass(frozen=True, kw_only=True)
class Rule:
    """A semgrep rule: its id, CWE numbers and message."""

    rule_id: str
    cwes: tuple[int, ...]
    message: str


def _cwe_numbers(value: Any) -> tuple[int, ...]:
    items = value if isinstance(value, list) else [value]
    return tuple(int(n) for item in items if item for n in re.findall(r"CWE-(\d+)", str(item)))


def load_rules(yaml_path: Path) -> dict[str, Rule]:
    """Reads the rules of one semgrep-rules YAML file (a file that does not load gives none)."""
    try:
        document = yaml.safe_load(yaml_path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError):
        return {}
    rules = {}
    for raw in (document or {}).get("rules", []) if isinstance(document, dict) else []:
        if not isinstance(raw, dict) or "id" not in raw:
            continue
        rule_id = str(raw["id"])
        cwes = _cwe_numbers((raw.get("metadata") or {}).get("cwe"))
        if rule_id in RULE_CWE_OVERRIDES:
            cwes = (RULE_CWE_OVERRIDES[rule_id],)
        rules[rule_id] = Rule(rule_id=rule_id, cwes=cwes, message=str(raw.get("message", "")))
    return rules


def rule_families(rule: Rule) -> list[str]:
    """The in-scope families of a rule's CWEs, in the order the rule lists them."""
    families = []
    for cwe in rule.cwes:
        family = family_of(cwe, rule.message)
        if family and family not in families:
            families.append(family)
    return families


def _test_files(python_dir: Path) -> list[Path]:
    return sorted(p for p in python_dir.rglob("*.py") if not p.name.endswith(".fixed.py"))


def _all_rules(python_dir: Path) -> dict[Path, dict[str, Rule]]:
    return {p: load_rules(p) for p in sorted(python_dir.rglob("*.yaml"))}


def _resolve(rule_id: str, test_file: Path, rules_by_file: dict[Path, dict[str, Rule]]) -> Rule | None:
    """The rule an annotation names: from the YAML beside the test file, else any YAML."""
    sibling = rules_by_file.get(test_file.with_suffix(".yaml"), {})
    if rule_id in sibling:
        return sibling[rule_id]
    short = rule_id.rsplit(".", 1)[-1]
    for rules in rules_by_file.values():
        if rule_id in rules:
            return rules[rule_id]
        if short in rules:
            return rules[short]
    return None


def semgrep_expectations(root: Path) -> tuple[list[Expectation], dict[str, int]]:
    """Reads the expectations of semgrep-rules' Python test files.

    Each annotation gives one expectation per in-scope family of each rule it names (the
    family of each CWE in the rule's ``metadata.cwe``), covering the statement after it.
    todoruleid/deepruleid count as positives and todook/deepok as negatives: they mark code
    semgrep itself gets wrong, not code whose truth is in doubt. Where one statement is both a
    positive and a negative of the same family (two rules), the positive stands.

    Args:
        root: The semgrep-rules checkout (holding ``python/``).

    Returns:
        ``(expectations, counts)``; counts says how many annotations were read, named no known
        rule, or were about rules with no in-scope CWE, and how many files did not parse.
    """
    python_dir = root / "python"
    rules_by_file = _all_rules(python_dir)
    counts = {"annotations": 0, "unknown_rule": 0, "out_of_scope": 0, "unparsable_files": 0}
    found: dict[tuple[str, tuple[int, int], str], Expectation] = {}
    for test_file in _test_files(python_dir):
        text = test_file.read_text(encoding="utf-8", errors="replace")
        annotations = parse_annotations(text)
        if not annotations:
            continue
        tree = _parse(text)
        counts["unparsable_files"] += tree is None
        path = test_file.relative_to(root).as_posix()
        for note in annotations:
            counts["annotations"] += 1
            span = statement_span(tree, note.target)
            for rule_id in note.rule_ids:
                rule = _resolve(rule_id, test_file, rules_by_file)
                if rule is None:
                    counts["unknown_rule"] += 1
                    continue
                families = rule_families(rule)
                counts["out_of_scope"] += not families
                for family in families:
                    expectation = Expectation(
                        corpus="semgrep-rules", path=path, spans=(span,), family=family,
                        vulnerable=note.mark in POSITIVE_MARKS, split=split_of(path),
                        source=f"{note.mark}: {rule.rule_id} (CWE {', '.join(map(str, rule.cwes))}), line {note.line}")
                    key = (path, span, family)
                    if key not in found or (expectation.vulnerable and not found[key].vulnerable):
                        found[key] = expectation
    return list(found.values()), counts


# ---------------------------------------------------------------- SecurityEval


SECURITYEVAL_DIR = "Testcases_Insecure_Code"


def securityeval_expectations(root: Path) -> tuple[list[Expectation], dict[str, int]]:
    """Reads SecurityEval's insecure samples: each ``Testcases_Insecure_Code/CWE-NNN/*.py`` is a
    positive for CWE NNN anywhere in the file (the dataset has no line labels and no negatives).

    Args:
        root: The SecurityEval checkout.

    Returns:
        ``(expectations, excluded)``; excluded counts the samples per out-of-scope CWE folder
        (``"CWE-020": 2`` ...).
    """
    expectations, excluded = [], {}
    for sample in sorted((root / SECURITYEVAL_DIR).glob("CWE-*/*.py")):
        cwe_dir = sample.parent.name
        text = sample.read_text(encoding="utf-8", errors="replace")
        family = family_of(int(cwe_dir.split("-", 1)[1]), text)
        if family is None:
            excluded[cwe_dir] = excluded.get(cwe_dir, 0) + 1
            continue
        path = sample.relative_to(root).as_posix()
        expectations.append(Expectation(corpus="securityeval", path=path, spans=(), family=family, vulnerable=True,
                                        split=split_of(path), source=f"sample of {cwe_dir}"))
    return expectations, excluded


# ---------------------------------------------------------------- our labels for the apps


def load_label_file(path: Path) -> dict[str, Any]:
    """Reads one of our label files (``bench/corpora_labels/<corpus>.json``).

    Raises:
        LabelError: the file is not a label file (no ``labels`` list, or no ``split``).
    """
    document = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(document.get("labels"), list) or document.get("split") not in SPLITS:
        raise LabelError(f"{path}: a label file needs a 'labels' list and 'split' of {SPLITS}")
    return document


def _label_spans(label: dict[str, Any], tree: ast.AST | None, where: str) -> tuple[tuple[int, int], ...]:
    if "first_line" in label:
        return ((int(label["first_line"]), int(label["last_line"])),)
    anchors = label.get("lines") or [label.get("line")]
    if not all(isinstance(n, int) for n in anchors):
        raise LabelError(f"{where}: give 'line', 'lines' or 'first_line'/'last_line'")
    return tuple(sorted({statement_span(tree, n) for n in anchors}))


def _check_label(label: dict[str, Any], lines: list[str], spans: Iterable[tuple[int, int]], where: str) -> None:
    for first, last in spans:
        if not 1 <= first <= last <= len(lines):
            raise LabelError(f"{where}: lines {first}-{last} are not in the file ({len(lines)} lines)")
    anchor = label.get("line") or (label.get("lines") or [None])[0] or label.get("first_line")
    code = label.get("code")
    if not code or code not in lines[anchor - 1]:
        raise LabelError(f"{where}: line {anchor} does not contain {code!r}; the corpus is not at the "
                         f"labelled commit, or the label is wrong")
    if not str(label.get("note", "")).strip():
        raise LabelError(f"{where}: every label needs a note saying where it comes from")


def app_expectations(corpus: str, root: Path, label_file: Path) -> list[Expectation]:
    """Builds expectations from one of our label files, checked against the corpus folder.

    Each label has ``file``, one of ``line`` / ``lines`` (statement anchors, each widened to
    its statement's span) / ``first_line`` and ``last_line``, ``cwe``, ``vulnerable``,
    ``code`` (a substring of the first anchored line, so a label that no longer fits its code
    is caught) and ``note``. The file's ``split`` applies to every label.

    Raises:
        LabelError: a label names a missing file, lines outside it, a line without its
            ``code``, a CWE out of scope, or has no note.
    """
    document = load_label_file(label_file)
    expectations = []
    for index, label in enumerate(document["labels"]):
        where = f"{label_file.name} label {index} ({label.get('file')}:{label.get('line', label.get('lines'))})"
        source_path = root / str(label.get("file", ""))
        if not source_path.is_file():
            raise LabelError(f"{where}: no such file under {root}")
        text = source_path.read_text(encoding="utf-8", errors="replace")
        family = family_of(label.get("cwe"), text)
        if family is None:
            raise LabelError(f"{where}: CWE {label.get('cwe')} is in no family")
        spans = _label_spans(label, _parse(text), where)
        _check_label(label, text.splitlines(), spans, where)
        expectations.append(Expectation(corpus=corpus, path=label["file"], spans=spans, family=family,
                                        vulnerable=bool(label["vulnerable"]), split=document["split"],
                                        source=label["note"]))
    return expectations
