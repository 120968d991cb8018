"""``checklist-eval rescore RECORDS [--overrides FILE] [--json]``: scores from a ledger, no model."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    import textwrap

    from checklist_eval.challenge.results.appeals import OVERRIDES_HELP

    p = subparsers.add_parser(
        "rescore",
        help="recompute all scores from an assessment records file (CSV or JSONL), without any model",
        description="\n\n".join(
            textwrap.fill(par, 88)
            for par in (
                "Recompute C_G, C_A, C_T, R and S of every submission in an assessment records file "
                "(records.csv or records.jsonl written by score or batch: one row per submission_id, "
                "role G/A/T and question_id with answer Yes/No/NA/TODO or empty for missing, and "
                "correct 0/1), optionally after applying appeal decisions. No model is called.",
                OVERRIDES_HELP,
            )
        ),
        epilog=(
            "Example overrides file:\n"
            "  submission_id,role,question_id,correct,note\n"
            "  team42,A,7,0,appeal: error bars are not defined\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("records", metavar="RECORDS_OR_RESULTS",
                   help="records.csv or records.jsonl, or a batch results folder holding one")
    p.add_argument("--overrides", metavar="FILE", help="CSV of appeal decisions (see above)")
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"submissions": [{submission_id, case, C_G, C_A, C_T, R, S}]} (full precision)',
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    from checklist_eval.challenge.results.folder import ResultsFolder, folder_of, scored_submissions
    from checklist_eval.challenge.scoring import RescoreReport
    from checklist_eval.cli.output import emit

    folder = folder_of(args.records)
    if args.overrides and folder is not None:
        # On a results folder (or an export beside its database) the decisions are kept in results.sqlite,
        # tied to the answers they were decided on, and the folder is exported again: every file and page
        # shows the same scores after. The scores shown then are the database's, the decisions applied.
        ResultsFolder.open(folder).record_appeals(args.overrides)
        scores = scored_submissions(args.records, None, lambda score, _records: score)
    else:
        scores = scored_submissions(args.records, args.overrides, lambda score, _records: score)

    def text() -> None:
        from checklist_eval.challenge.report import print_scores_table
        from checklist_eval.redact import terminal_console

        print_scores_table(terminal_console(), scores, title=f"Scores from {args.records}")

    return emit(RescoreReport(submissions=[s.public() for s in scores]), args.json, text)
