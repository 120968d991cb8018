"""The organizer's browser over a results folder, read-only: the leaderboard, each submission's
report, each question (verdict, review, the appeal decisions on it, the model calls behind it) and
each call (the whole prompt, the reply as received, its usage, whether the verdict came from the
cache). Nothing is written.

Every page reads one committed snapshot of the folder's ``results.sqlite`` (the run the readers
show), in a worker thread: the event loop goes on answering uploads and progress polls meanwhile,
and a batch writing the folder is neither waited for nor half-seen. The leaderboard is computed once
per (run shown, appeals) and kept until either changes; a submission's page reads that submission's
rows alone."""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from checklist_eval.challenge.headline import first_problem
from checklist_eval.challenge.records import Record
from checklist_eval.challenge.report import appeal_kind, shown_state, submission_view
from checklist_eval.challenge.results.appeals import AppliedOverride, steps
from checklist_eval.challenge.results.folder import ResultsFolder
from checklist_eval.challenge.results.leaderboard import Failure
from checklist_eval.errors import ChecklistEvalError
from checklist_eval.web.pages import SECURITY_HEADERS, page

MAX_CALLS_SHOWN = 50


def submission_url(sid: str) -> str:
    return f"/results/s/{quote(sid, safe='')}"


def question_url(r: Record) -> str:
    return question_url_of(r.submission_id, r.role, r.question_id)


def question_url_of(sid: str, role: str, qid: str) -> str:
    return f"{submission_url(sid)}/{quote(role, safe='')}/{quote(qid, safe='')}"


APPEALS_URL = "/results/appeals"


class Results:
    """The folder, opened once (a folder from before the database is imported then); each page reads
    the snapshot committed when it asks."""

    def __init__(self, root: Path):
        self.root = root
        self._folder: ResultsFolder | None = None
        self._board: tuple[object, list[Any], str] | None = None  # (key, rows, what they show)
        self._lock = threading.Lock()

    def folder(self) -> ResultsFolder:
        if self._folder is None:
            self._folder = ResultsFolder.open(self.root)
        return self._folder

    def leaderboard(self) -> tuple[list[Any], str]:
        """(the leaderboard rows, which run they show and any run after it), from the cache when the
        run shown and the appeals are those it was computed from."""
        folder = self.folder()
        if folder.layout.db.is_file():
            with folder.snapshot() as snap:
                key = snap.cache_key()
                said = snap.shown.described() if snap.shown else ""
                later = [r.described() for r in snap.runs if snap.shown is None or r.id > snap.shown.id]
            if not said:  # nothing committed to show yet (the first run is in progress)
                return [], _shown_line(said, later)
        else:
            key, said, later = None, "", []
        with self._lock:
            if self._board is not None and key is not None and self._board[0] == key:
                return self._board[1], _shown_line(said, later)
        rows = folder.leaderboard()
        with self._lock:
            self._board = (key, rows, said)
        return rows, _shown_line(said, later)

    def records(self, sid: str) -> list[Record]:
        return self.folder().records(sid)

    def calls(self, r: Record) -> list[dict[str, Any]]:
        from checklist_eval.endpoint.calllog import read_calls

        cache = self.folder().layout.cache
        if not cache.is_file():
            return []
        calls = read_calls(cache, submission=r.submission_id, question=r.question_id, limit=MAX_CALLS_SHOWN)
        return [c for c in calls if c["role"] == r.role]


def _shown_line(shown: str, later: list[str]) -> str:
    parts = ([f"showing {shown}"] if shown else []) + later
    return f" · {'; '.join(parts)}" if parts else ""  # the run says its state in parentheses: none around it


def _not_found(message: str) -> Response:
    return page("refused.html", status=404, page_title="Not found", message=message)


