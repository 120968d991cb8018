"""Human-readable reports: self-contained HTML pages and rich terminal summaries.

The HTML pages carry their own CSS and nothing else (no scripts, fonts or images), so an organizer can
mail one file or open it offline. Every piece of text that came from a paper, a model or a file name is
escaped: checklist justifications and model reviews are untrusted input.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from checklist_eval.assessors.ledger import format_cost
from checklist_eval.challenge.layout import REPORT_HTML
from checklist_eval.fsutil import atomic_write_text
from checklist_eval.models import ROLES, Answer, Assessment, Paper, Role, Usage

if TYPE_CHECKING:  # pandas and rich stay out of the import path of the light commands
    from rich.console import Console

    from checklist_eval.challenge.records import Record
    from checklist_eval.challenge.scoring import SubmissionScore

ROLE_NAMES = {"G": "Genuine (G)", "A": "Adversarial (A)", "T": "Truth-adversarial (T)"}

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:72rem;
padding:0 1rem;color:#1d1d1f;line-height:1.45}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%;margin:.6rem 0;font-size:.92rem}
th,td{border:1px solid #ddd;padding:.35rem .5rem;vertical-align:top;text-align:left}
th{background:#f4f4f6}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.ok{color:#116329;font-weight:600}.bad{color:#b3261e;font-weight:600}.muted{color:#666}
.warn{background:#fff8e1;border-left:4px solid #f0b400;padding:.4rem .7rem;margin:.4rem 0}
pre{white-space:pre-wrap;margin:0;font-family:inherit}
.scores td,.scores th{text-align:center}
"""


def _e(value: object) -> str:
    """Escape anything for HTML text and attribute context; None shows as an empty cell."""
    return "" if value is None else html.escape(str(value), quote=True)


def _answer_text(answer: Answer | str | None) -> str:
    if answer is None or answer == "":
        return "(missing)"
    return answer.value if isinstance(answer, Answer) else str(answer)


def _verdict(correct: bool, graded: str = "") -> str:
    """c_i as the scores count it; an answer kept correct only for lack of evidence says so apart."""
    if correct and graded == "unverifiable":
        return '<span class="ok">correct</span> <span class="muted">(unverifiable)</span>'
    return '<span class="ok">correct</span>' if correct else '<span class="bad">incorrect</span>'


def _fmt(x: float | None, digits: int = 3) -> str:
    # Rounding happens here and only here: stored scores keep full precision.
    return "" if x is None else f"{x:.{digits}f}"


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{_e(title)}</title>"
        f"<style>{_CSS}</style></head><body>\n{body}\n</body></html>\n"
    )


def _unverifiable_note(records: Sequence[Record]) -> str:
    n = sum(r.c and r.verdict == "unverifiable" for r in records)
    return f"; {n} of them unverifiable from the text we have, given the benefit of the doubt" if n else ""


def _warnings_html(warnings: Iterable[object]) -> str:
    return "".join(f'<div class="warn">{_e(str(w))}</div>' for w in warnings)


def _listed(lines_by_role: dict[str, list[str]]) -> str:
    return "".join(f"<li>{_e(role + ': ' if role else '')}{_e(line)}</li>"
                   for role, lines in lines_by_role.items() for line in lines)


def _hidden_html(lines_by_role: dict[str, list[str]]) -> str:
    """The "Hidden text" section: each run a reader of the paper cannot see (cut before assessment
    for a PDF, flagged in the body for LaTeX), per role; empty when there are none."""
    items = _listed(lines_by_role)
    return items and ("<h2>Hidden text</h2><p class=\"warn\">The paper carries text a reader cannot see, "
                      "a way to steer an automated assessor. In a PDF it was removed before assessment.</p>"
                      f"<ul>{items}</ul>")


def _injection_html(lines_by_role: dict[str, list[str]]) -> str:
    items = _listed(lines_by_role)
    return items and f"<h2>Text addressed to the assessor</h2><ul>{items}</ul>"


def _usage_html(usage: Usage | None) -> str:
    if usage is None:
        return ""
    return (
        f"<p class=\"muted\">Model calls: {usage.calls}; prompt tokens: {usage.prompt_tokens}; "
        f"completion tokens: {usage.completion_tokens}; cached tokens: {usage.cached_tokens}; "
        f"cost: {_e(format_cost(usage))}</p>"
    )


def paper_records(paper: Paper, assessments: Sequence[Assessment]) -> list[Record]:
    """One checked paper as assessment records (role G of a one-paper submission), so its report and
    its C follow exactly the rules the challenge scores follow (``Record.c``, ``scoring.correctness``)."""
    from checklist_eval.challenge.records import records_from_assessments

    sid = Path(paper.source).name or "paper"
    return records_from_assessments(sid, "G", paper, assessments, case="G", scored_at="")


