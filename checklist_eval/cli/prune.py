"""``checklist-eval prune RESULTS [--json]``: remove the runs a results folder no longer shows."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    from checklist_eval.cli.common import results_command

    results_command(
        subparsers, "prune", run,
        help="remove the earlier runs of a results folder (the leaderboard's run stays)",
        description=(
            "A results folder keeps every run in RESULTS/results.sqlite: a rerun with new settings opens a new "
            "run and the earlier ones stay queryable. prune removes every run before the latest complete one "
            "(the one the leaderboard shows), and the interrupted ones after it; a run in progress is kept. "
            "Appeal decisions and the history of changes are never removed. Holds the folder's lock."
        ),
        results_help="batch results folder (or a score --out folder)",
        json_help='print {"kept": RUN, "removed": [RUN, ...]}',
    )


def run(args: argparse.Namespace) -> int:
    from checklist_eval.challenge.results.folder import prune
    from checklist_eval.cli.output import emit
    from checklist_eval.models import Model

    class Pruned(Model):
        kept: int
        removed: list[int]

    kept, removed = prune(args.results)
    done = Pruned(kept=kept, removed=removed)

    def text() -> None:
        gone = ", ".join(map(str, removed)) or "none"
        print(f"kept run {kept} of {args.results}; removed run(s): {gone}")

    return emit(done, args.json, text)
