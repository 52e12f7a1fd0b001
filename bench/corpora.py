"""Scan quality per CWE on public labelled corpora we did not write, with bandit measured in the
same run on the same folders.

Corpora (put them outside the repository, e.g. under /work/corpora/; never commit them), and the
commits measured (and labelled, for the apps):

======================  ==============================  ========================================
option                  repository (GitHub)             commit measured
======================  ==============================  ========================================
``--semgrep-rules``     semgrep/semgrep-rules           157ae4706d7f54aa33647332f234dd68f30da195
``--securityeval``      s2e-lab/SecurityEval            6f4fb70f782c6d47b02ea24341e8ef8c1eb04a6a
``--pygoat``            adeyosemanputra/pygoat          19d17cc8874861142b330636d068bbde54e86b85
``--vulpy``             fportantier/vulpy               5249cc8b05a1c37f6b2f757b1cf16a509c327122
``--dvpwa``             anxolerd/dvpwa                  a1d8f89fac2e57093189853c6527c2b01fc1d9c1
``--dvga``              dolevf/Damn-Vulnerable-         a961308c02d1fb462b192681c336b0739e432da7
                        GraphQL-Application
======================  ==============================  ========================================

Fetch each with ``git clone https://github.com/<repository> DIR && git -C DIR checkout <commit>``
(or, from a bare mirror, ``git --git-dir=MIRROR worktree add --detach DIR <commit>``). Pass the
checkout's root; the script scans ``python/`` of semgrep-rules, ``Testcases_Insecure_Code/`` of
SecurityEval and the whole tree of the apps. When the folder is a git work tree its commit is
printed, with a warning when it is not the one measured (or labelled).

Expectations (``corpora_labels.expect``):

* semgrep-rules: each Python test file beside a rule's YAML annotates its code. ``# ruleid: ID``
  makes the next code statement a positive for the rule's ``metadata.cwe`` and ``# ok: ID`` a
  negative; ``todoruleid``/``deepruleid`` count as positives and ``todook``/``deepok`` as
  negatives (they mark semgrep's own misses and false alarms, not doubtful code). One rule's
  CWE is overridden where it contradicts the rule's own message
  (``corpora_labels.expect.RULE_CWE_OVERRIDES``). Annotations of rules with no in-scope CWE are
  ignored.
* SecurityEval: every sample ``Testcases_Insecure_Code/CWE-NNN/*.py`` is a positive for CWE NNN,
  anywhere in the file. It has no negatives, so only recall is measured there. Folders whose
  CWE is out of scope (CWE-020, CWE-331, CWE-759 ...) are left out and counted.
* pygoat, vulpy, dvpwa, dvga: our labels in ``bench/corpora_labels/<corpus>.json``: ``{"corpus",
  "repository", "commit", "split", "labels": [...]}``, each label ``{"file", "line" | "lines":
  [...] | "first_line"+"last_line", "cwe", "vulnerable", "code", "note"}``. ``line``/``lines``
  are statement anchors (each widened to its statement's span); ``code`` is the anchored
  line's text, checked so a label that no longer fits its corpus fails loudly; ``note`` says
  where the expectation comes from (the project's documentation, its own comments, or our
  reasoning as reviewers).

Matching (``corpora_labels.score``): a finding matches an expectation when it is in the same
file, its reported line is inside the expectation's statement span (from the Python syntax
tree: a simple statement's whole extent, a compound statement's header; a whole-file
expectation takes any line), and its CWE's family is one the expectation accepts. TP: a
positive matched; FN: a positive not matched; FP: a negative matched. "unl" counts distinct
in-scope findings in labelled files on no labelled statement; for semgrep-rules, whose test
files annotate every place their rules mean, "strict" precision also counts as FP the
unlabelled findings of a family the file itself labels.

Families (``corpora_labels.families``): sqli 89; cmdi 78/77/88; code 94/95/96; path
22/23/36/73; xss 79/80; ssti 1336; xpath 643; ldap 90; xxe 611/776; redirect 601; ssrf 918;
trust 501; cookie 614/1004; header 113; log 117; regex 730/1333 (and 400 when about a regular
expression); deser 502; hash 328/327/916; random 330/338; creds 798/259; tls 295. Code
injection and SSTI accept each other's findings (semgrep-rules files its template rules under
CWE-96, bandit its template checks under CWE-94).

Split: the analyst's authors may look only at ``tune``. semgrep-rules and SecurityEval files are
split by SHA-256 of their corpus-relative path (even: tune, odd: judge); pygoat is tune; vulpy,
dvpwa and dvga are judge. ``--split tune|judge|all`` selects; ``--details`` prints each FN and FP of
the tune split only, unless ``--show-judge`` is given too.

The scan runs as a user runs it: ``fleetledger scan FOLDER --workspace TMP --workers 2`` (the
default sandbox, bubblewrap; ``--sandbox none`` etc. only when asked), with no FLEETLEDGER_*
variable from the environment; its kept findings are read from ``TMP/findings.json``. bandit
runs as ``bandit -r FOLDER -f json -q``. Both are timed.

Run: ``python bench/corpora.py --semgrep-rules DIR --securityeval DIR --pygoat DIR --vulpy DIR
--dvpwa DIR --dvga DIR [--split tune] [--details] [--json out.json]`` (any subset of corpora).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora_labels.expect import (SECURITYEVAL_DIR, Expectation, app_expectations,  # noqa: E402
                                   load_label_file, securityeval_expectations, semgrep_expectations)
from corpora_labels.score import Finding, Tally, bandit_findings, scan_findings, score  # noqa: E402

LABELS_DIR = Path(__file__).resolve().parent / "corpora_labels"
CORPORA = ("semgrep-rules", "securityeval", "pygoat", "vulpy", "dvpwa", "dvga")
MEASURED_COMMITS = {
    "semgrep-rules": "157ae4706d7f54aa33647332f234dd68f30da195",
    "securityeval": "6f4fb70f782c6d47b02ea24341e8ef8c1eb04a6a",
}
SCANNED_FOLDER = {"semgrep-rules": "python", "securityeval": SECURITYEVAL_DIR}
RECALL_ONLY = frozenset({"securityeval"})
TOOLS = ("scan", "bandit")


class BenchError(RuntimeError):
    """A tool did not run to the end or wrote no report; the message says which and why."""


@dataclass(frozen=True, kw_only=True)
class Corpus:
    """One corpus: where it is and what it expects; ``measure`` returns a copy with what the
    tools found (``seconds`` per tool, ``tallies`` per tool and family)."""

    name: str
    root: Path
    scanned: str
    expectations: list[Expectation]
    commit: str | None
    expected_commit: str | None
    info: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    tallies: dict[str, dict[str, Tally]] = field(default_factory=dict)


# ---------------------------------------------------------------- corpora


def git_commit(root: Path) -> str | None:
    """The commit checked out at ``root``, or None when it is not a git work tree (read-only)."""
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def _expectations(name: str, root: Path) -> tuple[list[Expectation], dict[str, Any], str | None]:
    if name == "semgrep-rules":
        found, counts = semgrep_expectations(root)
        return found, {"annotations": counts}, MEASURED_COMMITS[name]
    if name == "securityeval":
        found, excluded = securityeval_expectations(root)
        return found, {"excluded_samples": excluded}, MEASURED_COMMITS[name]
    label_file = LABELS_DIR / f"{name}.json"
    return app_expectations(name, root, label_file), {"labels": str(label_file)}, load_label_file(label_file)["commit"]


def load_corpus(name: str, root: Path, split: str) -> Corpus | None:
    """Reads a corpus's expectations in the chosen split.

    Args:
        name: One of ``CORPORA``.
        root: The corpus checkout.
        split: ``"tune"``, ``"judge"`` or ``"all"``.

    Returns:
        The corpus, or None when it has no expectation in that split (nothing to measure).

    Raises:
        FileNotFoundError: the folder to scan is missing (not a checkout of that corpus).
        corpora_labels.expect.LabelError: our labels do not fit the folder.
    """
    scanned = SCANNED_FOLDER.get(name, "")
    if not (root / scanned).is_dir():
        raise FileNotFoundError(f"{root / scanned} is not a folder: is {root} a checkout of {name}?")
    found, info, expected_commit = _expectations(name, root)
    chosen = [e for e in found if split == "all" or e.split == split]
    if not chosen:
        return None
    return Corpus(name=name, root=root, scanned=scanned, expectations=chosen, commit=git_commit(root),
                  expected_commit=expected_commit, info=info)


# ---------------------------------------------------------------- tools


def _tool(name: str) -> str:
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        raise BenchError(f"{name} is not installed here: pip install -e . (it brings bandit) in this venv")
    return found


def _clean_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("FLEETLEDGER_")}


def run_scan(folder: Path, sandbox: str | None, workers: int = 2) -> tuple[dict[str, Any], float]:
    """Scans ``folder`` with the fleetledger command in a fresh workspace.

    Args:
        folder: The folder to scan.
        sandbox: A ``--sandbox`` value, or None for fleetledger's default.
        workers: Worker processes.

    Returns:
        ``(findings.json as parsed, wall seconds)``.

    Raises:
        BenchError: the scan exited non-zero or wrote no report.
    """
    with tempfile.TemporaryDirectory(prefix="corpora-bench-") as tmp:
        workspace = Path(tmp) / "workspace"
        command = [_tool("fleetledger"), "scan", str(folder), "--workspace", str(workspace),
                   "--workers", str(workers), "--no-progress"]
        if sandbox:
            command += ["--sandbox", sandbox]
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, env=_clean_environment())
        seconds = time.monotonic() - started
        report_path = workspace / "findings.json"
        if done.returncode != 0 or not report_path.is_file():
            said = "\n".join(part.strip()[-2000:] for part in (done.stdout, done.stderr) if part.strip())
            raise BenchError(f"fleetledger scan {folder} exited {done.returncode}: {said}")
        return json.loads(report_path.read_text(encoding="utf-8")), seconds


def run_bandit(folder: Path) -> tuple[dict[str, Any], float]:
    """Runs ``bandit -r folder -f json -q``.

    Returns:
        ``(bandit's JSON as parsed, wall seconds)``.

    Raises:
        BenchError: bandit failed (exit codes 0 and 1, "issues found", are both success).
    """
    started = time.monotonic()
    done = subprocess.run([_tool("bandit"), "-r", str(folder), "-f", "json", "-q"], capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode not in (0, 1):
        raise BenchError(f"bandit -r {folder} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout), seconds


def measure(corpus: Corpus, sandbox: str | None) -> Corpus:
    """Runs both tools on the corpus's folder and scores them.

    Returns:
        A copy of ``corpus`` with ``seconds``, ``tallies`` and ``info["scan_run"]`` filled.

    Raises:
        BenchError: a tool did not run to the end.
    """
    folder = corpus.root / corpus.scanned
    report, scan_s = run_scan(folder, sandbox)
    bandit, bandit_s = run_bandit(folder)
    found: dict[str, list[Finding]] = {
        "scan": scan_findings(report, corpus.scanned),
        "bandit": bandit_findings(bandit, str(folder), corpus.scanned),
    }
    scan_run = {"complete": report["run"]["complete"], "findings": report["summary"]["findings"],
                "files_skipped": report["summary"]["files_skipped"]}
    return replace(corpus, seconds={"scan": scan_s, "bandit": bandit_s}, info={**corpus.info, "scan_run": scan_run},
                   tallies={tool: score(corpus.expectations, found[tool]) for tool in TOOLS})


# ---------------------------------------------------------------- figures


def families_of(corpus: Corpus) -> list[str]:
    """Families with an expectation, then those with only unlabelled findings, each sorted."""
    labelled = sorted({e.family for e in corpus.expectations})
    extra = sorted({f for t in corpus.tallies.values() for f in t} - set(labelled))
    return labelled + extra


def overall(tallies: dict[str, Tally]) -> Tally:
    """The sum of a tool's family tallies."""
    total = Tally()
    for tally in tallies.values():
        total.add(tally)
    return total


def _figures(tally: Tally, recall_only: bool) -> dict[str, Any]:
    figures = tally.figures()
    if recall_only:
        for key in ("precision", "f1", "strict_precision", "strict_f1"):
            figures[key] = None
    return figures


def _ratio(scan: float | None, bandit: float | None) -> float | None:
    return scan / bandit if scan is not None and bandit else None


def corpus_figures(corpus: Corpus) -> dict[str, Any]:
    """All figures of one corpus as a JSON-ready dict (the ``--json`` content per corpus)."""
    recall_only = corpus.name in RECALL_ONLY
    key = "recall" if recall_only else "f1"
    rows = {}
    for family in families_of(corpus) + ["all"]:
        own = [e for e in corpus.expectations if family in ("all", e.family)]
        tools = {tool: _figures(overall(t) if family == "all" else t.get(family, Tally()), recall_only)
                 for tool, t in corpus.tallies.items()}
        rows[family] = {"positives": sum(e.vulnerable for e in own), "negatives": sum(not e.vulnerable for e in own),
                        **tools, f"{key}_ratio": _ratio(tools["scan"][key], tools["bandit"][key])}
    return {"root": str(corpus.root), "scanned": corpus.scanned or ".", "commit": corpus.commit,
            "expected_commit": corpus.expected_commit, "recall_only": recall_only,
            "files": len({e.path for e in corpus.expectations}), "seconds": corpus.seconds,
            "time_ratio": _ratio(corpus.seconds.get("scan"), corpus.seconds.get("bandit")),
            "info": corpus.info, "families": rows}


# ---------------------------------------------------------------- printing


def _num(value: float | None) -> str:
    return "   -" if value is None else f"{value:4.2f}"


def _tool_cells(f: dict[str, Any]) -> str:
    return (f"{f['tp']:4d}{f['fn']:4d}{f['fp']:4d}{f['unlabelled']:4d}  "
            f"{_num(f['recall'])} {_num(f['precision'])} {_num(f['f1'])}")


def format_table(name: str, figures: dict[str, Any]) -> str:
    """The readable table of one corpus: per family, scan and bandit side by side."""
    commit = (figures["commit"] or "not a git work tree")[:12]
    warn = ""
    if figures["commit"] and figures["expected_commit"] and figures["commit"] != figures["expected_commit"]:
        warn = f"  (WARNING: measured/labelled at {figures['expected_commit'][:12]})"
    seconds = figures["seconds"]
    head = (f"{name} @ {commit}{warn}: {figures['scanned']}, {figures['files']} labelled files; "
            f"scan {seconds['scan']:.1f} s, bandit {seconds['bandit']:.1f} s, "
            f"scan/bandit time {figures['time_ratio']:.1f}x")
    ratio_key = "recall_ratio" if figures["recall_only"] else "f1_ratio"
    cells = f"{'TP':>4}{'FN':>4}{'FP':>4}{'unl':>4}  {'R':>4} {'P':>4} {'F1':>4}"
    groups = f"{'':<17} | {'scan':<{len(cells)}} | {'bandit':<{len(cells)}} |"
    columns = f"{'family':<9}{'pos':>4}{'neg':>4} | {cells} | {cells} | {ratio_key.split('_')[0]} scan/bandit"
    lines = [head, groups, columns, "-" * len(columns)]
    for family, row in figures["families"].items():
        if family == "all":
            lines.append("-" * len(columns))
        ratio = row[ratio_key]
        lines.append(f"{family:<9}{row['positives']:4d}{row['negatives']:4d} | {_tool_cells(row['scan'])} | "
                     f"{_tool_cells(row['bandit'])} | {'-' if ratio is None else f'{ratio:.2f}'}")
    total = figures["families"]["all"]
    if figures["recall_only"]:
        lines.append("recall only: the corpus has no negatives and no line labels")
    if name == "semgrep-rules":
        lines.append(f"strict precision (unlabelled findings of the file's own families count as FP): "
                     f"scan {_num(total['scan']['strict_precision'])} (F1 {_num(total['scan']['strict_f1'])}), "
                     f"bandit {_num(total['bandit']['strict_precision'])} (F1 {_num(total['bandit']['strict_f1'])})")
    return "\n".join(lines)


def format_summary(all_figures: dict[str, dict[str, Any]]) -> str:
    """One line per corpus: overall recall, precision, F1 of both tools and the time."""
    lines = ["summary (all families)", f"{'corpus':<14}{'scan R':>7}{'P':>6}{'F1':>6}{'bandit R':>10}{'P':>6}{'F1':>6}"
             f"{'scan s':>9}{'bandit s':>9}"]
    for name, figures in all_figures.items():
        s, b = figures["families"]["all"]["scan"], figures["families"]["all"]["bandit"]
        lines.append(f"{name:<14}{_num(s['recall']):>7}{_num(s['precision']):>6}{_num(s['f1']):>6}"
                     f"{_num(b['recall']):>10}{_num(b['precision']):>6}{_num(b['f1']):>6}"
                     f"{figures['seconds']['scan']:9.1f}{figures['seconds']['bandit']:9.1f}")
    return "\n".join(lines)


def details(corpus: Corpus, show_judge: bool) -> list[dict[str, Any]]:
    """Each FN, FP and unlabelled finding of both tools, in the tune split only unless
    ``show_judge``.

    Returns:
        JSON-ready dicts with ``tool``, ``kind`` (FN, FP or unlabelled), ``file``, ``lines``,
        ``family``, ``label`` (where the expectation comes from) and, for a finding, its
        ``line``, ``rule`` and ``message``.
    """
    rows = []
    split_of_file = {e.path: e.split for e in corpus.expectations}
    for tool, tallies in corpus.tallies.items():
        for family, tally in sorted(tallies.items()):
            for e in tally.missed:
                if show_judge or e.split == "tune":
                    rows.append({"tool": tool, "kind": "FN", "file": e.path, "lines": e.spans, "family": family,
                                 "label": e.source})
            for e, f in tally.false_alarms:
                if show_judge or e.split == "tune":
                    rows.append({"tool": tool, "kind": "FP", "file": e.path, "lines": e.spans, "family": family,
                                 "label": e.source, "line": f.line, "rule": f.rule, "message": f.message})
            for f in tally.unlabelled_findings:
                if show_judge or split_of_file.get(f.path) == "tune":
                    rows.append({"tool": tool, "kind": "unlabelled", "file": f.path, "lines": [], "family": family,
                                 "label": "", "line": f.line, "rule": f.rule, "message": f.message})
    return rows


def format_details(rows: list[dict[str, Any]]) -> str:
    """One line per row of ``details``: tool, kind, file:line, family, then the label and/or the
    finding."""
    out = []
    for r in rows:
        where = ",".join(f"{a}-{b}" if a != b else str(a) for a, b in r["lines"]) or "file"
        if r["kind"] == "FN":
            out.append(f"  {r['tool']:<6} FN {r['file']}:{where} {r['family']}  [{r['label']}]")
        elif r["kind"] == "unlabelled":
            out.append(f"  {r['tool']:<6} unlabelled {r['file']}:{r['line']} {r['family']}  {r['rule']}: {r['message']}")
        else:
            out.append(f"  {r['tool']:<6} FP {r['file']}:{r['line']} {r['family']}  {r['rule']}: {r['message']}"
                       f"  [{r['label']}]")
    return "\n".join(out)


# ---------------------------------------------------------------- command line


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Reads the command line; at least one corpus folder is required (argparse exits 2)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in CORPORA:
        parser.add_argument(f"--{name}", type=Path, metavar="DIR", help=f"checkout of the {name} corpus")
    parser.add_argument("--split", choices=("tune", "judge", "all"), default="all")
    parser.add_argument("--details", action="store_true",
                        help="print each FN, FP and unlabelled finding (tune split only)")
    parser.add_argument("--show-judge", action="store_true", help="with --details, print the judge split's too")
    parser.add_argument("--sandbox", choices=("bubblewrap", "gvisor", "microvm", "none"),
                        help="passed to fleetledger scan (default: fleetledger's own, bubblewrap)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write every figure as JSON")
    args = parser.parse_args(argv)
    if not any(getattr(args, name.replace("-", "_")) for name in CORPORA):
        parser.error("give at least one corpus folder (--semgrep-rules DIR, --securityeval DIR, ...)")
    return args


def main(argv: list[str] | None = None) -> int:
    """Measures every corpus given, prints the tables (and details), writes ``--json``.

    Returns:
        0. A tool that fails raises ``BenchError``; a label that does not fit its corpus
        raises ``corpora_labels.expect.LabelError``.
    """
    args = parse_args(argv)
    print(f"split: {args.split} (semgrep-rules and SecurityEval halved by SHA-256 of the file path; pygoat is tune; "
          f"vulpy, dvpwa and dvga are judge)\n")
    results: dict[str, dict[str, Any]] = {}
    started = time.monotonic()
    for name in CORPORA:
        root = getattr(args, name.replace("-", "_"))
        if root is None:
            continue
        corpus = load_corpus(name, root.resolve(), args.split)
        if corpus is None:
            print(f"{name}: nothing in the {args.split} split\n")
            continue
        corpus = measure(corpus, args.sandbox)
        results[name] = corpus_figures(corpus)
        print(format_table(name, results[name]) + "\n")
        if args.details:
            rows = details(corpus, args.show_judge)
            results[name]["details"] = rows
            hidden = not args.show_judge and any(e.split == "judge" for e in corpus.expectations)
            withheld = " (the judge split's are withheld: --show-judge)" if hidden else ""
            print(f"details of {name}{withheld}:\n{format_details(rows)}\n")
    if results:
        print(format_summary(results))
    print(f"\ntotal {time.monotonic() - started:.1f} s")
    if args.json:
        args.json.write_text(json.dumps({"split": args.split, "corpora": results}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