def render_paper_report(
    paper: Paper,
    assessments: Sequence[Assessment],
    *,
    assessor: str | None,
    model: str | None,
    usage: Usage | None,
    prompt_version: str | None = None,
) -> str:
    """The HTML text of one paper's report (see ``write_paper_report``)."""
    from checklist_eval.challenge.scoring import correctness

    records = paper_records(paper, assessments)
    c = correctness(records)
    title = paper.title or Path(paper.source).name
    body = [
        f"<h1>Checklist assessment: {_e(title)}</h1>",
        f"<p class=\"muted\">Source: {_e(paper.source)} &middot; checklist {_e(paper.checklist.id)} "
        f"&middot; assessor {_e(assessor)}{(' / ' + _e(model)) if model else ''}"
        f"{(' &middot; prompt ' + _e(prompt_version)) if prompt_version else ''} &middot; "
        f"{_e(datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC'))}</p>",
        f"<p><strong>Correctness C = {_fmt(float(c))}</strong> "
        f"({sum(r.c for r in records)} of {len(records)} answers judged correct"
        f"{_unverifiable_note(records)})</p>",
        _usage_html(usage),
    ]
    from checklist_eval.assessors.manipulation import describe, injection_passages

    body.append(_hidden_html({"": [describe(run) for run in paper.hidden_text]}))
    body.append(_injection_html({"": injection_passages(paper)}))
    if paper.warnings:
        body.append("<h2>Parser warnings</h2>" + _warnings_html(paper.warnings))
    body.append("<h2>Answers</h2>" + _records_table(records, "G"))
    return _page(f"Checklist report: {title}", "\n".join(body))


def write_paper_report(
    out_dir: str | Path,
    paper: Paper,
    assessments: Sequence[Assessment],
    *,
    assessor: str | None,
    model: str | None,
    usage: Usage | None,
    prompt_version: str | None = None,
) -> Path:
    """Write ``out_dir/report.html`` for one paper (atomically) and return its path."""
    text = render_paper_report(paper, assessments, assessor=assessor, model=model, usage=usage,
                               prompt_version=prompt_version)
    return atomic_write_text(Path(out_dir) / REPORT_HTML, text)


# --------------------------------------------------------------------------------------------------
# Submission reports (G/A/T): built from assessment records, so a rescored submission can be redrawn.


def _scores_html(score: SubmissionScore) -> str:
    cells = "".join(
        f"<td>{_fmt(getattr(score, k), 4)}</td>" for k in ("C_G", "C_A", "C_T", "R", "S")
    )
    return (
        '<table class="scores"><thead><tr><th>case</th><th>C_G</th><th>C_A</th><th>C_T</th><th>R</th>'
        f"<th>S</th></tr></thead><tbody><tr><td>{_e(score.case)}</td>{cells}</tr></tbody></table>"
    )


