"""Measure the heuristic assessor on the real anchor sample, beside the reference system's verdicts,
and on an adversary benchmark built from whole real LaTeX papers.

The anchor sample (``../shared/corpus/anchor-sample``) holds 22 NeurIPS 2024 checklist-challenge PDFs,
each with its authors' expected per-question score (0, 0.5, 1). Binarized (1 = correct answer, else
incorrect) they are the ground truth. We parse every PDF with our own parser, assess it with the
heuristic assessor and report binary accuracy (``correct`` vs truth) and AUC (``p_correct`` vs truth,
Mann-Whitney with ties one half). In the same run the reference system's GPT-4-turbo and Gemini
scores (0/0.5/1; 1 counts as "correct") are scored on the same items, and on all of their results.

The adversary benchmark (``../shared/corpus/papers-latex``): every paper is attacked with
``checklist_eval.adversary.attack`` (4 plants, seeds 0..N-1), the adversarial paper is assessed with and without
its body, and ``checklist_eval.adversary.attack_eval`` reports R against accept-everything, the share of honest
answers flagged, plant detection per strategy and AUC. On the anchor sample a second readout grades
each answer 0 / 0.5 / 1 as its authors did (must-fix / suggestions or unverifiable only / clean).

    python scripts/eval_heuristic.py [--shared ../shared] [--seeds 3] [--rounds 6] [--tex never] [--json]

``--tex`` says who reads the adversarial copies of the LaTeX papers (default ``never``: the source
evaluator, as the in-process readings of the authors' own papers here and every figure before TeX became a
reader; ``auto`` compiles each of the 100+ copies, minutes of CPU each on a loaded machine, and a copy whose
compile outlives the parse timeout stops the run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from checklist_eval.adversary import evaluation
from checklist_eval.detection import metrics

ROOT = Path(__file__).resolve().parents[1]
GPT = "gpt-4-turbo (reference)"
PRIOR_NOTE = "p = the prior of the answer type (Yes / No / NA)"
REFERENCE_SYSTEMS = {GPT: "results_gpt", "gemini-1.5-pro (reference)": "results_gemini"}
# Suggestions about the justification alone (the answer may still be right). Counted as verdicts only in
# the "strict" readout, to show what the precision-first rule gives up on the authors' key.
JUSTIFICATION_ONLY = ("only restates the question", "A No needs a reason", "The No admits the gap")
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
    adversary: dict = field(default_factory=dict)
    parse_failures: dict[str, str] = field(default_factory=dict)
    answers_matching_reference: float | None = None
    notes: list[str] = field(default_factory=list)
    # Evidence states: of the shared papers' own answers ("with body" / "without body" -> half -> shares),
    # and of the anchor sample's answers with the authors' key score per state (half -> state -> figures).
    states: dict = field(default_factory=dict)
    anchor_states: dict = field(default_factory=dict)
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
    acc = sum(int(c) == t for c, t in zip(correct, y, strict=False)) / len(y)
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


@dataclass
class Item:
    """One answer of the anchor sample, as our assessor judged it."""

    paper: str
    question_id: str
    half: str
    truth: int  # 1 = a correct answer (authors' score 1), else 0
    answer: str | None
    p: float
    correct: bool
    graded: bool  # correct with no finding at all, as the authors' score 1
    strict: bool  # the justification-quality suggestions counted as verdicts (what they would buy)
    signals: list[str] = field(default_factory=list)  # one name per finding, for the re-weighting readout
    state: str = "contradicted"  # evidence state (an unparsed paper's or a missing answer: contradicted)
    score: float = 0.0  # the authors' key score (0 / 0.5 / 1)


def evaluate(sample: Path, checklist: str) -> Run:
    from checklist_eval.adversary.corpus_split import HALVES

    run = Run()
    started = time.perf_counter()
    references = {system: reference_trials(sample, folder) for system, folder in REFERENCE_SYSTEMS.items()}
    for system, trials in references.items():
        run.notes += [f"{system}: {note}" for note in trials.notes]
    papers = sample_papers(sample)
    items, run.parse_failures = assess_sample(papers, checklist)
    run.answers_matching_reference = matching_reference(items, references[GPT].frame)
    n = len(papers)
    run.figures.append(item_figures("heuristic (ours)", items, n, "our PDF parsing"))
    run.figures.append(item_figures("heuristic (ours), graded", items, n,
                                    "score 1 = no must-fix, suggestion or unverifiable", lambda i: i.graded))
    run.figures.append(item_figures("heuristic (ours), strict", items, n, "justification-quality suggestions as"
                                    " verdicts (not the product's rule)", lambda i: i.strict))
    run.figures.append(accept_everything(items, n, PRIOR_NOTE))
    for half in HALVES:
        part = [i for i in items if i.half == half]
        count, note = len({i.paper for i in part}), f"{half} families"
        run.figures += [item_figures("heuristic (ours)", part, count, note),
                        item_figures("heuristic (ours), strict", part, count, note, lambda i: i.strict),
                        accept_everything(part, count, note)]
    run.figures.append(reweighted(items, n))
    run.anchor_states = anchor_states(items)
    names = [name for name, _, _ in papers]
    for system, trials in references.items():
        run.figures.append(score_reference(trials, names, system, "same papers"))
        every = sorted(trials.frame["paper"].unique())
        run.figures.append(score_reference(trials, every, system, "all its results"))
    run.seconds = round(time.perf_counter() - started, 2)
    return run


def accept_everything(items: list[Item], papers: int, note: str) -> Figures:
    """Every answer accepted (a TODO or missing one stays incorrect), p the prior of its answer type."""
    return figures("accept everything", [i.truth for i in items], [_prior(i) for i in items],
                   [_prior(i) > 0 for i in items], papers, note)


def item_figures(system: str, items: list[Item], papers: int, note: str,
                 verdict: Callable[[Item], bool] = lambda i: i.correct) -> Figures:
    return figures(system, [i.truth for i in items], [i.p for i in items], [verdict(i) for i in items], papers, note)


def assess_sample(papers: list[tuple[str, Path, dict[str, float]]], checklist: str) -> tuple[list[Item], dict]:
    """Every item of the authors' key, judged by the heuristic assessor on our parse of the PDF (an
    unparsed paper's items count as missing answers: incorrect, p 0)."""
    from checklist_eval.adversary.corpus_split import anchor_half
    from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor, findings_for
    from checklist_eval.errors import InputError
    from checklist_eval.reading.parsing import load_paper

    assessor = HeuristicAssessor()
    items, failures = [], {}
    for name, pdf, truth in papers:
        try:
            paper = load_paper(pdf, checklist=checklist)
        except InputError as err:
            failures[name] = str(err)
            paper = None
        verdicts = {a.question_id: a for a in asyncio.run(assessor.assess_paper(paper))} if paper else {}
        asked = {i.id: i for i in paper.checklist.items} if paper else {}
        for qid, score in truth.items():
            a = verdicts.get(qid)
            found = findings_for(paper, asked[qid]) if paper and a and qid in asked else []
            items.append(Item(
                paper=name, question_id=qid, half=anchor_half(name),
                truth=int(not evaluation.binarize(score, THRESHOLD)),
                answer=a.answer.value if a else None, p=a.p_correct if a else 0.0, correct=bool(a and a.correct),
                graded=bool(a and a.correct and not a.suggestions and not a.unverifiable),
                strict=bool(a and a.correct and not any(k in x for x in a.suggestions for k in JUSTIFICATION_ONLY)),
                signals=[signal_name(f) for f in found],
                state=a.state.value if a and a.state else "contradicted", score=float(score)))
    return items, failures


