"""``checklist-eval parse PATH``: read a paper's checklist and show it (a table, or JSON)."""

from __future__ import annotations

import argparse

from checklist_eval.cli.flags import add_limit_args


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "parse",
        help="read the checklist out of a paper (LaTeX file/folder/zip/tar.gz or PDF)",
        description="Read the checklist answers and justifications out of a paper.",
    )
    p.add_argument("path", metavar="PATH", help=".tex file, project folder, .zip, .tar.gz/.tgz, or .pdf")
    p.add_argument("--checklist", metavar="ID", help="checklist version (default: auto-detect), e.g. neurips-2025")
    p.add_argument("--questions", metavar="FILE", help="your own question-set JSON instead of a bundled version")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--with-body", action="store_true", help="with --json: include the paper body text")
    p.add_argument("--root", metavar="FILE", default=None,
                   help="the main .tex file of a LaTeX folder or archive holding several papers")
    add_limit_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from checklist_eval.cli.flags import parse_limits
    from checklist_eval.cli.output import emit
    from checklist_eval.reading.isolation import isolated_load_paper
    from checklist_eval.summaries import ParseDocument

    paper = isolated_load_paper(args.path, checklist=args.checklist, spec_file=args.questions,
                                limits=parse_limits(args), root=args.root)
    doc = ParseDocument.of(paper, with_body=args.with_body, tex=args.tex)
    return emit(doc, args.json, lambda: _print_table(paper), indent=2, ensure_ascii=False)




def _print_table(paper) -> None:
    from rich.markup import escape
    from rich.table import Table

    from checklist_eval.models import READER_NAMES
    from checklist_eval.redact import terminal_console

    console = terminal_console()
    filled = sum(1 for it in paper.checklist.items if it.answer is not None)  # TODO counts: the box is filled
    table = Table(
        title=escape(f"{paper.title or paper.source} — {paper.checklist.id} "
                     f"({filled}/{len(paper.checklist.items)} answered)"),
        show_lines=False,
    )
    table.add_column("id", no_wrap=True)
    table.add_column("question")
    table.add_column("answer", no_wrap=True)
    table.add_column("justification")
    styles = {"Yes": "green", "No": "red", "NA": "yellow", "TODO": "magenta"}
    for it in paper.checklist.items:
        answer = it.answer.value if it.answer else "—"
        just = it.justification or ""
        if len(just) > 160:
            just = just[:157] + "..."
        table.add_row(escape(it.id), escape(it.title), f"[{styles.get(answer, 'dim')}]{answer}[/]", escape(just))
    console.print(table)
    console.print(f"body: {len(paper.body)} characters, {len(paper.sections)} headings, {len(paper.anchors)} anchors")
    console.print(f"read by: {READER_NAMES.get(paper.reader or '', paper.reader)}", markup=False, highlight=False)
    from checklist_eval.cli.common import body_warning

    thin = body_warning(paper)
    if thin:
        console.print("warning: " + thin, style="yellow", markup=False, highlight=False)
    for w in paper.warnings:
        console.print(
            f"warning: {w}", style="yellow", markup=False, highlight=False
        )
