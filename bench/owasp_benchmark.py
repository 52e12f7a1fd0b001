"""The scan scored on the OWASP Benchmark for Python, per category, as its scorecard scores a tool,
with bandit measured in the same run on the same tree.

The corpus (never committed; pass its checkout): GitHub ``OWASP-Benchmark/BenchmarkPython``,
measured at commit 7cf0674 (version 0.1, 1,230 test cases in 14 categories). Each test case
``testcode/BenchmarkTestNNNNN.py`` is one Flask view, listed in ``expectedresults-0.1.csv`` as
``name,category,real vulnerability,cwe``: either a real vulnerability of the category or a
look-alike that is safe.

Scoring (the Benchmark's own): a tool flags a test case for its category when it reports, anywhere
in that test case's file, a CWE of the category (``ACCEPTED``: the category's CWE and the
children tools report for it). Per category: TP,
FN, FP, TN, the true positive rate (recall), the false positive rate and the Benchmark's score,
TPR - FPR (Youden's index: 0 for a tool that guesses, 1 for a perfect one). "all" averages the
categories' rates, as the Benchmark's scorecard does.

Split: test cases are halved by SHA-256 of their name (even: tune, odd: judge), as in
``corpora.py``; the analyst's authors look only at the tune half (``--details`` prints its
misses and false alarms; the judge half's only with ``--show-judge``).

The scan runs as a user runs it (``corpora.run_scan``: ``fleetledger scan DIR --workspace TMP
--workers 2``, bubblewrap unless ``--sandbox`` says otherwise) on the whole checkout, so the
helpers and the application's entry point are read as they would be; bandit runs as
``bandit -r DIR -f json -q``. Both are timed.

Run: ``python bench/owasp_benchmark.py DIR [--split tune|judge|all] [--details] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import git_commit, run_bandit, run_scan  # noqa: E402
from corpora_labels.expect import split_of  # noqa: E402
from corpora_labels.score import bandit_findings, scan_findings  # noqa: E402

MEASURED_COMMIT = "7cf0674"
EXPECTED = "expectedresults-0.1.csv"
TESTS_DIR = "testcode"
TOOLS = ("scan", "bandit")
ACCEPTED: dict[int, frozenset[int]] = {
    22: frozenset({22, 23, 36, 73}),
    78: frozenset({78, 77}),
    79: frozenset({79, 80}),
    94: frozenset({94, 95}),
    328: frozenset({328, 327, 916}),
    330: frozenset({330, 338}),
}
"""A category's CWE -> the CWEs that flag a test case of it: the CWE itself and the children
tools report for it in MITRE's tree (path traversal's relative and absolute forms, eval as code
injection ...). Every other category takes its CWE alone: secure cookies 614 (not 1004, which
every test case's shared code shows), XXE 611 (not 776, entity expansion, another weakness)."""


@dataclass(frozen=True)
class TestCase:
    """One test case of the Benchmark: its name, category, truth, the CWE it is about and split."""

    name: str
    category: str
    vulnerable: bool
    cwe: int
    split: str

    @property
    def path(self) -> str:
        """The test case's file, relative to the checkout."""
        return f"{TESTS_DIR}/{self.name}.py"

    def accepted(self) -> frozenset[int]:
        """The CWEs that flag this test case for its category (see the module docstring)."""
        return ACCEPTED.get(self.cwe, frozenset({self.cwe}))


@dataclass
class Tally:
    """Counts of one tool for one category; ``cases`` keeps the misses and false alarms."""

    tp: int = 0
    fn: int = 0
    fp: int = 0
    tn: int = 0
    cases: list[tuple[str, TestCase]] = field(default_factory=list)

    def figures(self) -> dict[str, Any]:
        """TP/FN/FP/TN, ``tpr``, ``fpr`` and ``score`` (TPR - FPR); a rate is None with no cases."""
        tpr = self.tp / (self.tp + self.fn) if self.tp + self.fn else None
        fpr = self.fp / (self.fp + self.tn) if self.fp + self.tn else None
        score = tpr - fpr if tpr is not None and fpr is not None else None
        return {"tp": self.tp, "fn": self.fn, "fp": self.fp, "tn": self.tn, "tpr": tpr, "fpr": fpr, "score": score}


def load_cases(root: Path, split: str) -> list[TestCase]:
    """Reads ``expectedresults-0.1.csv``.

    Args:
        root: The Benchmark checkout.
        split: ``"tune"``, ``"judge"`` or ``"all"``.

    Returns:
        The test cases of that split, in the file's order.

    Raises:
        FileNotFoundError: ``root`` has no expected results (not a checkout of the Benchmark).
        ValueError: a row does not have the four fields.
    """
    cases = []
    with open(root / EXPECTED, encoding="utf-8", newline="") as handle:
        for row in csv.reader(handle):
            if not row or row[0].startswith("#"):
                continue
            if len(row) < 4:
                raise ValueError(f"{root / EXPECTED}: a row needs name,category,truth,cwe: {row}")
            name, category, truth, cwe = (cell.strip() for cell in row[:4])
            case = TestCase(name, category, truth.lower() == "true", int(cwe), split_of(f"{TESTS_DIR}/{name}.py"))
            if split in ("all", case.split):
                cases.append(case)
    return cases


def tally(cases: list[TestCase], cwes_by_path: dict[str, set[int]]) -> dict[str, Tally]:
    """Scores one tool: ``{category: Tally}`` plus nothing else (``all`` is computed later)."""
    tallies: dict[str, Tally] = {}
    for case in cases:
        counts = tallies.setdefault(case.category, Tally())
        flagged = bool(cwes_by_path.get(case.path, set()) & case.accepted())
        if case.vulnerable and flagged:
            counts.tp += 1
        elif case.vulnerable:
            counts.fn += 1
            counts.cases.append(("FN", case))
        elif flagged:
            counts.fp += 1
            counts.cases.append(("FP", case))
        else:
            counts.tn += 1
    return tallies


def _cwes_by_path(findings: list[Any]) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {}
    for finding in findings:
        if finding.cwe is not None:
            found.setdefault(finding.path, set()).add(int(finding.cwe))
    return found


def average(tallies: dict[str, Tally]) -> dict[str, Any]:
    """The scorecard's overall figures: the mean of the categories' TPR, FPR and score."""
    rows = [t.figures() for t in tallies.values()]
    out: dict[str, Any] = {k: sum(r[k] for r in rows) for k in ("tp", "fn", "fp", "tn")}
    for key in ("tpr", "fpr", "score"):
        values = [r[key] for r in rows if r[key] is not None]
        out[key] = sum(values) / len(values) if values else None
    return out


def _num(value: float | None) -> str:
    return "    -" if value is None else f"{value:5.2f}"


def _cells(f: dict[str, Any]) -> str:
    return f"{f['tp']:4d}{f['fn']:4d}{f['fp']:4d}{f['tn']:4d} {_num(f['tpr'])} {_num(f['fpr'])} {_num(f['score'])}"


def main(argv: list[str] | None = None) -> int:
    """Runs both tools on the checkout, prints the table (and details), writes ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="checkout of OWASP-Benchmark/BenchmarkPython")
    parser.add_argument("--split", choices=("tune", "judge", "all"), default="all")
    parser.add_argument("--details", action="store_true", help="print each FN and FP of the tune split")
    parser.add_argument("--show-judge", action="store_true", help="with --details, the judge split's too")
    parser.add_argument("--sandbox", choices=("bubblewrap", "gvisor", "microvm", "none"))
    parser.add_argument("--json", type=Path, metavar="OUT", help="write every figure as JSON")
    args = parser.parse_args(argv)
    cases = load_cases(args.root, args.split)
    report, scan_s = run_scan(args.root, args.sandbox)
    bandit, bandit_s = run_bandit(args.root)
    found = {"scan": _cwes_by_path(scan_findings(report)), "bandit": _cwes_by_path(bandit_findings(bandit, str(args.root)))}
    tallies = {tool: tally(cases, found[tool]) for tool in TOOLS}
    commit = git_commit(args.root) or "not a git work tree"
    warn = "" if commit.startswith(MEASURED_COMMIT) else f" (WARNING: measured at {MEASURED_COMMIT})"
    print(f"OWASP Benchmark for Python @ {commit[:12]}{warn}: {len(cases)} test cases ({args.split}); "
          f"scan {scan_s:.1f} s, bandit {bandit_s:.1f} s, scan/bandit time {scan_s / bandit_s:.1f}x; "
          f"files skipped by the scan: {report['summary']['files_skipped']}")
    cells = f"{'TP':>4}{'FN':>4}{'FP':>4}{'TN':>4} {'TPR':>5} {'FPR':>5} {'score':>5}"
    print(f"{'':<16} | {'scan':<{len(cells)}} | bandit")
    print(f"{'category':<16} | {cells} | {cells}")
    print("-" * (22 + 2 * len(cells)))
    figures: dict[str, Any] = {}
    for category in sorted(tallies["scan"]):
        row = {tool: tallies[tool].get(category, Tally()).figures() for tool in TOOLS}
        figures[category] = row
        print(f"{category:<16} | {_cells(row['scan'])} | {_cells(row['bandit'])}")
    print("-" * (22 + 2 * len(cells)))
    figures["all"] = {tool: average(tallies[tool]) for tool in TOOLS}
    print(f"{'all (mean)':<16} | {_cells(figures['all']['scan'])} | {_cells(figures['all']['bandit'])}")
    if args.details:
        for tool in TOOLS:
            for category, counts in sorted(tallies[tool].items()):
                for kind, case in counts.cases:
                    if args.show_judge or case.split == "tune":
                        print(f"  {tool:<6} {kind} {case.path} {category}")
    if args.json:
        args.json.write_text(json.dumps({"commit": commit, "split": args.split, "seconds": {"scan": scan_s, "bandit": bandit_s},
                                         "categories": figures}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