def anchor_states(items: list[Item]) -> dict:
    """Per half (and all): per evidence state, the share of answers in it, and the authors' key on them
    (share scored 1, mean score)."""
    from checklist_eval.models import STATES

    out = {}
    for half in ["all", *sorted({i.half for i in items})]:
        part = [i for i in items if half == "all" or i.half == half]
        out[half] = {}
        for state in STATES:
            mine = [i for i in part if i.state == state.value]
            out[half][state.value] = {
                "n": len(mine), "share": round(len(mine) / len(part), 4) if part else None,
                "key_correct": round(sum(i.truth for i in mine) / len(mine), 4) if mine else None,
                "key_mean": round(sum(i.score for i in mine) / len(mine), 4) if mine else None}
    return out


def matching_reference(items: list[Item], gpt) -> float | None:
    """Share of items where our parsed answer equals the reference system's extracted one."""
    from checklist_eval.models import normalize_answer

    theirs = {(pa, q): normalize_answer(a) for pa, q, a in zip(gpt["paper"], gpt["question_id"], gpt["answer"],
                                                              strict=True)}
    pairs = [(theirs[i.paper, i.question_id], i.answer) for i in items
             if (i.paper, i.question_id) in theirs and i.answer is not None]
    return round(sum(t is not None and t.value == ours for t, ours in pairs) / len(pairs), 4) if pairs else None


