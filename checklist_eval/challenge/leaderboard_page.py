"""The leaderboard as one self-contained HTML page: the ranked submissions, each linking its report,
then the submissions that could not be scored with their reason.

Everything that came from a submission (ids, reasons, model names) is escaped; links are relative
paths, percent-encoded, to report files that exist, so the page works when the results folder is
copied or served as is. No scripts, fonts or images. Beside the scores, each submission's count of
unverified answers (the CSV's columns stay the organizers').
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from checklist_eval.challenge.report import render
from checklist_eval.challenge.results.layout import ResultsLayout
from checklist_eval.challenge.results.leaderboard import LeaderboardRow
from checklist_eval.models import State

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


def page_rows(rows: Sequence[LeaderboardRow]) -> list[dict[str, Any]]:
    """The rows as the page shows them: the leaderboard's columns, and how many of the submission's
    answers were unverified (no passage found either way; counted correct) out of how many, and the
    submission's name as given when the id differs from it."""
    return [{**r.model_dump(mode="json"), "unverified": r.states.get(State.UNVERIFIED.value),
             "answers": sum(r.states.values()) if r.states else None, "name": r.name} for r in rows]


def render_leaderboard(rows: list[dict[str, Any]], links: dict[str, str], *, title: str = "Leaderboard",
                       appeals_href: str = "") -> str:
    """``appeals_href``: the appeals page, linked from the rows an appeal decision stands on."""
    return render("leaderboard.html", page_title=title, title=title, links=links, columns=SCORE_COLUMNS,
                  scored=[r for r in rows if r.get("status") == "scored"],
                  failed=[r for r in rows if r.get("status") != "scored"],
                  judge=judged_by, reason=reason, appeals_href=appeals_href)


def appeals_link(results_folder: Path, page: Path) -> str:
    """The href of the folder's ``appeals.html`` from a page written at ``page``, "" when there is none."""
    target = ResultsLayout(results_folder).appeals_html
    if not target.is_file():
        return ""
    rel = os.path.relpath(target.resolve(), page.resolve().parent)
    return "/".join(quote(part) for part in Path(rel).parts)


def judged_by(row: dict[str, Any]) -> str:
    return " / ".join(str(row[k]) for k in ("assessor", "model", "prompt_version") if row.get(k))


def reason(row: dict[str, Any]) -> str:
    """Why a submission was not scored."""
    return str(row.get("status", "")).removeprefix("failed: ")
