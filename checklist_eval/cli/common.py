"""Checks every command shares, so each rule is written once: an output path that cannot be used,
and a paper whose body is too small to judge against; and the shape of a command over a results
folder."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from checklist_eval.errors import InputError

# Below this many characters of body the paper cannot support most verdicts: warn (``check``).
THIN_BODY_CHARS = 1000
# Below this there is no paper at all (a checklist-only .tex): ``validate`` refuses the submission.
NO_BODY_CHARS = 200


def output_folder(path: str | Path | None, flag: str = "--out") -> Path | None:
    """``path`` as a folder to write into, checked now (an existing file, a read-only place: exit 2, one
    line) but not created: the rule is ``results.lock.check_out``'s, written once."""
    if path is None:
        return None
    from checklist_eval.challenge.results.lock import check_out

    return check_out(path)


def output_file(path: str | Path | None, flag: str) -> Path | None:
    """``path`` as a file to (over)write; an existing folder is refused (exit 2, one line)."""
    if path is None:
        return None
    target = Path(path)
    if target.is_dir():
        raise InputError(target, f"{flag} must be a file, and this is an existing folder")
    return target


def body_warning(paper) -> str | None:
    """One line saying the paper's body is missing or too short to judge the answers, else None."""
    found = body_parse_warning(paper)
    return found.message if found else None


def body_parse_warning(paper):
    """The missing or thin body as a warning of kind ``no_body`` / ``thin_body``, else None."""
    from checklist_eval.models import ParseWarning, WarningKind

    n = len(paper.body)
    if n < NO_BODY_CHARS:
        return ParseWarning(kind=WarningKind.NO_BODY, location=paper.source, message=(
            f"{paper.source}: no paper body ({n} characters): only the checklist was read, so answers "
            "that point into the paper cannot be verified (give the whole paper, e.g. the folder "
            "holding main.tex)"))
    if n < THIN_BODY_CHARS:
        return ParseWarning(kind=WarningKind.THIN_BODY, location=paper.source, message=(
            f"{paper.source}: the paper body is only {n} characters: answers that point into the "
            "paper may not be verifiable"))
    return None


def has_no_body(paper) -> bool:
    return len(paper.body) < NO_BODY_CHARS


def results_command(subparsers: argparse._SubParsersAction, name: str, run: Callable[[argparse.Namespace], int],
                    *, help: str, description: str, results_help: str, json_help: str) -> argparse.ArgumentParser:
    """Register ``name``: a command over the results folder given as its positional ``results``, that
    prints text or, with ``--json``, JSON, and runs ``run``. The caller adds its own flags to the parser
    returned."""
    p = subparsers.add_parser(name, help=help, description=description)
    p.add_argument("results", help=results_help)
    p.add_argument("--json", action="store_true", help=json_help)
    p.set_defaults(func=run)
    return p