def signal_name(f) -> str:
    """A finding's rule, without what varies per answer (quoted text, section labels)."""
    note = re.sub(r'\(?"[^"]*"\)?|“[^”]*”', "", f.note)
    return f"{f.severity}:{' '.join(note.split()[:6])}" if note else f"{f.severity}:{f.weight}"


def _prior(item: Item) -> float:
    from checklist_eval.assessors.heuristic.assessor import PRIORS
    from checklist_eval.models import Answer

    return PRIORS.get(Answer(item.answer), 0.0) if item.answer else 0.0  # TODO or missing: incorrect


def reweighted(items: list[Item], papers: int) -> Figures:
    """What the best re-weighting of our signals could buy: a logistic regression of the authors' key on
    the answer type and one indicator per rule, fitted on one half of the families and scored on the
    other (both ways), the verdict being p >= 0.5. It ignores the rule that p_correct stays on its
    verdict's side, so it is a ceiling for the weights, not a product."""
    import numpy as np

    vocab = sorted({s for i in items for s in i.signals} | {f"answer:{i.answer}" for i in items})
    col = {s: k for k, s in enumerate(vocab)}

    def matrix(part: list[Item]):
        x = np.zeros((len(part), len(vocab) + 1))
        x[:, -1] = 1.0
        for r, i in enumerate(part):
            for s in [*i.signals, f"answer:{i.answer}"]:
                x[r, col[s]] = 1.0
        return x

    y_all, p_all = [], []
    for fit_half in {i.half for i in items}:
        train = [i for i in items if i.half == fit_half]
        test = [i for i in items if i.half != fit_half]
        w = logistic_fit(matrix(train), np.array([i.truth for i in train], dtype=float))
        p_all += list(1 / (1 + np.exp(-matrix(test) @ w)))
        y_all += [i.truth for i in test]
    return figures("every signal re-weighted", y_all, [float(p) for p in p_all], [p >= 0.5 for p in p_all], papers,
                   "fitted on one half of the families, scored on the other (a ceiling, not a product)")


def logistic_fit(x, y, l2: float = 0.03, steps: int = 3000):
    """L2-regularised logistic regression by gradient descent (a few hundred rows: no solver needed)."""
    import numpy as np

    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        w -= 0.5 * (x.T @ (p - y) / len(y) + l2 * w)
    return w


