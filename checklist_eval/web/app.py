"""The ASGI application of ``checklist-eval serve``.

Pages: ``/`` (upload), ``/check/{id}`` (progress, then the report), and with a results folder
``/results/`` (leaderboard -> submission -> question -> model call). API: ``POST /api/check`` (the
same form fields) and ``GET /api/check/{id}`` (the ``check --json`` document once done).

What one author uploads is never shown to another: ids are 24 random URL-safe characters, nothing
lists them, responses are not cached and send no referrer. Every page escapes what came from a file.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from checklist_eval.reading.filekind import name_problem
from checklist_eval.web.browse import routes as browse_routes
from checklist_eval.web.hosts import HostCheck
from checklist_eval.web.jobs import MAX_FILES, SET_FOLDER, Busy, Checker, Job, ServeSettings, safe_name
from checklist_eval.web.pages import SECURITY_HEADERS, page

COPY_CHUNK = 1024 * 1024
FORM_OVERHEAD = 64 * 1024  # the form's own bytes (boundaries, headers, the assessor field) beside the files


class TooLarge(Exception):
    pass


class Refused(Exception):
    """An upload that cannot be checked: the status and the one line to show."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def api(document: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(document, status_code=status, headers=SECURITY_HEADERS)


def _capped(request: Request, cap: int) -> Request:
    """The request with its body counted as it arrives: past ``cap`` bytes reading stops (413)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise TooLarge
    seen = 0
    receive = request.receive

    async def counted() -> Any:
        nonlocal seen
        message = await receive()
        seen += len(message.get("body", b""))
        if seen > cap:
            raise TooLarge
        return message

    return Request(request.scope, counted)


async def _save_upload(request: Request, checker: Checker) -> tuple[Path, list[str], str]:
    """(folder, saved names, assessor) of an upload form; Refused for what cannot be checked."""
    settings = checker.settings
    try:
        form = await _capped(request, settings.max_upload_bytes + FORM_OVERHEAD).form(max_files=MAX_FILES, max_fields=8,
                                                                     max_part_size=64 * 1024)
    except TooLarge:
        raise Refused(413, f"the upload is larger than {settings.max_upload_bytes // 2**20} MB") from None
    except Exception as err:  # noqa: BLE001 - a malformed form body is the sender's problem
        raise Refused(400, f"the upload could not be read ({getattr(err, 'detail', None) or err})") from None
    try:
        files = [f for f in form.getlist("file") if isinstance(f, UploadFile) and f.filename]
        assessor = str(form.get("assessor") or "heuristic")
        _check_form(files, assessor, checker)
        names = [safe_name(f.filename or "") for f in files]
        folder = checker.new_folder()
        try:
            await _write_files(folder / SET_FOLDER if len(files) > 1 else folder, files, names)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return folder, names, assessor
    finally:
        await form.close()


async def _write_files(target: Path, files: list[UploadFile], names: list[str]) -> None:
    target.mkdir(exist_ok=True)
    for f, name in zip(files, names, strict=True):
        with (target / name).open("wb") as out:
            while chunk := await f.read(COPY_CHUNK):
                out.write(chunk)


def _check_form(files: list[UploadFile], assessor: str, checker: Checker) -> None:
    if not files:
        raise Refused(400, "no file: choose a PDF, a .tex file, or a .zip/.tar.gz of the LaTeX project")
    for f in files:
        if problem := name_problem(safe_name(f.filename or "")):
            raise Refused(415, f"{safe_name(f.filename or '')}: {problem}")
    if len({safe_name(f.filename or "") for f in files}) < len(files):
        raise Refused(400, "two files with the same name")
    if assessor not in checker_assessors(checker):
        raise Refused(400, f"assessor {assessor!r} is not offered by this server")


def checker_assessors(checker: Checker) -> dict[str, str]:
    offered = {"heuristic": "offline checks (no model)"}
    llm = checker.settings.llm
    if llm is not None:
        offered["llm"] = f"the model {llm.model}"
    return offered


async def _start(request: Request) -> Job:
    checker: Checker = request.app.state.checker
    folder, names, assessor = await _save_upload(request, checker)
    try:
        return checker.submit(folder, names, assessor)
    except Busy:
        raise Refused(503, "the server is busy with other papers; try again in a minute") from None


# ---------------------------------------------------------------------------------------------- pages


async def upload_page(request: Request) -> Response:
    checker: Checker = request.app.state.checker
    return page("upload.html", page_title="Check your paper's checklist", assessors=checker_assessors(checker),
                max_mb=checker.settings.max_upload_bytes // 2**20, results=checker.settings.results is not None)


async def upload(request: Request) -> Response:
    try:
        job = await _start(request)
    except Refused as refused:
        return page("refused.html", status=refused.status, page_title="Upload refused", message=refused.message)
    return RedirectResponse(f"/check/{job.id}", status_code=303, headers=SECURITY_HEADERS)


async def check_page(request: Request) -> Response:
    job = request.app.state.checker.get(request.path_params["job"])
    if job is None:
        return page("refused.html", status=404, page_title="Not found",
                    message="no such check: it may have expired (reports are kept for a few hours)")
    if job.status == "done":
        return HTMLResponse(job.html, headers=SECURITY_HEADERS)
    return page("progress.html", status=200, page_title=f"Checking {job.name}", job=job)


# ------------------------------------------------------------------------------------------------ api


async def api_check(request: Request) -> Response:
    try:
        job = await _start(request)
    except Refused as refused:
        return api({"error": refused.message}, refused.status)
    return api({"id": job.id, "status": job.status, "url": f"/api/check/{job.id}"}, 202)


async def api_result(request: Request) -> Response:
    job = request.app.state.checker.get(request.path_params["job"])
    if job is None:
        return api({"error": "no such check"}, 404)
    if job.status == "failed":
        return api({"id": job.id, "status": "failed", "error": job.error}, 422)
    if job.status != "done":
        return api({"id": job.id, "status": job.status, "questions": len(job.questions),
                    "judged": len(job.states)}, 202)
    return api(job.document.model_dump(mode="json"))


def make_app(settings: ServeSettings) -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.checker = Checker(settings)
        try:
            yield
        finally:
            app.state.checker.close()

    routes = [
        Route("/", upload_page, methods=["GET"]),
        Route("/check", upload, methods=["POST"]),
        Route("/check/{job}", check_page, methods=["GET"]),
        Route("/api/check", api_check, methods=["POST"]),
        Route("/api/check/{job}", api_result, methods=["GET"]),
    ]
    if settings.results is not None:
        routes += browse_routes(settings.results)
    return Starlette(routes=routes, lifespan=lifespan,
                     middleware=[Middleware(HostCheck, allowed=settings.allowed_hosts)])
