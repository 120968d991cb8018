"""Does an offline rule catch the adversary's lies, or only the adversary's sentences?

The adversary (``checklist_eval.adversary.phrasings``) plants a fixed set of sentences per strategy. A rule
written to fire on those sentences measures the sentences, not the lie. This script plants each strategy's
lie into the real papers twice: once in each of the adversary's own phrasings, once in each of the
rewordings below, written by hand with different words and the same meaning (they are never read by the
assessor and no rule may be written from them). Each plant is one answer of one paper, judged by the
heuristic assessor at its defaults, with the body and without it (a checklist file alone).

Reported per half of the fixed corpus split: the authors' own answers flagged (judged incorrect); plants
caught (judged incorrect) and their mean p_correct, adversary's wording against hand wording, per strategy;
and every rule (a blocking or suggestion finding's first words) that fires on at least ``--gap`` more of the
adversary's plants than of the hand-worded ones while the hand-worded lie fares better: a rule that knows
the sentence.

    python scripts/eval_rewordings.py [--shared ../shared] [--per-paper 2] [--gap 0.15] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from checklist_eval.adversary.attack import STRATEGIES, _context
from checklist_eval.adversary.attack_whitebox import without_body
from checklist_eval.adversary.corpus_split import HALVES, half_of
from checklist_eval.adversary.phrasings import Context
from checklist_eval.assessors.evidence.topics import topic_of
from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor, findings_for
from checklist_eval.errors import InputError
from checklist_eval.models import ChecklistItem, Paper

ROOT = Path(__file__).resolve().parents[1]

# The same lies in other words, written by hand on 2026-11-29 to share no telling word with the adversary's
# phrasings (the synonyms a participant would reach for first), never read by the assessor.
Phrasings = Callable[[ChecklistItem, Context], list[str]]


def _extra(ctx: Context) -> str:
    return f" and Appendix {ctx.real_appendix}" if ctx.real_appendix else ""


HAND: dict[str, Phrasings] = {
    "fabricated_irb": lambda item, ctx: [
        "Before anyone was recruited, our university's research ethics committee cleared the protocol, and every"
        " person taking part signed a consent form.",
        "The human-subject protocol got the green light from the review board of our institution prior to data"
        " collection; each annotator agreed in writing.",
        "The local ethics panel signed off on the user study, and subjects were told how their data would be used.",
        "Approval from the board that oversees research with people at our institution was secured, and all"
        " raters consented.",
        "A formal ethical review took place before the study with people began; it raised no concerns.",
        f"The crowdworker study was vetted by the oversight body of our institution and judged low risk (Section"
        f" {ctx.real_section}).",
    ],
    "fabricated_error_bars": lambda item, ctx: [
        "Every configuration was run with several random initialisations and the plots show the resulting"
        " dispersion.",
        "Numbers in the main table are means over repeated trials, each given with its spread.",
        "Each reported score carries an uncertainty estimate computed from independent repetitions.",
        "The curves are drawn with bands showing how much the runs varied.",
        "Whether the improvements are significant was checked with a statistical test over multiple seeds.",
        f"The results of Section {ctx.real_section} come with error estimates from five repetitions.",
    ],
    "fabricated_compute": lambda item, ctx: [
        "The experiments were carried out on eight high-end accelerators; the whole pipeline takes roughly a day.",
        "One machine with a modern graphics card was enough, and each training run finished in a few hours.",
        f"The type of processors and the duration of each run are reported in Section {ctx.real_section}.",
        "The total computational cost was about one week on a university cluster.",
        "Everything ran on a desktop computer with 64 GB of memory; training takes under an hour per model.",
        "A handful of GPUs for a couple of days sufficed; inference is cheap.",
    ],
    "release_upon_acceptance": lambda item, ctx: [
        "We are going to open our code base to the public after the paper is accepted.",
        "Our software and datasets shall be made accessible when the final version is submitted.",
        "The implementation is not online yet; we commit to posting it after the conference decision.",
        "The source code will appear in a public repository following publication.",
        "Reviewers may ask us for the code; a public version follows after the review process.",
        "Once the paper is accepted we will share everything needed to reproduce our numbers.",
    ],
    "phantom_pointer": lambda item, ctx: [
        f"Appendix {ctx.missing_appendix} treats this fully.",
        f"Please consult Table {ctx.missing_table} and the text around it in Appendix {ctx.missing_appendix}.",
        f"Everything needed on this point is in Appendix {ctx.missing_appendix}.",
        f"Refer to Appendix {ctx.missing_appendix}.3.",
        f"Full information is in Table {ctx.missing_table}.",
        f"Our Appendix {ctx.missing_appendix} gives the specifics.",
    ],
    "flip_to_yes": lambda item, ctx: [
        f"{(item.justification_latex or '').strip()} We consider this sufficient.",
        f"Partly. {(item.justification_latex or '').strip()}",
        f"{(item.justification_latex or '').strip()} More in Section {ctx.real_section}.",
        f"In brief: {(item.justification_latex or '').strip()}",
    ],
    "evasive_na": lambda item, ctx: [
        "This item has no bearing on our contribution.",
        "Irrelevant for this submission.",
        "The checklist point does not concern the kind of research presented.",
        "Our study falls outside what this question covers.",
        "Nothing in the work relates to this point.",
        "It does not pertain to our method.",
    ],
    "real_pointer": lambda item, ctx: [
        f"Covered in Section {ctx.real_section}.",
        f"Section {ctx.real_section} handles this.",
        f"Readers will find this in Section {ctx.real_section}{_extra(ctx)}.",
        f"As explained in Section {ctx.real_section}.",
        f"We treat this in Section {ctx.real_section}.",
        f"This point is dealt with in Section {ctx.real_section}{_extra(ctx)}.",
    ],
    "fabricated_licence": lambda item, ctx: [
        "Each dataset and pretrained model we rely on is credited, and its usage conditions were followed.",
        "Third-party resources were used only as their owners permit; their original papers are cited.",
        "We comply with the licensing conditions of every external asset.",
        "All external code and data come with open licences that allow academic use, and their creators are"
        " acknowledged.",
        f"Section {ctx.real_section} lists the licence attached to each resource we use.",
        "The usage conditions of the benchmarks we use are honoured and their sources are cited.",
    ],
    "fabricated_discussion": lambda item, ctx: [
        "The closing section of the paper reflects on the downsides of our approach.",
        f"We talk about this in Section {ctx.real_section}.",
        "The final remarks mention the risks and how they might be reduced.",
        "This is examined in the concluding part of the manuscript.",
        "The paper devotes a paragraph to this near the end.",
        "Both the benefits and the possible drawbacks are mentioned in our discussion.",
    ],
    "untruthful_no": lambda item, ctx: [
        "No; running this was too expensive for our budget.",
        "We did not provide this, as it lies beyond the focus of this paper.",
        "Not done, owing to limited time.",
        "No. We felt it was unnecessary for supporting the main results.",
        "No: the experiments were costly, so we omitted it.",
        "This is not included because of space constraints.",
    ],
}

WORDINGS = ("adversary", "hand")


def plants_of(paper: Paper, per_paper: int) -> list[tuple[str, str, ChecklistItem, str]]:
    """(strategy, wording, planted item, text): every strategy's phrasings, adversary's and hand-written, on
    the first ``per_paper`` questions of the paper it applies to."""
    ctx = _context(paper)
    answered = [it for it in paper.checklist.items if it.is_answered and it.justification_latex]
    out = []
    for name, strategy in STRATEGIES.items():
        items = [it for it in answered if strategy.applies(it, topic_of(it))][:per_paper]
        for item in items:
            for wording, texts in (("adversary", strategy.phrasings(item, ctx)), ("hand", HAND[name](item, ctx))):
                for text in dict.fromkeys(texts):
                    planted = item.model_copy(update={"answer": strategy.answer, "justification": text,
                                                      "justification_latex": text})
                    out.append((name, wording, planted, text))
    return out


def rule_of(note: str) -> str:
    """A finding's rule: its first words, without what varies per answer (quotes, places)."""
    head = note.split('"')[0].split("“")[0]
    return " ".join(head.split()[:7])


