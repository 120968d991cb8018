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
    p.add_argument("submission", help="submission folder or .zip, or a batch ROOT of them (each checked, "
                                      "one table; exit 4 when some are invalid)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_limit_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from checklist_eval.cli.flags import parse_limits
    from checklist_eval.cli.output import emit
    from checklist_eval.reading.isolation import ParserPool

    if _is_root(args.submission):
        return _run_root(args)
    with ParserPool(1, parse_limits(args)) as pool:
        summary = validate_one(args.submission, pool)
    return emit(summary, args.json, lambda: _print_summary(summary))


def validate_one(path, pool):
    """The ValidationSummary of one submission; InputError (one line) when it is not valid."""
    from checklist_eval.challenge.submissions import load_submission, open_submission
    from checklist_eval.cli.common import has_no_body
    from checklist_eval.errors import InputError
    from checklist_eval.summaries import ValidationSummary

    loaded = load_submission(open_submission(path), loader=pool)
    for role, paper in loaded.papers.items():
        if has_no_body(paper):
            raise InputError(paper.source, f"paper {role} has no body ({len(paper.body)} characters): a "
                                           "checklist alone cannot be judged; submit the whole paper")
    return ValidationSummary.of(loaded.id, loaded.case, loaded.papers, loaded.warnings)


def _is_root(path: str) -> bool:
    """A folder of submissions (sub-folders or .zip files), holding no paper itself."""
    from pathlib import Path

    from checklist_eval.challenge.submissions import find_submissions, role_of
    from checklist_eval.errors import InputError

    p = Path(path)
    if not p.is_dir() or any(role_of(child.name) for child in p.iterdir()):
        return False
    try:
        return bool(find_submissions(p))
    except InputError:
        return False


def _run_root(args: argparse.Namespace) -> int:
    from checklist_eval.challenge.batch import one_line, result_ids
    from checklist_eval.challenge.submissions import find_submissions
    from checklist_eval.cli.flags import parse_limits
    from checklist_eval.cli.output import emit
    from checklist_eval.errors import EXIT_SOME_FAILED, ChecklistEvalError
    from checklist_eval.reading.isolation import ParserPool
    from checklist_eval.summaries import RootEntry, RootValidation

    paths = find_submissions(args.submission)
    ids = result_ids(paths)
    entries = []
    with ParserPool(1, parse_limits(args)) as pool:
        for path in paths:
            try:
                s = validate_one(path, pool)
                entries.append(RootEntry(submission_id=ids[path], source=str(path), valid=True, case=s.case,
                                         warnings=len(s.warnings) + sum(len(p.warnings) for p in s.papers.values()),
                                         problem=None))
            except ChecklistEvalError as err:  # one bad submission never stops the others
                entries.append(RootEntry(submission_id=ids[path], source=str(path), valid=False, case=None,
                                         warnings=0, problem=one_line(err)))
    invalid = sum(not e.valid for e in entries)
    doc = RootValidation(root=str(args.submission), valid=len(entries) - invalid, invalid=invalid, submissions=entries)
    code = emit(doc, args.json, lambda: _print_root(doc))
    return EXIT_SOME_FAILED if code == 0 and invalid else code


def _print_root(doc) -> None:
    from rich.markup import escape
    from rich.table import Table

    from checklist_eval.redact import terminal_console

    console = terminal_console()
    table = Table(title=escape(f"{doc.root}: {doc.valid} valid, {doc.invalid} invalid"))
    for col in ("submission", "result", "case", "warnings", "problem"):
        table.add_column(col, overflow="fold")
    for e in doc.submissions:
        table.add_row(escape(e.submission_id), "valid" if e.valid else "[red]invalid[/red]", e.case or "",
                      str(e.warnings), escape(e.problem or ""))
    console.print(table)


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
