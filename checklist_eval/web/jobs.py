"""Uploaded papers being checked: each in its own temporary folder, parsed by the isolated parser
pool under the CLI's time and memory budget, judged with a per-question progress record, and kept in
memory under an unguessable id (there is no listing) until it ages out."""

from __future__ import annotations

import asyncio
import re
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checklist_eval.assessors import AssessorConfig, build_assessor
from checklist_eval.assessors.base import gather_all, with_assessor_warnings
from checklist_eval.errors import ChecklistEvalError
from checklist_eval.models import Paper, State, state_counts
from checklist_eval.reading.isolation import ParseLimits, ParserPool
from checklist_eval.web.hosts import LOOPBACK_NAMES

MAX_FILES = 3  # a G/A/T set at most
SET_FOLDER = "submission"  # a G/A/T set is saved here in its upload's folder: the submission's id


class Busy(Exception):
    """More uploads waiting than the queue holds."""


@dataclass
class ServeSettings:
    max_upload_bytes: int = 100 * 1024 * 1024
    jobs: int = 2  # checks running at once
    queue: int = 16  # checks waiting at most; one more is refused (503)
    limits: ParseLimits = field(default_factory=ParseLimits)
    llm: AssessorConfig | None = None  # offered when the server was started with a model
    keep: int = 500  # finished checks kept in memory (oldest dropped first)
    keep_s: float = 6 * 3600.0
    results: Path | None = None  # the organizer's browser, read-only
    allowed_hosts: frozenset[str] = frozenset(LOOPBACK_NAMES)  # the Host names answered (web.hosts)


@dataclass
class Job:
    id: str
    name: str  # the uploaded file's name, as shown
    assessor: str
    created: float = field(default_factory=time.monotonic)
    status: str = "queued"  # queued, parsing, assessing, done, failed
    questions: list[tuple[str, str]] = field(default_factory=list)  # (id, title) in checklist order
    # question id -> evidence state (contradicted / supported / unverified), as the verdicts come
    states: dict[str, str] = field(default_factory=dict)
    error: str = ""
    document: Any = None  # the check --json (or score --json) document when done
    html: str = ""

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed")

    @property
    def tally(self) -> dict[str, int]:
        """The answers judged so far per evidence state, every state named."""
        return state_counts(list(self.states.values()))


def safe_name(filename: str) -> str:
    """An uploaded file's name as a plain file name: no folders, nothing a shell or a page reads."""
    base = re.split(r"[\\/]", filename or "")[-1]
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", base).lstrip(".")[-120:]
    return cleaned or "upload"


