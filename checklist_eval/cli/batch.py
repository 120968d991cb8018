"""``checklist-eval batch ROOT --out RESULTS [assessor flags] [--jobs N]``: a whole challenge."""

from __future__ import annotations

import argparse
from pathlib import Path

from checklist_eval.challenge.results.layout import ResultsLayout
from checklist_eval.cli.numbers import number


def register(subparsers: argparse._SubParsersAction) -> None:
    from checklist_eval.cli.flags import add_assessor_args, add_limit_args

    p = subparsers.add_parser(
        "batch",
        help="score every submission under ROOT (organizers); resumable",
        description=(
            "Score every submission (sub-folder or .zip) under ROOT with one shared assessor: one "
            "request scheduler and one cache (default RESULTS/cache.sqlite) for the whole batch. Writes "
            "RESULTS/submissions/<id>/{result.json,report.html}, records.csv, records.jsonl, scores.csv, "
            "summary.json and failures.jsonl, each atomically (the records grow as submissions finish and "
            "are rewritten in submission order at the end). Rerunning after an interrupt skips "
            "finished submissions and repeats no model request. A failing submission is recorded in "
            "failures.jsonl and does not stop the others; exit 0 when every submission was scored, 4 when "
            "the batch ran but some failed, 3 when --max-cost stopped it, 2 when ROOT is unusable."
        ),
    )
    p.add_argument("root", help="folder of submissions (sub-folders or .zip files)")
    p.add_argument("--out", required=True, metavar="RESULTS", help="results folder")
    p.add_argument("--jobs", type=number("--jobs", kind=int, low=1, high=1024), default=4, metavar="N",
                   help="submissions parsed and in flight at once (default 4); requests are bounded "
                        "by the assessor's --concurrency/--rpm")
    p.add_argument("--quiet", action="store_true", help="no progress bar; no table of the best submissions")
    p.add_argument("--verbose", action="store_true", help="every scored submission with all its scores")
    p.add_argument("--json", action="store_true", help="print summary.json's counts instead of tables")
    p.add_argument("--dry-run", action="store_true",
                   help="print the calls, tokens (prompt, cached, completion) and cost per paper and in "
                        "total, without sending anything or writing RESULTS")
    add_assessor_args(p)
    from checklist_eval.cli.via import add_via_args

    add_via_args(p, default=None)
    from checklist_eval.cli.resume import add_resume_args

    add_resume_args(p)
    add_limit_args(p)
    p.set_defaults(func=run)


async def _run(args: argparse.Namespace, progress_enabled: bool):

    from checklist_eval.challenge.batch import run_batch
    from checklist_eval.challenge.progress import RunProgress
    from checklist_eval.challenge.results.lock import prepare_out
    from checklist_eval.challenge.submissions import find_submissions
    from checklist_eval.cli.flags import assessor_from_args, parse_limits

    out = Path(args.out)
    find_submissions(args.root)  # fail fast (exit 2) before building an assessor or a cache
    _note_results_folders(args.root)
    cache = args.cache if getattr(args, "cache", None) else ResultsLayout(out).cache
    prepare_out(out)  # the batch itself takes the folder's lock
    settings, drain = _settle(args, out)
    if args.via != "online" or drain:
        from checklist_eval.cli.via import run_batch_via

        return await run_batch_via(args, out, Path(cache), quiet=args.quiet or args.json, settings=settings,
                                   drain=drain)
    assessor = assessor_from_args(args, cache_path=cache)
    try:
        plain = not args.quiet and not args.json  # one line per submission where no live line is drawn
        with RunProgress(assessor, progress_enabled, unit="submissions", plain=plain) as progress:
            progress.start_ticker()
            return await run_batch(args.root, out, assessor, jobs=args.jobs, on_progress=progress.event,
                                   parse_limits=parse_limits(args), settings=settings)
    finally:
        await assessor.aclose()


def _note_results_folders(root: str) -> None:
    import sys

    from checklist_eval.challenge.submissions import results_folders_in
    from checklist_eval.redact import one_line

    for folder in results_folders_in(root):
        print(one_line(f"skipped {folder}: a results folder, not a submission"), file=sys.stderr)


def _settle(args: argparse.Namespace, out: Path):
    """(the run's settings, whether it drains a batch-api run's jobs): checked against the folder's
    recorded settings, then recorded, before any work."""
    from checklist_eval.challenge.results.settings import write_settings
    from checklist_eval.cli.resume import drains_batch_jobs, settle_run

    settings, recorded = settle_run(args, out)
    drain = drains_batch_jobs(settings, recorded)
    write_settings(out, settings)
    return settings, drain


def run(args: argparse.Namespace) -> int:
    import asyncio
    import sys

    from checklist_eval.challenge.results.lock import refuse_out_inside
    from checklist_eval.cli.common import output_folder
    from checklist_eval.cli.output import emit

    output_folder(args.out)
    refuse_out_inside(args.out, args.root, "ROOT")
    if args.dry_run:
        return dry_run(args)
    # every assessor: a heuristic batch of many PDFs takes minutes of parsing too
    enabled = not args.quiet and not args.json and sys.stderr.isatty()
    outcome = asyncio.run(_run(args, enabled))
    if outcome is None:  # --via jsonl / --submit-only: requests written or submitted, nothing scored yet
        return 0
    code = emit(outcome.counts(), args.json, lambda: _print_outcome(args, outcome))
    return exit_code(outcome, code)


def exit_code(outcome, printed: int) -> int:
    """4 when the batch finished but some submissions failed: cron and CI see it without reading files."""
    from checklist_eval.errors import EXIT_SOME_FAILED

    return EXIT_SOME_FAILED if printed == 0 and outcome.failures else printed


def _print_outcome(args: argparse.Namespace, outcome) -> None:
    from checklist_eval.cli.summary import print_batch_summary
    from checklist_eval.redact import terminal_console

    print_batch_summary(terminal_console(), outcome, args.root, args.out, verbose=args.verbose, quiet=args.quiet)


def dry_run(args: argparse.Namespace) -> int:
    """The plan of the whole batch: every submission parsed (none assessed); one that does not parse is
    listed with its reason, as the real run would record it."""
    from checklist_eval.challenge.batch import one_line
    from checklist_eval.challenge.costplan import plan_papers, print_plan
    from checklist_eval.challenge.results.leaderboard import Failure
    from checklist_eval.challenge.submissions import (
        find_submissions,
        load_submission,
        open_submission,
        submission_id_of,
    )
    from checklist_eval.cli.flags import assessor_config, parse_limits
    from checklist_eval.cli.output import emit
    from checklist_eval.reading.isolation import ParserPool

    labelled, failures = [], []
    with ParserPool(1, parse_limits(args)) as pool:
        for path in find_submissions(args.root):
            sid = submission_id_of(path)
            try:
                loaded = load_submission(open_submission(path), submission_id=sid, loader=pool)
            except Exception as err:  # the real run records it and goes on; so does its plan
                failures.append(Failure(submission_id=sid, source=str(path), error=one_line(err)))
                continue
            labelled += [(f"{sid}/{role}", paper) for role, paper in sorted(loaded.papers.items(), key=_role_order)]
    plan = plan_papers(labelled, assessor_config(args, args.cache or ResultsLayout(args.out).cache))
    plan.failures = failures
    return emit(plan, args.json, lambda: print_plan(plan), indent=2)


def _role_order(item) -> int:
    from checklist_eval.models import ROLES

    return ROLES.index(item[0])
