"""The leaderboard as one self-contained HTML page: the ranked submissions, each linking its report,
then the submissions that could not be scored with their reason.

Everything that came from a submission (ids, reasons, model names) is escaped; links are relative
paths, percent-encoded, to report files that exist, so the page works when the results folder is
copied or served as is. No scripts, fonts or images.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from checklist_eval.challenge.layout import ResultsLayout
from checklist_eval.challenge.report import _e, _fmt, _page

SCORE_COLUMNS = ("C_G", "C_A", "C_T", "R", "S")


def report_links(results_folder: Path, page: Path, submission_ids: list[str]) -> dict[str, str]:
    """submission id -> href of its ``submissions/<id>/report.html``, relative to the page's folder."""
    links = {}
    base = page.resolve().parent
    layout = ResultsLayout(results_folder)
    for sid in submission_ids:
        try:
            report = layout.submission(sid).report_html
        except ValueError:  # an id that is not a plain folder name gets no link
            continue
        if not report.is_file():
            continue
        rel = os.path.relpath(report.resolve(), base)
        links[sid] = "/".join(quote(part) for part in Path(rel).parts)
    return links


def render_leaderboard(rows: list[dict[str, Any]], links: dict[str, str], *, title: str = "Leaderboard") -> str:
    scored = [r for r in rows if r.get("status") == "scored"]
    failed = [r for r in rows if r.get("status") != "scored"]
    body = [f"<h1>{_e(title)}</h1>",
            f"<p class=\"muted\">{len(scored)} submissions ranked by S = C_G &times; C_A &times; (1 &minus; R) "
            f"&times; C_T; {len(failed)} could not be scored.</p>",
            _scored_table(scored, links)]
    if failed:
        body.append("<h2>Not scored</h2>" + _failed_table(failed, links))
    return _page(title, "\n".join(body))


def _id_cell(sid: str, links: dict[str, str]) -> str:
    href = links.get(sid)
    return f'<a href="{_e(href)}">{_e(sid)}</a>' if href else _e(sid)


def _scored_table(rows: list[dict[str, Any]], links: dict[str, str]) -> str:
    head = "".join(f"<th>{c}</th>" for c in ("rank", "submission", "case", *SCORE_COLUMNS, "judged by"))
    lines = []
    for r in rows:
        judge = " / ".join(_e(r.get(k)) for k in ("assessor", "model", "prompt_version") if r.get(k))
        cells = "".join(f'<td class="num">{_fmt(r.get(k), 4)}</td>' for k in SCORE_COLUMNS)
        lines.append(f'<tr><td class="num">{_e(r.get("rank"))}</td><td>{_id_cell(str(r["submission_id"]), links)}'
                     f"</td><td>{_e(r.get('case'))}</td>{cells}<td>{judge}</td></tr>")
    return (f'<table class="leaderboard"><thead><tr>{head}</tr></thead><tbody>' + "".join(lines)
            + "</tbody></table>")


def _failed_table(rows: list[dict[str, Any]], links: dict[str, str]) -> str:
    lines = [f"<tr><td>{_id_cell(str(r['submission_id']), links)}</td>"
             f"<td><pre>{_e(str(r.get('status', '')).removeprefix('failed: '))}</pre></td></tr>" for r in rows]
    return ('<table class="failures"><thead><tr><th>submission</th><th>reason</th></tr></thead><tbody>'
            + "".join(lines) + "</tbody></table>")