def honest_set(papers: list[Path], strip: bool) -> list[tuple[str | None, bool, str]]:
    """(half, flagged, evidence state) for every answer of the shared papers and checklists as their
    authors wrote them (half None for a checklist outside the split: it counts in the overall figure only)."""
    from checklist_eval.adversary.attack_eval import without_body
    from checklist_eval.adversary.corpus_split import split
    from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor
    from checklist_eval.errors import InputError
    from checklist_eval.reading.parsing import load_paper

    out = []
    for folder in papers:
        try:
            paper = load_paper(folder)
        except InputError:
            continue  # a fragment the parser cannot read is the parser's matter, not an answer to judge
        if strip:
            paper = without_body(paper)
        out += [(split().get(folder.name), not a.correct, a.state.value if a.state else "")
                for a in asyncio.run(HeuristicAssessor().assess_paper(paper))
                if a.answer is not None and a.answer.is_answered]
    return out


def state_shares(honest: list[tuple[str | None, bool, str]]) -> dict:
    """Half ("all" too) -> share of the authors' answers in each evidence state."""
    from checklist_eval.models import STATES

    out = {}
    for half in ["all", *sorted({h for h, _, _ in honest if h})]:
        states = [st for h, _, st in honest if half == "all" or h == half]
        out[half] = {s.value: round(states.count(s.value) / len(states), 4) if states else None for s in STATES}
    return out


def adversary_benchmark(papers_dir: Path, seeds: int, rounds: int, n_bootstrap: int = 1000,
                        states: dict | None = None) -> dict:
    """Attack every whole paper (plain, then white-box for ``rounds``), assess A with and without its
    body, summarize per half of the fixed corpus split and per strategy. ``states`` receives the
    evidence states of the authors' own answers, per body setting and half."""
    from checklist_eval.adversary import attack_eval
    from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor

    papers = sorted(d for d in papers_dir.iterdir() if d.is_dir())
    fragments = sorted((papers_dir.parent / "latex").glob("*.tex"))  # checklists alone, as authors wrote them
    out = {}
    for label, strip in (("with body", False), ("without body", True)):
        judged = honest_set(papers, strip) + (honest_set(fragments, True) if strip else [])
        honest = [(h, f) for h, f, _ in judged]
        if states is not None:
            states[label] = state_shares(judged)
        for kind, n in (("plain", 0), ("white-box", rounds)):
            if kind == "white-box" and not rounds:
                continue
            trials = attack_eval.benchmark_trials(papers, HeuristicAssessor(), seeds=range(seeds), strip_body=strip,
                                                  rounds=n)
            out[f"{label}, {kind}"] = attack_eval.summarize(trials, n_bootstrap=n_bootstrap, honest_set=honest)
    return out


def _ci(rate: dict) -> str:
    return f"{rate['rate']:.1%} [{rate['ci95'][0]:.1%}-{rate['ci95'][1]:.1%}]" if rate and rate["n"] else "n/a"


def print_adversary(console, adversary: dict) -> None:
    from rich.table import Table

    table = Table(title="Adversary benchmark: whole real LaTeX papers, planted answers in A (95% intervals)")
    for col in ("", "half", "R", "accept all", "R - accept all", "honest flagged (A)", "authors' answers flagged",
                "plants detected", "AUC"):
        table.add_column(col, justify="left" if col in ("", "half") else "right")
    for label, whole in adversary.items():
        for half, s in [("all", whole), *(whole.get("halves") or {}).items()]:
            m = s["R_minus_accept_everything"]
            mci = f" [{m['ci95'][0]:+.3f},{m['ci95'][1]:+.3f}]" if m["ci95"] else ""
            a = s["auc"]
            auc = f"{a['auc']:.3f}" + (f" [{a['ci95'][0]:.2f}-{a['ci95'][1]:.2f}]" if a and a["ci95"] else "") \
                if a else "n/a"
            table.add_row(label, half, f"{s['R']:.3f}", f"{s['R_accept_everything']:.3f}", f"{m['value']:+.3f}{mci}",
                          _ci(s["false_flags"]), _ci(s["honest_set"]), _ci(s["detection"]), auc)
    console.print(table)
    per = Table(title="Plants detected per strategy (all papers)")
    per.add_column("strategy")
    for label in adversary:
        per.add_column(label, justify="right")
    names = sorted({n for s in adversary.values() for n in s["per_strategy"]})
    for name in names:
        cells = []
        for s in adversary.values():
            st = s["per_strategy"].get(name)
            cells.append(f"{st['detection']['rate']:.0%} of {st['detection']['n']}" if st else "n/a")
        per.add_row(name, *cells)
    console.print(per)