def _records_table(records: Sequence[Record], role: Role) -> str:
    """The per-question table of one paper (``scoring.paper_table``): the verdict shown is c_i."""
    import pandas as pd

    from checklist_eval.challenge.scoring import paper_table

    rows = []
    for r in paper_table(records, role).itertuples(index=False):
        p = _fmt(float(r.p_correct), 2) if pd.notna(r.p_correct) else ""
        rows.append(
            f"<tr><td>{_e(r.question_id)}</td><td>{_e(r.title)}</td>"
            f"<td>{_e(_answer_text(r.answer))}</td><td><pre>{_e(r.justification)}</pre></td>"
            f"<td>{_verdict(bool(r.c), r.verdict)}</td><td class=\"num\">{p}</td>"
            f"<td><pre>{_e(r.review)}</pre></td></tr>"
        )
    return (
        "<table><thead><tr><th>#</th><th>Question</th><th>Answer</th><th>Justification</th>"
        "<th>Verdict</th><th>p(correct)</th><th>Review</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _agreement_html(score: SubmissionScore, records: Sequence[Record]) -> str:
    from checklist_eval.challenge.scoring import agreement_table

    rows = []
    for row in agreement_table(records).itertuples(index=False):
        agree = "yes" if row.agree else "no"
        cls = "ok" if row.agree else "bad"
        rows.append(
            f"<tr><td>{_e(row.question_id)}</td><td>{_e(_answer_text(row.a))}</td>"
            f"<td>{_e(_answer_text(row.t))}</td><td class=\"num\">{int(row.g)}</td>"
            f"<td class=\"num\">{int(row.c_A)}</td><td class=\"{cls}\">{_e(agree)}</td></tr>"
        )
    return (
        "<h2>Agreement of the assessor on A with the truth (T)</h2>"
        "<p class=\"muted\">g = 1 when A's answer equals T's; the assessor resisted on a question when "
        "its verdict on A (c_A) equals g. R is the share of agreements over all questions (T's TODO is T's answer).</p>"
        "<table><thead><tr><th>#</th><th>a (A's answer)</th><th>t (T's answer)</th><th>g</th>"
        "<th>c_A</th><th>agree?</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


def _provenance_html(records: Sequence[Record]) -> str:
    """Who judged: assessor, model, prompt version (and endpoint, strategy when an LLM did)."""

    def joined(attr: str) -> str:
        values = sorted({str(getattr(r, attr) or "") for r in records} - {""})
        return ", ".join(values) or "(none)"

    parts = [f"assessor {_e(joined('assessor'))}", f"model {_e(joined('model'))}",
             f"prompt version {_e(joined('prompt_version'))}"]
    if any(r.endpoint for r in records):
        parts += [f"endpoint {_e(joined('endpoint'))}", f"output strategy {_e(joined('output_strategy'))}"]
    return f"<p class=\"provenance\">Judged by {' &middot; '.join(parts)}</p>"


def _manipulation_sections(by_role: dict[str, list[Record]]) -> list[str]:
    from checklist_eval.assessors.manipulation import HIDDEN, INJECTION, entries

    flags = {role: next((r.manipulation for r in by_role[role] if r.manipulation), "") for role in ROLES
             if role in by_role}
    return [_hidden_html({role: entries(flag, HIDDEN) for role, flag in flags.items()}),
            _injection_html({role: entries(flag, INJECTION) for role, flag in flags.items()})]


def render_submission_report(
    score: SubmissionScore, records: Sequence[Record], *, usage: Usage | None = None, title: str | None = None
) -> str:
    """``title``: what heads the page (Codabench passes the genuine paper's title); default the id."""
    heading = title or f"Submission {score.submission_id}"
    by_role: dict[str, list[Record]] = {}
    for r in records:
        by_role.setdefault(r.role, []).append(r)
    body = [
        f"<h1>{_e(heading)}</h1>",
        f"<p class=\"muted\">Case {_e(score.case)} &middot; {score.questions} questions &middot; "
        f"S = C_G &times; C_A &times; (1 &minus; R) &times; C_T</p>",
        _provenance_html(records),
        _scores_html(score),
        _warnings_html(score.warnings),
        _usage_html(usage),
    ]
    if score.case == "GT":
        body.append(
            "<p class=\"muted\">Case GT: the adversarial paper A is T's paper with G's checklist "
            "answers.</p>"
        )
    body += _manipulation_sections(by_role)
    if "A" in by_role and "T" in by_role:
        body.append(_agreement_html(score, records))
    for role in ROLES:
        rows = by_role.get(role)
        if not rows:
            continue
        source = next((r.source for r in rows if r.source), "")
        c = {"G": score.C_G, "A": score.C_A, "T": score.C_T}[role]
        body.append(
            f"<h2>{_e(ROLE_NAMES[role])}: C = {_fmt(c)}</h2>"
            + (f"<p class=\"muted\">{_e(source)}</p>" if source else "")
            + _records_table(records, role)
        )
    return _page(heading, "\n".join(body))


def write_submission_report(
    path: str | Path, score: SubmissionScore, records: Sequence[Record], *, usage: Usage | None = None,
    title: str | None = None,
) -> Path:
    return atomic_write_text(path, render_submission_report(score, records, usage=usage, title=title))


# --------------------------------------------------------------------------------------------------
# Terminal summaries


def print_scores_table(console: Console, scores: Sequence[SubmissionScore], *, title: str = "Scores") -> None:
    """One row per submission, rounded for display only."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=escape(title))
    table.add_column("submission")
    table.add_column("case")
    for col in ("C_G", "C_A", "C_T", "R", "S"):
        table.add_column(col, justify="right")
    for s in scores:
        table.add_row(
            escape(s.submission_id), s.case, *(_fmt(getattr(s, k), 3) for k in ("C_G", "C_A", "C_T", "R", "S"))
        )
    console.print(table)
    for s in scores:
        for w in s.warnings:
            console.print(f"[yellow]warning[/yellow] {escape(s.submission_id)}: {escape(w)}", markup=True,
                          highlight=False)


def print_submission_summary(console: Console, score: SubmissionScore, records: Sequence[Record]) -> None:
    """Scores plus the A-vs-T agreement table when the submission has both."""
    from rich.markup import escape
    from rich.table import Table

    from checklist_eval.challenge.scoring import agreement_rows

    print_scores_table(console, [score], title=f"Submission {score.submission_id} ({score.case})")
    roles = {r.role for r in records}
    if not {"A", "T"} <= roles:
        return
    table = Table(title="A vs T (per question)")
    for col in ("#", "a", "t", "g", "c_A", "agree?"):
        table.add_column(col)
    for row in agreement_rows(records):
        agree = "yes" if row["agree"] else "[red]no[/red]"
        table.add_row(
            escape(row["question_id"]), _answer_text(row["a"]), _answer_text(row["t"]), str(row["g"]),
            str(row["c_A"]), agree,
        )
    console.print(table)
