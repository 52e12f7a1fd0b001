"""Scan quality on the labelled evaluation set: the detect step vs. the pipeline's two passes.

Every sample in ``bench/evalset/labels.json`` names a file, the line of its sink, the weakness
family (CWE) and whether the sink is vulnerable. Candidates come from the detect step
(``fleetledger.jobs.scan.detect.detect_file``: bandit through its Python API, plus
fleetledger's own detectors FL001/FL002). A sample is predicted positive at a stage when a
candidate of the same family on the labelled line is still kept there:

* bandit: the whole detect step, bandit plus FL001/FL002; every candidate is kept;
* investigate: the offline analyst's first answer keeps it (``report.survives``);
* revalidate: the sceptical second answer (given the first as ``prior``) keeps it too.

The table gives, per family and overall, precision, recall (TPR) and Youden's J (TPR - FPR);
a last row repeats the overall figures for the second batch alone. None of the set is held out:
it was written beside the rules (see ``bench/evalset/README.md``); ``bench/corpora.py`` judges the
scan on code written by others.
Candidates kept on lines no label names are counted separately ("other kept"), so noise the
labels do not cover stays visible.

Run: ``python bench/eval_quality.py [--details]`` (a few seconds).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

# fleetledger.jobs.scan.report is imported after fleetledger.ledger: importing it first runs
# into the leases <-> ledger.storage import cycle.
import fleetledger.ledger  # noqa: F401
from fleetledger.jobs.scan.detect import detect_file
from fleetledger.jobs.scan.report import survives
from fleetledger.jobs.scan.shapes import Candidate, ModelRequest
from fleetledger.models.offline import OfflineAnalyst

EVALSET = Path(__file__).resolve().parent / "evalset"
STAGES = ("bandit", "investigate", "revalidate")

# Weakness family of a candidate: by rule id first (bandit reports eval/exec as CWE-78 and
# yaml.load as CWE-20), then by CWE.
RULE_FAMILY = {
    **{rule: 78 for rule in ("B601", "B602", "B603", "B604", "B605", "B606", "B607", "B609")},
    "B608": 89, "B610": 89, "B611": 89, "B102": 95, "B307": 95, "B301": 502, "B302": 502,
    "B506": 502, "B101": 703, "B105": 259, "B106": 259, "B107": 259, "B501": 295, "B323": 295,
    "B303": 328, "B324": 328, "B202": 22,
}
CWE_FAMILY = {94: 95, 798: 259, 327: 328, 916: 328, 80: 79, 611: 20, 776: 20, 338: 330}
FAMILY_NAMES = {78: "command injection", 89: "SQL injection", 95: "code injection",
                502: "deserialisation", 703: "assert", 259: "credentials", 295: "TLS off",
                328: "weak hash", 22: "archive paths", 20: "XML parsing", 79: "XSS (marked safe)",
                330: "weak randomness"}


@dataclass(frozen=True, kw_only=True)
class Sample:
    """One labelled sink.

    Attributes:
        file: Path relative to the evaluation set.
        cwe: Family of the weakness (see ``RULE_FAMILY``).
        line: Line of the sink.
        vulnerable: The label.
        batch: ``"second"`` for the later batch (written by the same hands as the rules; not
            held out), else None.
    """

    file: str
    cwe: int
    line: int
    vulnerable: bool
    batch: str | None = None


@dataclass(frozen=True, kw_only=True)
class Counts:
    """A confusion matrix."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, predicted: bool, actual: bool) -> Counts:
        """Returns the counts with one more outcome.

        Args:
            predicted: Whether the stage kept a candidate on the sink.
            actual: The label.

        Returns:
            New counts (read-only: this one is unchanged).
        """
        return Counts(tp=self.tp + (predicted and actual), fp=self.fp + (predicted and not actual),
                      fn=self.fn + (not predicted and actual), tn=self.tn + (not predicted and not actual))

    def row(self) -> str:
        """Formats precision, recall and Youden's J."""
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else float("nan")
        tpr = self.tp / (self.tp + self.fn) if self.tp + self.fn else float("nan")
        fpr = self.fp / (self.fp + self.tn) if self.fp + self.tn else float("nan")
        return f"{precision:5.2f} {tpr:5.2f} {tpr - fpr:5.2f}"


def family(candidate: Candidate) -> int | None:
    """Returns a candidate's weakness family, or None when the evaluation set has none like it."""
    if candidate.rule_id in RULE_FAMILY:
        return RULE_FAMILY[candidate.rule_id]
    return CWE_FAMILY.get(candidate.cwe or 0, candidate.cwe)