def print_halves(console, run: Run) -> None:
    """Per half, with and without body (plain attacks): the margin over accepting everything, the
    authors' answers flagged, AUC, and the authors' answers per evidence state."""
    from rich.table import Table

    table = Table(title="Per half of the corpus split (plain attacks; states of the authors' own answers)")
    for col in ("body", "half", "R - accept all", "honest flagged", "AUC", "supported", "unverified", "contradicted"):
        table.add_column(col, justify="left" if col in ("body", "half") else "right")
    for label in ("with body", "without body"):
        whole = run.adversary.get(f"{label}, plain")
        if not whole:
            continue
        for half, s in [("all", whole), *(whole.get("halves") or {}).items()]:
            shares = run.states.get(label, {}).get(half, {})
            a = s["auc"]
            table.add_row(label, half, f"{s['R_minus_accept_everything']['value']:+.3f}", _ci(s["honest_set"]),
                          f"{a['auc']:.3f}" if a else "n/a",
                          *(f"{shares[k]:.1%}" if shares.get(k) is not None else "n/a"
                            for k in ("supported", "unverified", "contradicted")))
    console.print(table)


def print_anchor_states(console, states: dict) -> None:
    from rich.table import Table

    table = Table(title="Challenge PDFs (anchor sample): answers per evidence state and the authors' key on them")
    for col in ("half", "state", "answers", "share", "key = 1", "mean key score"):
        table.add_column(col, justify="left" if col in ("half", "state") else "right")
    for half, per in states.items():
        for state, f in per.items():
            table.add_row(half, state, str(f["n"]), f"{f['share']:.1%}" if f["share"] is not None else "n/a",
                          f"{f['key_correct']:.1%}" if f["key_correct"] is not None else "n/a",
                          f"{f['key_mean']:.3f}" if f["key_mean"] is not None else "n/a")
    console.print(table)


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
    if run.adversary:
        print_adversary(console, run.adversary)
        print_halves(console, run)
    if run.anchor_states:
        print_anchor_states(console, run.anchor_states)
    console.print(f"{run.seconds:.1f} s")