async def judge_all(corpus: Path, per_paper: int) -> list[dict]:
    from checklist_eval.reading.parsing import load_paper

    rows = []
    for folder in sorted(d for d in corpus.iterdir() if d.is_dir()):
        try:
            paper = load_paper(folder)
        except InputError:
            continue
        rows += await judge_paper(paper, folder.name, per_paper)
    return rows


async def judge_paper(paper: Paper, name: str, per_paper: int) -> list[dict]:
    """One row per judged plant, and one per answer of the authors' own (``strategy`` None): the answers
    as written, so the same run says how many honest answers the rules flag. With the body, then without."""
    assessor = HeuristicAssessor()
    rows = []
    for body, version in (("with body", paper), ("without body", without_body(paper))):
        for a in await assessor.assess_paper(version):
            if a.answer is not None and a.answer.is_answered:
                rows.append({"paper": name, "half": half_of(name), "body": body, "strategy": None, "wording": None,
                             "question": a.question_id, "caught": not a.correct, "p": a.p_correct, "rules": []})
        for strategy, wording, item, text in plants_of(paper, per_paper):
            verdict = await assessor.judge(version, item)
            rules = sorted({f"{f.severity}: {rule_of(f.note)}" for f in findings_for(version, item)
                            if f.severity in ("blocking", "suggestion") and f.note})
            rows.append({"paper": name, "half": half_of(name), "body": body, "strategy": strategy,
                         "wording": wording, "question": item.id, "text": text, "caught": not verdict.correct,
                         "p": verdict.p_correct, "rules": rules})
    return rows


