"""``checklist-eval batch ROOT --out RESULTS [assessor flags] [--jobs N]``: a whole challenge."""

from __future__ import annotations

import argparse
from pathlib import Path

from checklist_eval.assessors.ledger import format_cost


def register(subparsers: argparse._SubParsersAction) -> None:
    from checklist_eval.assessors import add_assessor_args
    from checklist_eval.isolation import add_limit_args

    p = subparsers.add_parser(
        "batch",
        help="score every submission under ROOT (organizers); resumable",
        description=(
            "Score every submission (sub-folder or .zip) under ROOT with one shared assessor: one "
            "request scheduler and one cache (default RESULTS/cache.sqlite) for the whole batch. Writes "
            "RESULTS/submissions/<id>/{result.json,report.html}, records.csv, records.jsonl, scores.csv, "
            "summary.json and failures.jsonl, each atomically. Rerunning after an interrupt skips "
            "finished submissions and repeats no model request. A failing submission is recorded in "
            "failures.jsonl and does not stop the others; exit 0 when the batch ran, 2 when ROOT is "
            "unusable."
        ),
    )
    p.add_argument("root", help="folder of submissions (sub-folders or .zip files)")
    p.add_argument("--out", required=True, metavar="RESULTS", help="results folder")
    p.add_argument("--jobs", type=int, default=4, metavar="N",
                   help="submissions parsed and in flight at once (default 4); requests are bounded "
                        "by the assessor's --concurrency/--rpm")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print summary.json's counts instead of tables")
    add_assessor_args(p)
    add_limit_args(p)
    p.set_defaults(func=run)


class _Progress:
    """Rich progress bar fed by batch events plus a ticker reading the assessor's running usage."""

    def __init__(self, assessor, enabled: bool):
        self.assessor = assessor
        self.enabled = enabled
        self.bar = None
        self.task = None

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("submissions"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(), transient=False, console=Console(stderr=True),
            )
            self.bar.__enter__()
            self.task = self.bar.add_task("batch", total=None, stats="")
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.refresh()
            self.bar.__exit__(*exc)

    def refresh(self) -> None:
        if self.bar is None:
            return
        u = self.assessor.usage
        self.bar.update(
            self.task,
            stats=f"calls {u.calls}  tokens {u.prompt_tokens + u.completion_tokens}  {format_cost(u)}",
        )

    def event(self, kind: str, done: int, total: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, total=total, completed=done)
            self.refresh()

    async def tick(self) -> None:
        import asyncio

        while True:
            self.refresh()
            await asyncio.sleep(0.25)


async def _run(args: argparse.Namespace, progress_enabled: bool):
    import asyncio

    from checklist_eval.assessors import assessor_from_args
    from checklist_eval.batch import run_batch
    from checklist_eval.isolation import ParseLimits
    from checklist_eval.submissions import find_submissions

    out = Path(args.out)
    find_submissions(args.root)  # fail fast (exit 2) before building an assessor or a cache
    cache = args.cache if getattr(args, "cache", None) else out / "cache.sqlite"
    out.mkdir(parents=True, exist_ok=True)
    assessor = assessor_from_args(args, cache_path=cache)
    try:
        with _Progress(assessor, progress_enabled) as progress:
            ticker = asyncio.ensure_future(progress.tick())
            try:
                return await run_batch(args.root, out, assessor, jobs=args.jobs, on_progress=progress.event,
                                       parse_limits=ParseLimits.from_args(args))
            finally:
                ticker.cancel()
    finally:
        await assessor.aclose()


def run(args: argparse.Namespace) -> int:
    import asyncio
    import json
    import sys

    from rich.console import Console

    enabled = not args.quiet and not args.json and sys.stderr.isatty()
    outcome = asyncio.run(_run(args, enabled))
    u = outcome.usage
    counts = {
        "submissions": len(outcome.results) + len(outcome.failures),
        "scored": outcome.scored,
        "resumed": outcome.resumed,
        "failed": len(outcome.failures),
        "wall_s": outcome.wall_s,
        "usage": u.model_dump(),
        "summary": str(outcome.summary_path),
    }
    if args.json:
        print(json.dumps(counts))
        return 0
    from checklist_eval.report import print_scores_table

    console = Console()
    if not args.quiet:
        print_scores_table(console, [r.score for r in outcome.results], title=f"Batch {args.root}")
    console.print(
        f"{counts['submissions']} submissions: {outcome.scored} scored, {outcome.resumed} already done, "
        f"{len(outcome.failures)} failed; calls {u.calls}, tokens {u.prompt_tokens + u.completion_tokens}, "
        f"cost {format_cost(u)}; {outcome.wall_s:.1f} s",
        highlight=False,
    )
    for f in outcome.failures:
        console.print(f"failed {f['submission_id']}: {f['error']}", highlight=False, markup=False)
    console.print(f"results in {args.out} (failures in {Path(args.out) / 'failures.jsonl'})", highlight=False)
    return 0
