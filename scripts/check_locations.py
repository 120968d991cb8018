"""Does every answer's ``file:line`` show its answer macro? For each LaTeX paper given (a folder or a
.tex file; every answered item's line is read in its file
as written and must hold an answer mark (``\\answerYes`` and its siblings, or a bracketed ``[Yes]``)
of the answer read. By default: the 42 papers of ../shared/corpus/papers-latex and the fixtures.
Prints one row per paper with a wrong location, then the totals.

    python scripts/check_locations.py [PATH ...]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from checklist_eval.errors import InputError
from checklist_eval.reading.parsing import load_paper

ROOT = Path(__file__).resolve().parent.parent
SHARED_PAPERS = ROOT.parent / "shared" / "corpus" / "papers-latex"
_MARK = re.compile(r"\\answer(Yes|No|NA|TODO)(?![a-zA-Z@])|\[\s*(Yes|No|NA|N/A|TODO)\s*\]")


def default_papers() -> list[Path]:
    """The shared papers (one folder each) when ../shared is there, and every LaTeX fixture paper: a
    folder of ``fixtures/papers`` or of a team's submissions, or a team's lone .tex file."""
    found = sorted(p for p in SHARED_PAPERS.iterdir() if p.is_dir()) if SHARED_PAPERS.is_dir() else []
    found += sorted(p for p in (ROOT / "fixtures" / "papers").iterdir() if p.is_dir())
    for team in sorted((ROOT / "fixtures" / "submissions").iterdir()):
        found += sorted(p for p in team.iterdir() if p.is_dir() or p.suffix == ".tex")
    return found


def marks_on_line(project: Path, file: str, line: int) -> list[str]:
    """The answers the marks on a line of a project's file print as written (Yes, No, NA, TODO)."""
    folder = project if project.is_dir() else project.parent
    lines = (folder / file).read_text(encoding="utf-8", errors="replace").splitlines()
    if not 1 <= line <= len(lines):
        return []
    return [(m.group(1) or m.group(2)).replace("N/A", "NA") for m in _MARK.finditer(lines[line - 1])]


def located(project: Path) -> tuple[int, list[str]]:
    """The number of answered items of a paper, and a line per item whose place holds no mark of its answer."""
    paper = load_paper(project)
    answered = [it for it in paper.checklist.items if it.answer is not None]
    wrong = []
    for it in answered:
        if it.file is None or it.line is None:
            wrong.append(f"{it.id}: no location")
        elif it.answer.value not in marks_on_line(project, it.file, it.line):
            wrong.append(f"{it.id}: {it.file}:{it.line} holds no \\answer{it.answer.value}")
    return len(answered), wrong


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or default_papers()
    total = right = count = 0
    print(f"{'paper':60} {'right':>6} {'of':>4}  first wrong")
    for project in paths:
        try:
            answered, wrong = located(project)
        except InputError as exc:
            print(f"{project.name[:60]:60} skipped: {exc}")
            continue
        count += 1
        total += answered
        right += answered - len(wrong)
        if wrong:
            print(f"{project.name[:60]:60} {answered - len(wrong):>6} {answered:>4}  {wrong[0]}")
    print(f"{count} papers: {right} of {total} answers located on their answer mark")
    return 0 if right == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
