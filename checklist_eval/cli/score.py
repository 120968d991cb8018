"""``checklist-eval score SUBMISSION [assessor flags] [--out DIR] [--json]``: one submission."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    from checklist_eval.cli.flags import add_assessor_args, add_limit_args

    p = subparsers.add_parser(
        "score",
        help="assess and score one submission (G, GT or GAT)",
        description=(
            "Assess every paper of one submission and compute C_G, C_A, C_T, R and S. With --out, write "
            "result.json, report.html, records.csv and records.jsonl there (atomically)."
        ),
    )
    p.add_argument("submission", help="submission folder or .zip")
    p.add_argument("--out", metavar="DIR", help="folder for the result, report and records")
    p.add_argument(
        "--json",
        action="store_true",
        help="print {submission_id, case, C_G, C_A, C_T, R, S, warnings, usage}",
    )
    p.add_argument("--dry-run", action="store_true",
                   help="print the calls, tokens (prompt, cached, completion) and cost per paper and in "
                        "total, without sending anything")
    p.add_argument("--quiet", action="store_true", help="no progress display; print the one score line alone")
    p.add_argument("--verbose", action="store_true",
                   help="print the scores table and the A vs T table per question, then the summary")
    add_assessor_args(p)
    from checklist_eval.cli.via import add_via_args

    add_via_args(p)
    add_limit_args(p)
    p.set_defaults(func=run)


async def _score(args: argparse.Namespace):
    from checklist_eval.challenge.batch import score_path
    from checklist_eval.challenge.progress import RunProgress, wanted
    from checklist_eval.cli.flags import assessor_from_args, parse_limits
    from checklist_eval.reading.isolation import ParserPool

    if getattr(args, "via", "online") != "online":
        from checklist_eval.cli.via import score_via

        return await score_via(args)
    assessor = assessor_from_args(args)
    try:
        with ParserPool(1, parse_limits(args)) as pool, \
                RunProgress(assessor, wanted(assessor, quiet=args.quiet or args.json)) as progress:
            progress.start_ticker()
            return await score_path(args.submission, assessor, loader=pool)
    finally:
        await assessor.aclose()


def dry_run(args: argparse.Namespace) -> int:
    from checklist_eval.challenge.costplan import plan_papers, print_plan
    from checklist_eval.challenge.submissions import load_submission, open_submission
    from checklist_eval.cli.flags import assessor_config, parse_limits
    from checklist_eval.cli.output import emit
    from checklist_eval.models import ROLES
    from checklist_eval.reading.isolation import ParserPool

    with ParserPool(1, parse_limits(args)) as pool:
        loaded = load_submission(open_submission(args.submission), loader=pool)
    papers = sorted(loaded.papers.items(), key=lambda kv: ROLES.index(kv[0]))
    plan = plan_papers([(f"{loaded.id}/{role}", paper) for role, paper in papers], assessor_config(args))
    return emit(plan, args.json, lambda: print_plan(plan), indent=2)


def run(args: argparse.Namespace) -> int:
    import asyncio
    from pathlib import Path

    from checklist_eval.challenge.results.folder import write_score_folder
    from checklist_eval.challenge.results.lock import refuse_batch_folder, refuse_out_inside
    from checklist_eval.cli.common import output_folder
    from checklist_eval.cli.output import emit

    output_folder(args.out)  # unusable: exit 2 now, before any request is paid for
    if args.out:
        refuse_out_inside(args.out, args.submission, "the submission")
        refuse_batch_folder(args.out)
    if args.dry_run:
        return dry_run(args)
    result = asyncio.run(_score(args))
    if result is None:  # --via jsonl / --submit-only: nothing scored yet
        return 0
    if args.out:
        write_score_folder(args.out, result, Path(args.submission))
    return emit(result.report(), args.json, lambda: _print_result(args, result))


def _print_result(args: argparse.Namespace, result) -> None:
    """The summary that fits 80 columns (``cli.summary``); the tables before it with --verbose, the score
    line alone with --quiet."""
    from checklist_eval.challenge.report import print_submission_summary
    from checklist_eval.cli.summary import print_score_summary, score_line
    from checklist_eval.redact import terminal_console

    console = terminal_console()
    if args.quiet:
        console.print(score_line(result.score), highlight=False, markup=False, soft_wrap=True)
        return
    if args.verbose:
        print_submission_summary(console, result.score, result.records)
        console.print()
    for w in result.warnings:
        console.print(f"warning: {w}", highlight=False, markup=False)
    print_score_summary(console, result.score, result.records, args.out, verbose=args.verbose, usage=result.usage)
