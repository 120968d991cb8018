"""``checklist-eval leaderboard RESULTS --csv FILE [--json]``: ranked scores of a batch."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    from checklist_eval.cli.common import results_command

    p = results_command(
        subparsers, "leaderboard", run,
        help="rank the submissions of a batch results folder (or records file) by S",
        description=(
            "Build the leaderboard from a batch's assessment records: columns rank, submission_id, case, "
            "C_G, C_A, C_T, R, S, questions, assessor, model, prompt_version, scored_at, manipulation, status. "
            "Ranked by S (descending); equal S share a rank (1, 2, 2, 4), ordered by C_G within a tie. Submissions "
            "the batch could not score (failures.jsonl beside the records) follow without a rank, with status "
            "'failed: <reason>'."
        ),
        results_help="batch results folder (with records.csv) or a records .csv/.jsonl",
        json_help="print the ranked rows as a JSON list of objects (submissions not scored: on stderr)",
    )
    p.add_argument("--csv", metavar="FILE", help="write the leaderboard CSV here (atomically)")
    p.add_argument("--html", metavar="FILE",
                   help="write the leaderboard as an HTML page linking each submission's report (atomically)")
    p.add_argument("--overrides", metavar="FILE", help="appeal decisions CSV (see: checklist-eval rescore --help)")


def run(args: argparse.Namespace) -> int:
    import sys

    from pydantic import RootModel

    from checklist_eval.challenge.results.folder import build_leaderboard
    from checklist_eval.challenge.results.leaderboard import LeaderboardRow, leaderboard_csv_text
    from checklist_eval.cli.common import output_file
    from checklist_eval.cli.output import emit
    from checklist_eval.fsutil import atomic_write_text

    for flag, path in (("--csv", args.csv), ("--html", args.html)):
        output_file(path, flag)
    rows = build_leaderboard(args.results, overrides=args.overrides)
    if args.csv:
        atomic_write_text(args.csv, leaderboard_csv_text(rows))
    if args.html:
        _write_html(args, rows)
    # The JSON list stays the ranked rows (scripts sort and compare their scores); the submissions
    # that were not scored are named on stderr, and are rows of the CSV and the HTML page.
    ranked = RootModel[list[LeaderboardRow]]([r for r in rows if r.scored])
    status = emit(ranked, args.json, lambda: _print_table(args, rows))
    if args.json:
        for r in rows:
            if not r.scored:
                print(f"not scored: {r.submission_id}: {r.status}", file=sys.stderr)
    return status


def _print_table(args: argparse.Namespace, rows) -> None:
    from rich.markup import escape
    from rich.table import Table

    from checklist_eval.redact import terminal_console

    table = Table(title="Leaderboard")
    for col in ("rank", "submission", "case", "C_G", "C_A", "C_T", "R", "S"):
        table.add_column(col, justify="right" if col not in ("submission", "case") else "left")
    for row in rows:
        if row.scored:
            mark = " *" if row.appeals else ""  # an appeal decision stands on some of its answers
            table.add_row(str(row.rank), escape(row.submission_id) + mark, escape(str(row.case)),
                          *(f"{getattr(row, k):.3f}" for k in ("C_G", "C_A", "C_T", "R", "S")))
    console = terminal_console()
    console.print(table)
    for row in rows:
        if not row.scored:
            console.print(f"not scored: {row.submission_id}: {row.status}", highlight=False, markup=False)
    for row in rows:
        if row.manipulation:
            console.print(f"[yellow]manipulation[/yellow] {escape(row.submission_id)}: "
                          f"{escape(row.manipulation)}", markup=True, highlight=False)
    _print_appealed(console, args.results, rows)
    for path in (args.csv, args.html):
        if path:
            console.print(f"wrote {path}", highlight=False, markup=False)


def _print_appealed(console, results: str, rows) -> None:
    """The legend of the rows marked "*": which answers an appeal decided, and where every decision is."""
    from checklist_eval.challenge.results.folder import ResultsFolder, folder_of

    appealed = [f"{row.submission_id} ({row.appeals.replace(';', ', ')})" for row in rows if row.appeals]
    if not appealed:
        return
    folder = folder_of(results)
    page = ResultsFolder(folder).layout.appeals_html if folder is not None else None
    where = f"; every decision: {page}" if page is not None and page.is_file() else ""
    console.print(f"* appealed: {', '.join(appealed)}{where}", highlight=False, markup=False, soft_wrap=True)


def _write_html(args: argparse.Namespace, rows) -> None:
    from pathlib import Path

    from checklist_eval.challenge.leaderboard_page import appeals_link, page_rows, render_leaderboard, report_links
    from checklist_eval.fsutil import atomic_write_text

    given = Path(args.results)
    folder = given if given.is_dir() else given.parent  # a records file: the reports beside it
    links = report_links(folder, Path(args.html), [r.submission_id for r in rows])
    atomic_write_text(args.html, render_leaderboard(page_rows(rows), links,
                                                    appeals_href=appeals_link(folder, Path(args.html))))
