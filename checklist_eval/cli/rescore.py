"""``checklist-eval rescore RECORDS [--overrides FILE] [--json]``: scores from a ledger, no model."""

from __future__ import annotations

import argparse

MAX_NAMED = 8  # submissions whose S did not move, named one by one


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
    # Only the records the decisions name are kept beside the scores: memory stays flat in submissions.
    named = _named(args.overrides)
    before = scored_submissions(args.records, None, named, quiet=True) if args.overrides else None
    added: set = set()
    if args.overrides and folder is not None:
        # On a results folder (or an export beside its database) the decisions are kept in results.sqlite,
        # tied to the answers they were decided on, and the folder is exported again: every file and page
        # shows the same scores after. The scores shown then are the database's, the decisions applied.
        added = {d.key for d in ResultsFolder.open(folder).record_appeals(args.overrides)}
        scored = scored_submissions(args.records, None, named)
    else:
        scored = scored_submissions(args.records, args.overrides, named)
    scores = [score for score, _records in scored]
    report = RescoreReport(submissions=[s.public() for s in scores])
    if before is not None:
        report = _with_changes(report, args.overrides, before, scored, added)

    def text() -> None:
        from checklist_eval.challenge.report import print_scores_table
        from checklist_eval.redact import terminal_console

        console = terminal_console()
        print_scores_table(console, scores, title=f"Scores from {args.records}")
        if before is not None:
            _print_changes(console, report, args.overrides, (_by_key(before), _by_key(scored)),
                           kept=folder is not None)

    return emit(report, args.json, text)


def _named(overrides: str | None):
    """summarize(score, records) -> (score, the records of the overrides file's rows, by key)."""
    from checklist_eval.challenge.results.appeals import decided_keys

    keys = set(decided_keys(overrides)) if overrides else set()

    def keep(score, records):
        return score, {r.key: r for r in records if r.key in keys}
    return keep


def _by_key(scored: list) -> dict:
    return {k: r for _score, recs in scored for k, r in recs.items()}


def _with_changes(report, overrides: str, before: list, scored: list, added: set):
    from checklist_eval.challenge.results.appeals import decided_keys, outcomes
    from checklist_eval.challenge.scoring import AppealedRescoreReport, ScoreMove

    s_before = {s.submission_id: s.S for s, _ in before}
    recs_before, after = _by_key(before), _by_key(scored)
    moves = [ScoreMove(submission_id=s.submission_id, S_before=s_before[s.submission_id], S=s.S,
                       moved=s_before[s.submission_id] != s.S)
             for s, _ in scored if s.submission_id in s_before]
    return AppealedRescoreReport(submissions=report.submissions, moves=moves,
                                 appeals=outcomes(decided_keys(overrides), recs_before, after, added))


def _print_changes(console, report, overrides: str, records: tuple[dict, dict], *, kept: bool) -> None:
    """What each decision did, then which scores moved and which did not."""
    from pathlib import Path

    from checklist_eval.challenge.results.appeals import outcome_line

    def say(line: str) -> None:
        console.print(line, highlight=False, markup=False, soft_wrap=True)  # a line a script can grep

    say(f"Decisions of {Path(overrides).name}:")
    for o in report.appeals:
        key = (o.submission_id, o.role, o.question_id)
        say("  " + outcome_line(o, records[0].get(key), records[1].get(key), kept))
    moved = [m for m in report.moves if m.moved]
    for m in moved:
        say(f"S moved: {m.submission_id} {m.S_before:.4f} \u2192 {m.S:.4f}")
    still = [m for m in report.moves if not m.moved]
    if still:  # a 300-submission batch: the first few named, the rest counted
        more = f" and {len(still) - MAX_NAMED} more" if len(still) > MAX_NAMED else ""
        say("S did not move: " + ", ".join(f"{m.submission_id} {m.S:.4f}" for m in still[:MAX_NAMED]) + more)
    if not moved:
        say("No score moved.")