class Checker:
    """The queue of checks: at most ``jobs`` run, at most ``queue`` wait, the rest are refused."""

    def __init__(self, settings: ServeSettings):
        self.settings = settings
        self.pool = ParserPool(settings.jobs, settings.limits)
        self._running = asyncio.Semaphore(settings.jobs)
        self._unfinished = 0  # running and waiting
        self._jobs: dict[str, Job] = {}
        self._tasks: set[asyncio.Task] = set()

    def close(self) -> None:
        self.pool.close()

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def new_folder(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="checklist-eval-upload-"))

    def submit(self, folder: Path, names: list[str], assessor: str) -> Job:
        """Start checking the files saved in ``folder`` (which is removed when the check ends)."""
        if self._unfinished >= self.settings.queue + self.settings.jobs:
            shutil.rmtree(folder, ignore_errors=True)
            raise Busy
        self._forget_old()
        job = Job(id=secrets.token_urlsafe(18), name=", ".join(names), assessor=assessor)
        self._jobs[job.id] = job
        self._unfinished += 1
        task = asyncio.create_task(self._run(job, folder, names))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return job

    def _forget_old(self) -> None:
        now = time.monotonic()
        done = [j for j in self._jobs.values() if j.finished]
        for j in done:
            if now - j.created > self.settings.keep_s:
                del self._jobs[j.id]
        for j in sorted((j for j in self._jobs.values() if j.finished), key=lambda j: j.created)[
                : max(0, len(self._jobs) - self.settings.keep)]:
            del self._jobs[j.id]

    def config(self, assessor: str) -> AssessorConfig:
        if assessor == "llm" and self.settings.llm is not None:
            return self.settings.llm
        return AssessorConfig(assessor="heuristic")

    async def _run(self, job: Job, folder: Path, names: list[str]) -> None:
        try:
            async with self._running:
                await (self._check_paper(job, folder / names[0]) if len(names) == 1
                       else self._score_set(job, folder / SET_FOLDER))
        except ChecklistEvalError as err:
            job.error = _hide_folder(str(err), folder)
            job.status = "failed"
        except Exception as err:  # noqa: BLE001 - one author's bad file never takes the server down
            job.error = _hide_folder(f"the check failed: {type(err).__name__}: {err}", folder)
            job.status = "failed"
        finally:
            self._unfinished -= 1
            shutil.rmtree(folder, ignore_errors=True)

    async def _check_paper(self, job: Job, path: Path) -> None:
        job.status = "parsing"
        paper = _as_uploaded(await asyncio.to_thread(self.pool.load_paper, path), path)
        job.questions = [(it.id, it.title) for it in paper.checklist.items]
        job.status = "assessing"
        config = self.config(job.assessor)
        if config.assessor == "heuristic":  # CPU work (seconds for a long paper): in a thread, so the loop answers
            await asyncio.to_thread(asyncio.run, self._judge_and_render(job, paper, config))
        else:  # an LLM check waits on its endpoint, sharing the process's scheduler: on the server's loop
            await self._judge_and_render(job, paper, config)
        job.status = "done"

    async def _judge_and_render(self, job: Job, paper: Paper, config: AssessorConfig) -> None:
        from checklist_eval.challenge.report import paper_records, render_paper_report
        from checklist_eval.challenge.scoring import correctness
        from checklist_eval.summaries import CheckResult

        assessor = build_assessor(config)
        try:
            assessor.questions_planned += sum(1 for it in paper.checklist.items if it.is_answered)

            async def judge(item):
                assessment = await assessor.assess_item(paper, item)
                job.states[item.id] = (assessment.state or State.UNVERIFIED).value
                return assessment

            assessments = await gather_all(*(judge(it) for it in paper.checklist.items))
        finally:
            await assessor.aclose()
        paper = with_assessor_warnings(paper, assessor)
        job.document = CheckResult.of(paper, assessments, assessor=assessor.name, model=assessor.model,
                                      correctness=float(correctness(paper_records(paper, assessments))),
                                      usage=assessor.usage)
        job.html = render_paper_report(paper, assessments, assessor=assessor.name, model=assessor.model,
                                       usage=assessor.usage, prompt_version=assessor.prompt_version,
                                       links=next_links(job))

    async def _score_set(self, job: Job, folder: Path) -> None:
        from checklist_eval.challenge.batch import score_path
        from checklist_eval.challenge.report import render_submission_report

        job.status = "assessing"
        assessor = build_assessor(self.config(job.assessor))
        try:
            result = await score_path(folder, assessor, loader=self.pool)
        finally:
            await assessor.aclose()
        upload = folder.parent  # the server's folder for this upload: named in no page
        records = [r.model_copy(update={"source": _hide_folder(r.source, upload)}) for r in result.records]
        score = result.score.model_copy(update={"warnings": [_hide_folder(w, upload) for w in result.score.warnings]})
        report = result.report()
        job.document = report.model_copy(update={"warnings": [_hide_folder(w, upload) for w in report.warnings]})
        job.html = render_submission_report(score, records, usage=result.usage, title=f"Submission: {job.name}",
                                            links=next_links(job))
        job.questions = [(f"{r.role} {r.question_id}", r.question_title) for r in result.records]
        job.status = "done"


def next_links(job: Job) -> list[tuple[str, str]]:
    """Where an uploaded report leads: another upload, and this report's JSON (``check --json``'s shape)."""
    return [("Check another paper", "/"), ("This report as JSON", f"/api/check/{job.id}")]


def _as_uploaded(paper: Paper, path: Path) -> Paper:
    """The paper as its author named it: the server's temporary folder appears nowhere."""
    folder = path.parent
    return paper.model_copy(update={
        "source": path.name,
        "warnings": [w.model_copy(update={"message": _hide_folder(w.message, folder)}) for w in paper.warnings],
    })


def _hide_folder(text: str, folder: Path) -> str:
    return text.replace(f"{folder}/", "").replace(str(folder), "upload")
