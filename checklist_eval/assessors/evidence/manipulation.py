"""Signs that a paper tries to steer its assessor, as one flag organizers can filter records on.

Three kinds: ``hidden_text`` (text a reader cannot see: ``Paper.hidden_text``, from the PDF or the
LaTeX parser), ``injection`` (visible text addressed to an automated reviewer, found by the
heuristic assessor's own rule, in the body or in a justification) and ``undecided`` (an answer whose
printed form the LaTeX source does not decide: inside a conditional the parser cannot evaluate, or an
answer macro redefined; ``WarningKind.UNDECIDED``) and ``source_differs`` (the LaTeX source reads an
answer or justification other than the one TeX prints: ``WarningKind.SOURCE_DIFFERS``). The flag is
one line per finding, ``kind`` first, so ``kinds`` reads it back without knowing the wording of the rest.
"""

from __future__ import annotations

from collections.abc import Iterable

from checklist_eval.models import HiddenRun, Paper, WarningKind

HIDDEN = "hidden_text"
INJECTION = "injection"
UNDECIDED = "undecided"
SOURCE_DIFFERS = "source_differs"
_EXCERPT = 60
_MAX_LINES = 8  # a paper hiding dozens of runs is flagged by the first few; the warnings list them all


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"


def describe(run: HiddenRun) -> str:
    """One run as a reader-facing line: where, how, and its first words."""
    from checklist_eval.reading.pdf.techniques import TECHNIQUES

    where = f"page {run.page}, " if run.page is not None else ""
    return f'{where}{TECHNIQUES.get(run.technique, run.technique)}: "{_quote(run.text)}"'


def injection_passages(paper: Paper) -> list[str]:
    """Visible passages addressed to an automated reviewer: in the body, then in justifications."""
    from checklist_eval.assessors.evidence.body import addresses_assessor

    found = []
    hit = addresses_assessor(paper.body)
    if hit:
        found.append(hit)
    for item in paper.checklist.items:
        hit = addresses_assessor(item.justification or "")
        if hit:
            found.append(f"question {item.id}: {hit}")
    return found


def paper_flag(paper: Paper) -> str:
    """The manipulation flag of a paper: empty when none, else one ``kind: detail`` line per finding."""
    lines = [f"{HIDDEN}: {describe(run)}" for run in paper.hidden_text]
    lines += [f"{INJECTION}: {_quote(p)}" for p in injection_passages(paper)]
    lines += [f"{UNDECIDED}: {w.location}" for w in paper.warnings if w.kind is WarningKind.UNDECIDED]
    lines += [f"{SOURCE_DIFFERS}: {w.message}" for w in paper.warnings if w.kind is WarningKind.SOURCE_DIFFERS]
    if len(lines) > _MAX_LINES:
        lines = lines[:_MAX_LINES] + [f"(+{len(lines) - _MAX_LINES} more)"]
    return "\n".join(lines)


def entries(flag: str, kind: str) -> list[str]:
    """The details of one kind in a flag."""
    prefix = kind + ": "
    return [line[len(prefix):] for line in flag.splitlines() if line.startswith(prefix)]


def kinds(flags: Iterable[str]) -> list[str]:
    """The kinds present in some flags, in a fixed order."""
    seen = {line.split(":", 1)[0] for flag in flags for line in flag.splitlines()}
    return [k for k in (HIDDEN, INJECTION, UNDECIDED, SOURCE_DIFFERS) if k in seen]