def routes(root: Path) -> list[Route]:
    results = Results(root)

    def submission_page(sid: str) -> Response:
        from checklist_eval.challenge.scoring import score_submission

        folder = results.folder()
        recs, applied, _replaced = folder.decided(sid)
        if not recs:
            failed = next((f for f in folder.failures() if f.submission_id == sid), None)
            if failed is not None:
                return _failure_page(failed)
            return _not_found(f"no submission {sid!r} in these results")
        view = submission_view(score_submission(sid, recs), recs, overrides=applied, links=question_url)
        return page("report.html", page_title=f"Submission {sid}", r=view,
                    nav=[("Leaderboard", "/results/"), (sid, "")])

    # Reading the snapshot and rendering the page both run in a worker thread: the event loop stays free
    # for uploads and progress polls.
    async def leaderboard(request: Request) -> Response:
        return await asyncio.to_thread(_leaderboard_page, results, root)

    async def appeals(request: Request) -> Response:
        return await asyncio.to_thread(_appeals_page, results, root)

    async def submission(request: Request) -> Response:
        return await asyncio.to_thread(submission_page, request.path_params["sid"])

    async def question(request: Request) -> Response:
        found = await asyncio.to_thread(_record, request)
        if found is None:
            return _not_found("no such question in these results")
        history = await asyncio.to_thread(lambda: [s for s in steps(results.folder().history())
                                                   if s.decision.key == found.key])
        calls = [_call_view(c) for c in await asyncio.to_thread(results.calls, found)]
        return page("question.html", page_title=f"{found.submission_id} {found.role} {found.question_id}",
                    rec=found, state=shown_state(found), contradiction=first_problem(found.review), history=history,
                    appeal=appeal_kind(found.appeal), appeals_url=APPEALS_URL,
                    calls=calls, here=question_url(found),
                    nav=[("Leaderboard", "/results/"), (found.submission_id, submission_url(found.submission_id)),
                         (f"{found.role} question {found.question_id}", "")])

    async def call(request: Request) -> Response:
        from checklist_eval.endpoint.calllog import prompt_messages

        found = await asyncio.to_thread(_record, request)
        wanted = request.path_params["call"]
        calls = await asyncio.to_thread(results.calls, found) if found else []
        match = next((c for c in calls if str(c["id"]) == wanted), None)
        if found is None or match is None:
            return _not_found("no such call in these results")
        view = _call_view(match)
        view["messages"] = await asyncio.to_thread(prompt_messages, results.folder().layout.cache,
                                                   match["prefix_digest"])
        return page("call.html", page_title=f"Call {wanted}", rec=found, call=view,
                    nav=[("Leaderboard", "/results/"), (found.submission_id, submission_url(found.submission_id)),
                         (f"{found.role} question {found.question_id}", question_url(found)), (f"call {wanted}", "")])

    def _record(request: Request) -> Record | None:
        p = request.path_params
        return next((r for r in results.records(p["sid"]) if r.role == p["role"] and r.question_id == p["qid"]),
                    None)

    def route(path: str, endpoint: Any) -> Route:
        async def guarded(request: Request) -> Response:
            try:
                return await endpoint(request)
            except ChecklistEvalError as err:  # an unreadable results file: one line, the server goes on
                return page("refused.html", status=500, page_title="Results unreadable", message=str(err))

        return Route(path, guarded, methods=["GET"])

    return [
        route("/results/", leaderboard),
        route(APPEALS_URL, appeals),
        route("/results/s/{sid}", submission),
        route("/results/s/{sid}/{role}/{qid}", question),
        route("/results/s/{sid}/{role}/{qid}/call/{call}", call),
    ]


def _leaderboard_page(results: Results, root: Path) -> Response:
    from checklist_eval.challenge.leaderboard_page import SCORE_COLUMNS, judged_by, page_rows, reason

    board, shown = results.leaderboard()
    rows = page_rows(board)
    links = {str(r["submission_id"]): submission_url(str(r["submission_id"])) for r in rows}
    return page("leaderboard.html", page_title="Leaderboard", title=f"Leaderboard: {root.name}{shown}", links=links,
                columns=SCORE_COLUMNS, scored=[r for r in rows if r.get("status") == "scored"],
                failed=[r for r in rows if r.get("status") != "scored"], judge=judged_by, reason=reason,
                appeals_href=APPEALS_URL, nav=[("Leaderboard", "")])


def _appeals_page(results: Results, root: Path) -> Response:
    """Every appeal decision of the folder, each linking its question's page (a scored submission's)."""
    from checklist_eval.challenge.appeals_page import decision_views, render_appeals

    board, _shown = results.leaderboard()
    history = results.folder().history()
    scored = {r.submission_id for r in board if r.scored}

    def link(d: AppliedOverride) -> str:
        return question_url_of(d.submission_id, d.role, d.question_id) if d.submission_id in scored else ""

    titles = {r.key: r.question_title for sid in sorted({d.submission_id for d in history} & scored)
              for r in results.records(sid)}
    html = render_appeals(decision_views(history, board, link, titles), title=f"Appeal decisions: {root.name}",
                          back="/results/", nav=[("Leaderboard", "/results/"), ("Appeal decisions", "")])
    return HTMLResponse(html, headers=SECURITY_HEADERS)


def _failure_page(failed: Failure) -> Response:
    """A submission the batch could not score: its name as given, its id, and why (the reason as the
    leaderboard publishes it, paths relative to the batch's root), with the way back to the leaderboard."""
    from checklist_eval.challenge.results.leaderboard import public_reason
    from checklist_eval.challenge.submissions import given_name

    name = given_name(failed.source, failed.submission_id) if failed.source else ""
    shown = f"{name} ({failed.submission_id})" if name and name != failed.submission_id else failed.submission_id
    return page("failure.html", page_title=f"Submission {shown}: not scored", shown=shown,
                reason=public_reason(failed), source=Path(failed.source).name if failed.source else "",
                nav=[("Leaderboard", "/results/"), (shown, "")])


def _call_view(c: dict[str, Any]) -> dict[str, Any]:
    from checklist_eval.endpoint.calllog import reply_content

    response = c.get("response")
    usage = response.get("usage") if isinstance(response, dict) else None
    return {
        "id": c["id"],
        "when": datetime.fromtimestamp(c["created"], timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "model": c["model"], "endpoint": c["endpoint"], "prompt_version": c["prompt_version"],
        "strategy": c["strategy"], "params": json.dumps(c["params"], ensure_ascii=False),
        "outcome": c["outcome"], "reused": str(c["outcome"]).startswith("reused"),
        "usage": json.dumps(usage, ensure_ascii=False, indent=1) if usage else "",
        "question": c["question"], "reply": reply_content(response),
    }
