"""``checklist-eval validate SUBMISSION``: naming, roles, parseability, shared checklist version."""

from __future__ import annotations

import argparse

from checklist_eval.cli.flags import add_limit_args


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "validate",
        help="check a submission folder or .zip before it is scored",
        description=(
            "Check a submission: papers named genuine_*, adversarial_*, truth_adversarial_* (each a .tex, "
            "a LaTeX project folder, a .zip/.tar.gz project or a PDF); exactly one G, and A only with T "
            "(cases G, GT, GAT); every paper parses to a checklist and has a body (a checklist-only .tex "
            "cannot be judged); A and T share a checklist version. "
            "Exit 0 with a summary when valid, 2 with one line naming the problem otherwise."
        ),
    )
    p.add_argument("submission", help="submission folder or .zip")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_limit_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from checklist_eval.challenge.submissions import load_submission, open_submission
    from checklist_eval.cli.common import has_no_body
    from checklist_eval.cli.flags import parse_limits
    from checklist_eval.cli.output import emit
    from checklist_eval.errors import InputError
    from checklist_eval.reading.isolation import ParserPool
    from checklist_eval.summaries import ValidationSummary

    with ParserPool(1, parse_limits(args)) as pool:
        loaded = load_submission(open_submission(args.submission), loader=pool)
    for role, paper in loaded.papers.items():
        if has_no_body(paper):
            raise InputError(paper.source, f"paper {role} has no body ({len(paper.body)} characters): a "
                                           "checklist alone cannot be judged; submit the whole paper")
    summary = ValidationSummary.of(loaded.id, loaded.case, loaded.papers, loaded.warnings)
    return emit(summary, args.json, lambda: _print_summary(summary))


def _print_summary(summary) -> None:
    from rich.markup import escape
    from rich.table import Table

    from checklist_eval.redact import terminal_console

    console = terminal_console()
    table = Table(title=escape(f"{summary.submission_id}: valid, case {summary.case}"))
    for col in ("role", "source", "checklist", "questions", "answers", "body", "warnings"):
        table.add_column(col)
    for role, info in summary.papers.items():
        answers = ", ".join(f"{k} {v}" for k, v in sorted(info.answers.items()))
        table.add_row(escape(role), escape(info.source), escape(info.checklist), str(info.questions),
                      answers, f"{info.body_chars:,} chars", str(len(info.warnings)))
    console.print(table)
    for w in summary.warnings:
        console.print(f"warning: {w}", highlight=False, markup=False, soft_wrap=True)
    for role, info in summary.papers.items():  # every warning in full, not only their count
        for w in info.warnings:
            console.print(f"warning ({role}): {w}", highlight=False, markup=False, soft_wrap=True)