def summary(rows: list[dict], gap: float) -> dict:
    """Per body setting and half: per strategy, caught and mean p by wording; the rules that know the sentence."""
    out: dict = {}
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        for half in ("all", r["half"]):
            groups[(r["body"], half)].append(r)
    for (body, half), every in sorted(groups.items()):
        honest = [r for r in every if r["strategy"] is None]
        part = [r for r in every if r["strategy"] is not None]
        per: dict = {}
        for strategy in sorted({r["strategy"] for r in part}):
            cell = {}
            for wording in WORDINGS:
                mine = [r for r in part if r["strategy"] == strategy and r["wording"] == wording]
                cell[wording] = {"n": len(mine), "caught": sum(r["caught"] for r in mine),
                                 "mean_p": round(sum(r["p"] for r in mine) / len(mine), 3) if mine else None}
            per[strategy] = cell
        out.setdefault(body, {})[half] = {
            "honest_flagged": {"n": len(honest), "flagged": sum(r["caught"] for r in honest)},
            "plants": {w: {"n": sum(c[w]["n"] for c in per.values()),
                           "caught": sum(c[w]["caught"] for c in per.values())} for w in WORDINGS},
            "per_strategy": per, "rules_knowing_the_sentence": knowing(part, gap)}
    return out


def knowing(part: list[dict], gap: float) -> list[dict]:
    """Rules (blocking or suggestion) that fire on a larger share of the adversary's plants than of the
    hand-worded ones of the same strategy, by at least ``gap``, where the hand-worded lie also fares better
    (higher mean p_correct): the other words escape. A rule that fires less on other words because a harsher
    one fires in its place ("names no licence" where the adversary wrote "licences") knows no sentence."""
    out = []
    for strategy in sorted({r["strategy"] for r in part}):
        by = {w: [r for r in part if r["strategy"] == strategy and r["wording"] == w] for w in WORDINGS}
        if not all(by.values()):
            continue
        mean_p = {w: sum(r["p"] for r in rs) / len(rs) for w, rs in by.items()}
        if mean_p["hand"] <= mean_p["adversary"]:
            continue
        for rule in sorted({x for rs in by.values() for r in rs for x in r["rules"]}):
            share = {w: sum(rule in r["rules"] for r in rs) / len(rs) for w, rs in by.items()}
            if share["adversary"] - share["hand"] >= gap:
                out.append({"strategy": strategy, "rule": rule, **{w: round(s, 3) for w, s in share.items()},
                            "mean_p": {w: round(p, 3) for w, p in mean_p.items()}})
    return out


def table(summ: dict) -> str:
    lines = []
    for body, halves in summ.items():
        for half in ("all", *HALVES):
            if half not in halves:
                continue
            h, pl = halves[half]["honest_flagged"], halves[half]["plants"]
            lines.append(f"\n{body}, {half}: authors' own answers flagged {h['flagged']}/{h['n']}; plants caught"
                         f" {pl['adversary']['caught']}/{pl['adversary']['n']} (adversary's wording),"
                         f" {pl['hand']['caught']}/{pl['hand']['n']} (hand wording)")
            lines.append("  per strategy: caught (mean p_correct), adversary's wording | hand wording")
            for strategy, cell in halves[half]["per_strategy"].items():
                a, h = cell["adversary"], cell["hand"]
                lines.append(f"  {strategy:24} {a['caught']:4}/{a['n']:<4} ({a['mean_p']})  |"
                             f" {h['caught']:4}/{h['n']:<4} ({h['mean_p']})")
            for k in halves[half]["rules_knowing_the_sentence"]:
                lines.append(f"  ! rule fires on the adversary's sentences more: {k}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--per-paper", type=int, default=2, help="questions per paper and strategy")
    ap.add_argument("--gap", type=float, default=0.15)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rows-out", type=Path, help="also write every judged plant as JSON lines")
    args = ap.parse_args()
    corpus = args.shared / "corpus" / "papers-latex"
    if not corpus.is_dir():
        print(f"eval_rewordings: {corpus} not found (pass --shared)", file=sys.stderr)
        return 2
    rows = asyncio.run(judge_all(corpus, args.per_paper))
    if args.rows_out:
        args.rows_out.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    summ = summary(rows, args.gap)
    print(json.dumps(summ, indent=1) if args.json else table(summ))
    return 0


if __name__ == "__main__":
    sys.exit(main())
