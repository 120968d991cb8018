"""``checklist-eval leaderboard RESULTS --csv FILE [--json]``: ranked scores of a batch."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "leaderboard",
        help="rank the submissions of a batch results folder (or records file) by S",
        description=(
            "Build the leaderboard from a batch's assessment records: columns rank, submission_id, case, "
            "C_G, C_A, C_T, R, S, questions, assessor, model, prompt_version, scored_at, manipulation. Ranked by S "
            "(descending); equal S share a rank (1, 2, 2, 4), ordered by C_G within a tie."
        ),
    )
    p.add_argument("results", help="batch results folder (with records.csv) or a records .csv/.jsonl")
    p.add_argument("--csv", metavar="FILE", help="write the leaderboard CSV here (atomically)")
    p.add_argument("--overrides", metavar="FILE", help="appeal decisions CSV (see `rescore --help`)")
    p.add_argument("--json", action="store_true", help="print the rows as a JSON list of objects")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from checklist_eval.export import build_leaderboard, leaderboard_csv_text, leaderboard_json
    from checklist_eval.fsutil import atomic_write_text

    df = build_leaderboard(args.results, overrides=args.overrides)
    if args.csv:
        atomic_write_text(args.csv, leaderboard_csv_text(df))
    if args.json:
        print(json.dumps(leaderboard_json(df)))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Leaderboard")
    for col in ("rank", "submission", "case", "C_G", "C_A", "C_T", "R", "S"):
        table.add_column(col, justify="right" if col not in ("submission", "case") else "left")
    for row in leaderboard_json(df):
        table.add_row(
            str(row["rank"]), str(row["submission_id"]), str(row["case"]),
            *(f"{row[k]:.3f}" for k in ("C_G", "C_A", "C_T", "R", "S")),
        )
    console = Console()
    console.print(table)
    for row in leaderboard_json(df):
        if row.get("manipulation"):
            console.print(f"[yellow]manipulation[/yellow] {row['submission_id']}: {row['manipulation']}",
                          markup=True, highlight=False)
    if args.csv:
        console.print(f"wrote {args.csv}", highlight=False)
    return 0