def page_figures(run: Run, seeds: int) -> dict:
    """The figures the Codabench "Known issues" page quotes, from this run (all papers, plain attacks)."""
    import datetime

    from checklist_eval import __version__

    body, alone = run.adversary["with body, plain"], run.adversary["without body, plain"]
    figs = {(f.system, f.note): f for f in run.figures}
    ours, gpt = figs[("heuristic (ours)", "our PDF parsing")], figs[(GPT, "same papers")]
    accept = figs[("accept everything", PRIOR_NOTE)]
    held_out = {system: figs[(system, "held-out families")] for system in ("heuristic (ours)", "accept everything")}

    def rate(r: dict) -> dict:
        return {"k": r["k"], "n": r["n"], "rate": round(r["rate"], 4), "ci95": [round(x, 4) for x in r["ci95"]]}

    return {
        "measured": datetime.date.today().isoformat(),
        "how": f"scripts/eval_heuristic.py --figures-out ({seeds} attack seeds) on ../shared/corpus (papers-latex,"
               f" anchor-sample), checklist-eval {__version__}, heuristic assessor",
        "material": f"{body['runs'] // max(seeds, 1)} whole real NeurIPS papers (LaTeX sources from public"
                    f" repositories), each attacked {seeds} times with 4 planted dishonest answers"
                    f" ({body['runs']} adversarial papers); and the {ours.papers} real PDFs of the NeurIPS 2024"
                    " checklist challenge's public sample, with their authors' expected verdicts",
        "heuristic": {
            "honest_flagged": rate(body["honest_set"]),
            "honest_flagged_without_body": rate(alone["honest_set"]),
            "plants_detected": rate(body["detection"]),
            "unverifiable": rate(body["unverifiable"]),
            "anchor_accuracy": {"accuracy": ours.accuracy, "items": ours.items, "papers": ours.papers},
            "reference_gpt4_accuracy": {"accuracy": gpt.accuracy, "items": gpt.items},
            # the trivial baseline beside every accuracy: each answer accepted (TODO or missing stays wrong)
            "accept_everything_accuracy": {"accuracy": accept.accuracy, "items": accept.items},
            "held_out_accuracy": {"accuracy": held_out["heuristic (ours)"].accuracy,
                                  "accept_everything": held_out["accept everything"].accuracy,
                                  "items": held_out["heuristic (ours)"].items},
            # the authors' own answers per evidence state (all papers), and the anchor PDFs' per state
            "states": run.states.get("with body", {}).get("all", {}),
            "states_without_body": run.states.get("without body", {}).get("all", {}),
            "anchor_states": run.anchor_states.get("all", {}),
        },
    }


def read_adversarial_copies_with(tex: str) -> None:
    """Parse workers started without explicit limits (the attack's and the white-box rounds') read with
    ``tex``: the benchmark's API takes no limits, so the default is set for this process (a script's
    setting, never the product's)."""
    from dataclasses import dataclass

    from checklist_eval.reading import isolation

    reader = tex  # a class body does not see the function's names it assigns

    @dataclass(frozen=True)
    class Limits(isolation.ParseLimits):
        tex: str = reader

    isolation.ParseLimits = Limits  # type: ignore[misc]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared", help="the shared material folder")
    ap.add_argument("--checklist", default="neurips-2024", help="checklist version of the sample")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--seeds", type=int, default=3, help="attack seeds per whole paper (0: no adversary benchmark)")
    ap.add_argument("--rounds", type=int, default=6, help="white-box adversary rounds (0: plain attacks only)")
    ap.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the intervals")
    ap.add_argument("--tex", choices=("never", "auto", "always"), default="never",
                    help="who reads the attacked LaTeX papers (default never: the source evaluator)")
    ap.add_argument("--no-anchor", action="store_true", help="skip the anchor sample (adversary benchmark only)")
    ap.add_argument("--figures-out", type=Path, help="also write the figures the participant pages quote"
                    " (checklist_eval/challenge/assessor_figures.json) to this path")
    args = ap.parse_args(argv)
    sample = args.shared / "corpus" / "anchor-sample"
    if not (sample / "papers").is_dir():
        print(f"eval_heuristic: {sample}/papers not found (pass --shared)", file=sys.stderr)
        return 2
    read_adversarial_copies_with(args.tex)
    run = Run() if args.no_anchor else evaluate(sample, args.checklist)
    papers_dir = args.shared / "corpus" / "papers-latex"
    if args.seeds > 0 and papers_dir.is_dir():
        started = time.perf_counter()
        run.adversary = adversary_benchmark(papers_dir, args.seeds, args.rounds, args.bootstrap, run.states)
        run.seconds = round(run.seconds + time.perf_counter() - started, 2)
    if args.figures_out:
        if args.no_anchor or not run.adversary:
            print("eval_heuristic: --figures-out needs the anchor sample and the adversary benchmark", file=sys.stderr)
            return 2
        from checklist_eval.fsutil import atomic_write_text

        atomic_write_text(args.figures_out, json.dumps(page_figures(run, args.seeds), indent=1) + "\n")
    if args.json:
        print(json.dumps(asdict(run), indent=2))
    else:
        print_table(run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
