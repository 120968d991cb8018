"""Measure the heuristic assessor on the real anchor sample, beside the reference system's verdicts.

The anchor sample (``../shared/corpus/anchor-sample``) holds 22 NeurIPS 2024 checklist-challenge PDFs,
each with its authors' expected per-question score (0, 0.5, 1). Binarized (1 = correct answer, else
incorrect) they are the ground truth. We parse every PDF with our own parser, assess it with the
heuristic assessor and report binary accuracy (``correct`` vs truth) and AUC (``p_correct`` vs truth,
Mann-Whitney with ties one half). In the same run the reference system's GPT-4-turbo and Gemini
scores (0/0.5/1; 1 counts as "correct") are scored on the same items, and on all of their results.

    python scripts/eval_heuristic.py [--shared ../shared] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from checklist_eval import evaluation, metrics

ROOT = Path(__file__).resolve().parents[1]
GPT = "gpt-4-turbo (reference)"
REFERENCE_SYSTEMS = {GPT: "results_gpt", "gemini-1.5-pro (reference)": "results_gemini"}
THRESHOLD = 1.0
"""Binarization: an expected score below this is an incorrect answer (1 = correct, else incorrect)."""


@dataclass
class Figures:
    system: str
    items: int
    papers: int
    accuracy: float
    auc: float
    positives: int
    note: str = ""


@dataclass
class Run:
    figures: list[Figures] = field(default_factory=list)
    parse_failures: dict[str, str] = field(default_factory=dict)
    answers_matching_reference: float | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def sample_papers(sample: Path) -> list[tuple[str, Path, dict[str, float]]]:
    """(name, pdf, truth) for every paper folder holding one PDF and one YAML."""
    out = []
    for folder in sorted((sample / "papers").iterdir()):
        pdfs, yamls = sorted(folder.glob("*.pdf")), sorted(folder.glob("*.yaml"))
        if folder.is_dir() and pdfs and yamls:
            out.append((folder.name, pdfs[0], evaluation.read_ground_truth(yamls[0])))
    return out


def figures(system: str, y: list[int], p: list[float], correct: list[bool], papers: int, note: str = "") -> Figures:
    acc = sum(int(c) == t for c, t in zip(correct, y)) / len(y)
    return Figures(system, len(y), papers, round(acc, 4), round(metrics.auc(y, p), 4), sum(y), note)


def reference_trials(sample: Path, folder: str) -> evaluation.Trials:
    """A reference system's trials, with the ``ground_truth.json`` beside each of its CSVs."""
    return evaluation.load_reference_trials(sample / "reference-results" / folder, None, THRESHOLD)


def score_reference(trials: evaluation.Trials, names: list[str], system: str, note: str) -> Figures:
    """Binary accuracy and AUC of a reference system's 0/0.5/1 scores on the papers named."""
    df = trials.frame[trials.frame["paper"].isin(names)]
    y = [int(not t) for t in df["target"]]  # 1 = a correct answer, as for our assessor
    p = [float(x) for x in df["p_correct"]]
    return figures(system, y, p, [x == 1 for x in p], int(df["paper"].nunique()), note)


def evaluate(sample: Path, checklist: str) -> Run:
    from checklist_eval.assessors.heuristic import HeuristicAssessor
    from checklist_eval.errors import InputError
    from checklist_eval.models import normalize_answer
    from checklist_eval.parsing import load_paper

    run = Run()
    started = time.perf_counter()
    assessor = HeuristicAssessor()
    references = {system: reference_trials(sample, folder) for system, folder in REFERENCE_SYSTEMS.items()}
    for system, trials in references.items():
        run.notes += [f"{system}: {note}" for note in trials.notes]
    gpt = references[GPT].frame
    ref_answers = {(pa, q): normalize_answer(a) for pa, q, a in zip(gpt["paper"], gpt["question_id"], gpt["answer"])}
    y: list[int] = []
    p: list[float] = []
    correct: list[bool] = []
    same = total = 0
    papers = sample_papers(sample)
    for name, pdf, truth in papers:
        try:
            paper = load_paper(pdf, checklist=checklist)
        except InputError as err:
            run.parse_failures[name] = str(err)
            verdicts = {}  # every item of an unparsed paper counts as a missing answer: incorrect, p 0
        else:
            verdicts = {a.question_id: a for a in asyncio.run(assessor.assess_paper(paper))}
        for qid, score in truth.items():
            a = verdicts.get(qid)
            y.append(int(not evaluation.binarize(score, THRESHOLD)))
            p.append(a.p_correct if a else 0.0)
            correct.append(bool(a and a.correct))
            if (name, qid) in ref_answers and a is not None:
                total += 1
                same += int(a.answer == ref_answers[name, qid])
    run.figures.append(figures("heuristic (ours)", y, p, correct, len(papers), "our PDF parsing"))
    names = [name for name, _, _ in papers]
    for system, trials in references.items():
        run.figures.append(score_reference(trials, names, system, "same papers"))
        every = sorted(trials.frame["paper"].unique())
        run.figures.append(score_reference(trials, every, system, "all its results"))
    run.answers_matching_reference = round(same / total, 4) if total else None
    run.seconds = round(time.perf_counter() - started, 2)
    return run


def print_table(run: Run) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Assessors on the anchor sample (binarized: score 1 = correct)")
    for col in ("system", "papers", "items", "correct items", "accuracy", "AUC", "note"):
        table.add_column(col, justify="right" if col not in ("system", "note") else "left")
    for f in run.figures:
        table.add_row(f.system, str(f.papers), str(f.items), str(f.positives), f"{f.accuracy:.3f}",
                      f"{f.auc:.3f}", f.note)
    console = Console()
    console.print(table)
    if run.answers_matching_reference is not None:
        console.print(f"Our parsed answers equal the reference's extracted answers on "
                      f"{run.answers_matching_reference:.1%} of items.")
    for note in run.notes:
        console.print(f"note: {note}")
    for name, problem in run.parse_failures.items():
        console.print(f"[red]parse failure[/red] {name}: {problem}")
    console.print(f"{run.seconds:.1f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared", help="the shared material folder")
    ap.add_argument("--checklist", default="neurips-2024", help="checklist version of the sample")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    sample = args.shared / "corpus" / "anchor-sample"
    if not (sample / "papers").is_dir():
        print(f"eval_heuristic: {sample}/papers not found (pass --shared)", file=sys.stderr)
        return 2
    run = evaluate(sample, args.checklist)
    if args.json:
        print(json.dumps(asdict(run), indent=2))
    else:
        print_table(run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
