"""Every appeal decision of a results folder on one page: the submission and question it was made on,
the verdict before and after it (or that it changed nothing), its note, the file it came from, when,
and whether it stands. Written beside ``leaderboard.html`` as ``appeals.html`` (an export of the same
committed state) and served by ``serve --results`` at ``/results/appeals``.

Newest first: the decision an organizer made last is the one they look for. Everything that came
from a decision (notes, ids, file names) is escaped by the template; no scripts, fonts or images.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from checklist_eval.challenge.report import render
from checklist_eval.challenge.results.appeals import AppliedOverride, Key, Step, steps, verdict_word
from checklist_eval.challenge.results.leaderboard import LeaderboardRow

STANDS = "stands"
SUPERSEDED = "superseded by a later decision on this answer"
NOT_APPLIED = "not applied: the answer was replaced after it (kept in the history)"


@dataclass(frozen=True)
class DecisionView:
    """One decision as the page shows it."""

    number: int  # its place in the history, from 1 (the anchor ``d-N``)
    step: Step
    status: str
    link: str
    title: str = ""  # the question's title, when the answer is in the run shown

    @property
    def d(self) -> AppliedOverride:
        return self.step.decision

    @property
    def change(self) -> str:
        """"incorrect -> correct", or "changes nothing: stays incorrect"."""
        if self.step.changes_nothing:
            return f"changes nothing: stays {verdict_word(self.d.correct)}"
        return f"{verdict_word(self.step.before)} \u2192 {verdict_word(self.d.correct)}"


def applied_keys(board: Sequence[LeaderboardRow]) -> set[Key]:
    """The records a standing decision is applied to, as the leaderboard's ``appeals`` column lists them."""
    out = set()
    for row in board:
        for item in (row.appeals or "").split(";"):
            role, sep, qid = item.partition(":")
            if sep:
                out.add((row.submission_id, role, qid))
    return out


def decision_views(history: Sequence[AppliedOverride], board: Sequence[LeaderboardRow],
                   link: Callable[[AppliedOverride], str], titles: Mapping[Key, str]) -> list[DecisionView]:
    """Every decision, newest first, with whether it stands (the latest on its answer, applied to the
    answer shown), was superseded, or waits on an answer since replaced."""
    applied = applied_keys(board)
    latest = {d.key: i for i, d in enumerate(history)}
    out = []
    for i, step in enumerate(steps(history)):
        d = step.decision
        status = SUPERSEDED if latest[d.key] != i else STANDS if d.key in applied else NOT_APPLIED
        out.append(DecisionView(number=i + 1, step=step, status=status, link=link(d), title=titles.get(d.key, "")))
    return out[::-1]


def summary_line(views: Sequence[DecisionView]) -> str:
    if not views:
        return "No appeal decision has been recorded: every verdict is the assessor's."
    nothing = sum(v.step.changes_nothing for v in views)
    standing = sum(v.status == STANDS for v in views)
    subs = len({v.d.submission_id for v in views})
    return (f"{len(views)} decision{'s' if len(views) != 1 else ''} on {subs} submission{'s' if subs != 1 else ''}, "
            f"newest first: {len(views) - nothing} changed a verdict, {nothing} changed nothing; "
            f"{standing} stand{'s' if standing == 1 else ''}.")


def render_appeals(views: Sequence[DecisionView], *, title: str, back: str, nav: Any = None) -> str:
    """The page; ``back``: the leaderboard's href from it."""
    context: dict[str, Any] = {"nav": nav} if nav else {}
    return render("appeals.html", page_title=title, title=title, views=views, summary=summary_line(views),
                  back=back, **context)
