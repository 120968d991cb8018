"""``checklist-eval check PATH``: an author's self-check of one paper's checklist.

Parses the paper (a .tex file, a LaTeX folder, a .zip/.tar.gz project or a PDF), judges every answer
with the chosen assessor (offline heuristic by default) and prints a verdict per question plus the
correctness score C = correct answers / questions. ``--json`` prints the result object, ``--out DIR``
also writes it as ``check.json`` beside an HTML report, ``--dry-run`` only says what it would spend.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from checklist_eval.summaries import CheckResult

from checklist_eval.challenge.results.layout import CHECK_JSON

CHECK_JSON_LAYOUT: dict[str, Any] = {"indent": 2, "ensure_ascii": False}  # as check.json was always written


def register(subparsers: Any) -> None:
    from checklist_eval.cli.flags import add_assessor_args, add_limit_args

    p = subparsers.add_parser("check", help="self-check one paper's checklist answers",
                              description="An author's self-check of one paper's checklist: a verdict per "
                                          "question and the correctness score C.")
    p.add_argument("path", metavar="PATH", help="paper: .tex, LaTeX folder, .zip/.tar.gz or .pdf")
    p.add_argument("--checklist", metavar="ID", default=None,
                   help="checklist version (e.g. neurips-2024); detected from the paper by default")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--out", metavar="DIR", default=None, help=f"write {CHECK_JSON} and an HTML report here")
    p.add_argument("--dry-run", action="store_true",
                   help="print the calls, tokens (prompt, cached, completion) and cost the run would spend, "
                        "without sending anything")
    p.add_argument("--root", metavar="FILE", default=None,
                   help="the main .tex file of a LaTeX folder or archive holding several papers")
    p.add_argument("--quiet", action="store_true",
                   help="no progress display; print the one summary line alone (C, the answers per state)")
    p.add_argument("--verbose", action="store_true",
                   help="print every answer's verdict, passage and review in a table, then the summary")
    add_assessor_args(p)
    add_limit_args(p)
    p.set_defaults(func=run)


def load(path: str, checklist: str | None, limits=None, root: str | None = None):
    from checklist_eval.reading.isolation import isolated_load_paper

    return isolated_load_paper(path, checklist=checklist, limits=limits, root=root)


def result_object(paper, assessments, assessor) -> CheckResult:
    """The JSON shape of a check, shared by ``--json`` and ``check.json``."""
    from checklist_eval.challenge.report import paper_records
    from checklist_eval.challenge.scoring import correctness
    from checklist_eval.summaries import CheckResult

    return CheckResult.of(paper, assessments, assessor=assessor.name, model=assessor.model,
                          correctness=float(correctness(paper_records(paper, assessments))), usage=assessor.usage)


async def _assess(assessor, paper, progress):
    try:
        with progress:
            progress.start_ticker()
            return await assessor.assess_paper(paper)
    finally:
        await assessor.aclose()


def run(args: argparse.Namespace) -> int:
    import asyncio
    import sys

    from checklist_eval.assessors import build_assessor
    from checklist_eval.assessors.base import with_assessor_warnings
    from checklist_eval.challenge.costplan import plan_papers, print_plan
    from checklist_eval.challenge.progress import RunProgress, wanted
    from checklist_eval.cli.common import body_parse_warning, output_folder
    from checklist_eval.cli.flags import assessor_config, parse_limits
    from checklist_eval.cli.output import emit

    output_folder(args.out)
    paper = load(args.path, args.checklist, parse_limits(args), args.root)
    thin = body_parse_warning(paper)
    if thin:  # stderr, so --json output stays one document; visible before any money is spent
        print(f"warning: {thin}", file=sys.stderr)
        paper = paper.model_copy(update={"warnings": [*paper.warnings, thin]})  # and in the result's warnings
    config = assessor_config(args)
    if args.dry_run:
        plan = plan_papers([(paper.source, paper)], config)
        return emit(plan, args.json, lambda: print_plan(plan), indent=2)
    assessor = build_assessor(config)
    progress = RunProgress(assessor, wanted(assessor, quiet=args.quiet or args.json))
    assessments = asyncio.run(_assess(assessor, paper, progress))
    paper = with_assessor_warnings(paper, assessor)
    result = result_object(paper, assessments, assessor)
    if args.out:
        write_outputs(args.out, paper, assessments, assessor, result)
    return emit(result, args.json, lambda: print_result(paper, assessments, result, args.out, usage=assessor.usage,
                                                        verbose=args.verbose, quiet=args.quiet),
                **CHECK_JSON_LAYOUT)


def write_outputs(out_dir: str, paper, assessments, assessor, result: CheckResult) -> None:
    from pathlib import Path

    from checklist_eval.challenge.report import write_paper_report
    from checklist_eval.cli.output import dump_json
    from checklist_eval.fsutil import atomic_write_text

    atomic_write_text(Path(out_dir) / CHECK_JSON, dump_json(result, **CHECK_JSON_LAYOUT) + "\n")
    write_paper_report(out_dir, paper, assessments, assessor=assessor.name, model=assessor.model,
                       usage=assessor.usage, prompt_version=assessor.prompt_version,
                       links=[("This report as JSON", CHECK_JSON)])  # written beside it, linked relatively


def _issues(review: str, limit: int = 2) -> str:
    from checklist_eval.models import SUGGESTIONS_HEADING, UNVERIFIABLE_HEADING

    lines = [ln.strip().removeprefix("- ") for ln in review.splitlines()
             if ln.strip() and ln.strip() not in (SUGGESTIONS_HEADING, UNVERIFIABLE_HEADING)]
    shown = lines[:limit]
    if len(lines) > limit:
        shown.append(f"(+{len(lines) - limit} more)")
    return "\n".join(shown)


def _state_cell(state: str) -> str:
    """The verdict cell of the table: the evidence state with its mark (unverified is neutral, no tick)."""
    from checklist_eval.challenge.headline import STATE_MARK, STATE_STYLE

    return f"[{STATE_STYLE[state]}]{STATE_MARK[state]} {state}[/{STATE_STYLE[state]}]"


def unverified_line(result: CheckResult) -> str:
    """How many answers are in each state, the unverified ones said to count as correct."""
    n = result.states
    return (f"Evidence: {n['supported']} supported by a passage of the paper, {n['unverified']} unverified (no"
            f" passage found either way; counted correct, but not checked: read them), {n['contradicted']}"
            " contradicted.")


def print_result(paper, assessments, result: CheckResult, out_dir: str | None, usage=None, *,
                 verbose: bool = False, quiet: bool = False) -> None:
    """The summary that fits 80x24 (``check_summary``); ``verbose``: the table and every note before it;
    ``quiet``: the summary line alone. ``usage``: the assessor's Usage, for its reasoning tokens and
    whether its cost is known."""
    from checklist_eval.challenge.report import paper_records
    from checklist_eval.cli.summary import print_summary, summary_line
    from checklist_eval.redact import terminal_console

    console = terminal_console()
    records = paper_records(paper, assessments)
    if quiet:
        console.print(summary_line(result, records), highlight=False, markup=False, soft_wrap=True)
        return
    if verbose:
        _print_details(console, paper, assessments, result, usage)
    print_summary(console, paper, result, records, out_dir, verbose=verbose, usage=usage)


def _print_details(console, paper, assessments, result: CheckResult, usage) -> None:
    """The table, C, and the notes the summary only counts (body, usage, hidden text, every warning)."""
    from rich.markup import escape

    console.print(_verdict_table(paper, assessments))
    n_ok = sum(1 for it in result.items if it.correct)
    console.print(f"Correctness C = {result.C:.3f} ({n_ok} of {len(result.items)} answers judged "
                  f"correct; assessor {result.assessor}{' / ' + result.model if result.model else ''})",
                  highlight=False, markup=False)
    console.print(unverified_line(result), highlight=False, markup=False)
    _print_body_notes(console, paper, result)
    _print_usage(console, result, usage)
    if paper.hidden_text:
        from checklist_eval.assessors.evidence.manipulation import describe

        console.print("[red]Hidden text[/red] (a reader cannot see it; in a PDF it was removed before assessment):")
        for run in paper.hidden_text:
            console.print(f"  - {escape(describe(run))}", highlight=False)
    for w in result.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(str(w))}", highlight=False)
    console.print()


def _verdict_table(paper, assessments):
    """One row a question: its answer, the verdict's state, p_correct and the review's top issues."""
    from rich.markup import escape
    from rich.table import Table

    from checklist_eval.models import State

    titles = {it.id: it.title for it in paper.checklist.items}
    table = Table(title=escape(f"{paper.title or paper.source} — checklist {paper.checklist.id}"), show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("question")
    table.add_column("answer")
    table.add_column("verdict", justify="center")
    table.add_column("p", justify="right")
    table.add_column("top issues", overflow="fold")
    for a in assessments:
        verdict = _state_cell((a.state or State.UNVERIFIED).value)
        answer = a.answer.value if a.answer is not None else "—"
        # Reviews and titles quote "[Yes]"-style text, which rich would read as markup: escape it.
        table.add_row(escape(a.question_id), escape(titles.get(a.question_id, "")), answer, verdict,
                      f"{a.p_correct:.2f}", escape(_issues(a.review)))
    return table


def _print_body_notes(console, paper, result: CheckResult) -> None:
    """The body's size, and what the assessor could not read of it (cut to the context, or absent)."""
    console.print(f"Paper body: {len(paper.body)} characters", highlight=False, markup=False)
    cut = sorted(it.context_share for it in result.items if it.context_share is not None and it.context_share < 1)
    if cut:
        console.print(f"The paper outgrew the model's context: for {len(cut)} of {len(result.items)} answers the "
                      f"model read only the passages most relevant to the question ({cut[len(cut) // 2]:.0%} of "
                      f"the body at the median, {cut[0]:.0%} at least).", highlight=False, markup=False)
    if not paper.body.strip():
        console.print(f"{result.states['unverified']} of {len(result.items)} answers could not be checked: only the"
                      " checklist was read (no paper body), so nothing could support or contradict what they"
                      " claim beyond the checklist itself.", highlight=False, markup=False)


def _print_usage(console, result: CheckResult, usage) -> None:
    """Calls, tokens and cost of a run that called a model (nothing for the offline assessor)."""
    if result.usage.calls:
        from checklist_eval.cli.summary import usage_text

        console.print(usage_text(result, usage), highlight=False, markup=False, soft_wrap=True)