def lines_of(candidate: Candidate) -> set[int]:
    """The lines a candidate names: where it is reported, and for a taint engine candidate the
    lines its traces pass through in the same file (a label marks where the dangerous value is
    built, as bandit's B608 places its issue; the engine reports at the sink it reaches)."""
    lines = {candidate.line}
    for trace in (candidate.trace or {}).get("traces", []):
        lines.update(step["line"] for step in trace["steps"] if step["path"] == candidate.path)
        if trace["source"]["path"] == candidate.path:
            lines.add(trace["source"]["line"])
    lines.update(folded["line"] for folded in (candidate.trace or {}).get("also", []))
    return lines


def load_samples() -> list[Sample]:
    """Reads ``labels.json``; checks that every labelled line exists."""
    data = json.loads((EVALSET / "labels.json").read_text())
    samples = [Sample(file=s["file"], cwe=s["cwe"], line=s["line"], vulnerable=s["vulnerable"], batch=s.get("batch"))
               for s in data["samples"]]
    for sample in samples:
        lines = (EVALSET / sample.file).read_text().splitlines()
        if not 0 < sample.line <= len(lines):
            raise SystemExit(f"{sample.file}: labelled line {sample.line} does not exist")
    return samples


def judge(sample: Sample, analyst: OfflineAnalyst) -> tuple[dict[str, bool], dict[str, int]]:
    """Runs detect and both passes on one file.

    Args:
        sample: The labelled sink.
        analyst: The analyst to ask.

    Returns:
        The prediction per stage for the labelled sink, and per stage the number of kept
        candidates on other lines.
    """
    report = detect_file(EVALSET, sample.file)
    source = (EVALSET / sample.file).read_text()
    predicted = dict.fromkeys(STAGES, False)
    others = dict.fromkeys(STAGES, 0)
    for candidate in report.candidates:
        first = analyst.analyze(ModelRequest(candidate=candidate, source=source, brief=""))
        kept = {"bandit": True, "investigate": survives(first), "revalidate": False}
        if kept["investigate"]:
            second = analyst.analyze(ModelRequest(candidate=candidate, source=source, brief="",
                                                  pass_name="revalidate", prior=first.to_json()))
            kept["revalidate"] = survives(second)
        on_sink = sample.line in lines_of(candidate) and family(candidate) == sample.cwe
        for stage in STAGES:
            if on_sink:
                predicted[stage] = predicted[stage] or kept[stage]
            elif kept[stage] and sample.line not in lines_of(candidate):
                others[stage] += 1
    return predicted, others


def main() -> int:
    """Prints the quality table; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true", help="list every sample a stage gets wrong")
    options = parser.parse_args()
    started = time.perf_counter()
    analyst = OfflineAnalyst()
    samples = load_samples()
    counts: dict[tuple[str, int | str], Counts] = defaultdict(Counts)
    others = dict.fromkeys(STAGES, 0)
    wrong: list[str] = []
    for sample in samples:
        predicted, extra = judge(sample, analyst)
        for stage in STAGES:
            others[stage] += extra[stage]
            keys = [(stage, sample.cwe), (stage, "all")] + ([(stage, sample.batch)] if sample.batch else [])
            for key in keys:
                counts[key] = counts[key].add(predicted[stage], sample.vulnerable)
            if predicted[stage] != sample.vulnerable:
                wrong.append(f"  {stage:<11} {'FN' if sample.vulnerable else 'FP'}  {sample.file}:{sample.line}")
    families = sorted({s.cwe for s in samples})
    print(f"Evaluation set: {len(samples)} labelled sinks ({sum(s.vulnerable for s in samples)} vulnerable), {EVALSET}")
    print()
    header = "".join(f" | {stage:^17}" for stage in STAGES)
    print(f"{'family':<26} {'vul':>3} {'safe':>4}{header}")
    print(f"{'':<26} {'':>3} {'':>4}" + " | prec   rec    J  " * len(STAGES))
    batches = sorted({s.batch for s in samples if s.batch})
    for key in [*families, "all", *batches]:
        members = [s for s in samples if key == "all" or s.cwe == key or s.batch == key]
        name = "overall" if key == "all" else f"{key} batch" if key in batches else f"CWE-{key} {FAMILY_NAMES.get(key, '')}"  # type: ignore[arg-type]
        cells = "".join(f" | {counts[(stage, key)].row()}" for stage in STAGES)
        print(f"{name:<26} {sum(s.vulnerable for s in members):>3} {sum(not s.vulnerable for s in members):>4}{cells}")
    print()
    print("Kept candidates on unlabelled lines: " + ", ".join(f"{stage} {others[stage]}" for stage in STAGES))
    if options.details:
        print("\nMisclassified samples:")
        print("\n".join(sorted(wrong)) or "  none")
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
