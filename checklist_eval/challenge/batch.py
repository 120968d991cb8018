"""Scoring submissions: one at a time (``score``) or a whole challenge (``batch``).

A batch uses ONE assessor instance for every submission, so every model call goes through that
assessor's single concurrency/rate-bounded scheduler and its one cache. ``jobs`` only bounds how many
submissions are parsed and in flight at once (memory), not how many requests are.

Every batch is a run of the folder's ``results.sqlite`` (see ``results.store``). A submission is
finished when its records and scores are committed there (one transaction). A rerun copies each
submission finished in an earlier run from the same source files and settings (fingerprint) into its
own run, and the assessor's cache answers whatever a killed run had already asked, so an interrupted
batch repeats no request. Until the run completes, every reader goes on showing the last complete one.

Flat memory: a submission's records go to the database as soon as it is finished, and the run keeps
only its score, warnings and usage (``BatchEntry``). When the run ends, every file of the folder is
exported from the database (``results.exports``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

from checklist_eval.assessors.base import Assessor, gather_all
from checklist_eval.challenge.records import Record, records_from_assessments
from checklist_eval.challenge.results.layout import ResultsLayout
from checklist_eval.challenge.results.leaderboard import Failure
from checklist_eval.challenge.results.lock import environment_error, locked_out
from checklist_eval.challenge.results.outputs import SubmissionResult
from checklist_eval.challenge.results.settings import RunSettings
from checklist_eval.challenge.results.store import (
    COMPLETE,
    STOPPED,
    ResultsStore,
    StorageRefused,
    paper_digests,
    source_fingerprint,
)
from checklist_eval.challenge.scoring import PublicScore, SubmissionScore, score_submission
from checklist_eval.challenge.submissions import (
    LoadedSubmission,
    PaperLoader,
    find_submissions,
    load_submission,
    open_submission,
    submission_id_of,
)
from checklist_eval.endpoint.calllog import CURRENT_PAPER
from checklist_eval.errors import BudgetExceeded, InputError
from checklist_eval.fsutil import remove_stale_temps
from checklist_eval.models import Assessment, Model, Usage
from checklist_eval.reading.isolation import ParseLimits, ParserPool


@dataclass
class BatchEntry:
    """What a batch keeps of a finished submission once its records are in the ledger (under
    ``folder_id``, the name of its results folder)."""

    folder_id: str
    score: SubmissionScore
    all_warnings: list[str]
    usage: Usage

    @property
    def submission_id(self) -> str:
        return self.score.submission_id


class BatchSummary(Model):
    """``summary.json`` of a batch results folder."""

    root: str
    started_at: str
    finished_at: str
    wall_s: float
    submissions: int
    scored: int
    resumed: int
    failed: int
    assessor: str
    model: str | None
    prompt_version: str | None
    usage_this_run: Usage
    usage_total: Usage
    scores: list[PublicScore]
    failures: list[Failure]
    # the run of results.sqlite this export shows, and the database's generation it was written from
    run: int | None = None
    generation: int | None = None


class BatchCounts(Model):
    """What ``batch --json`` prints: the run's counts, what it spent and where its summary is."""

    submissions: int
    scored: int
    resumed: int
    failed: int
    wall_s: float
    usage: Usage
    summary: str


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def assessor_identity(assessor: Assessor) -> dict[str, str | None]:
    return {
        "assessor": assessor.name,
        "model": getattr(assessor, "model", None),
        "prompt_version": getattr(assessor, "prompt_version", None),
    }


def _fresh_usage(assessments: Sequence[Assessment]) -> Usage:
    """What this run spent: cached verdicts cost nothing now."""
    return sum((a.provenance.usage for a in assessments if not a.provenance.cached), Usage())


async def assess_loaded(
    loaded: LoadedSubmission, assessor: Assessor, *, source: str, fingerprint: str
) -> SubmissionResult:
    """Assess every paper of a parsed submission (all at once: the scheduler bounds the calls)."""
    roles = list(loaded.papers)

    async def assess(role):
        CURRENT_PAPER.set((loaded.id, role))  # task-local: tells the call log whose call this is
        return await assessor.assess_paper(loaded.papers[role])

    results = await gather_all(*(assess(r) for r in roles))
    scored_at = now_iso()
    records: list[Record] = []
    for role, assessments in zip(roles, results, strict=True):
        records += records_from_assessments(
            loaded.id, role, loaded.papers[role], assessments, case=loaded.case, scored_at=scored_at
        )
    usage = sum((_fresh_usage(assessments) for assessments in results), Usage())
    warnings = list(loaded.warnings)
    for role in roles:
        paper = loaded.papers[role]
        warnings += [f"{role}: {w}" for w in [*paper.warnings, *assessor.paper_warnings(paper)]]
    ident = assessor_identity(assessor)
    return SubmissionResult(
        submission_id=loaded.id,
        source=source,
        fingerprint=fingerprint,
        case=loaded.case,
        scored_at=scored_at,
        score=score_submission(loaded.id, records),
        usage=usage,
        warnings=warnings,
        records=records,
        **ident,
    )


def _parse_submission(path: Path, submission_id: str | None = None,
                      loader: PaperLoader | None = None) -> LoadedSubmission:
    """Validate and parse one submission (no hashing: callers fingerprint it once, themselves)."""
    return load_submission(open_submission(path), submission_id=submission_id, loader=loader)


def _parse_and_fingerprint(path: Path, loader: PaperLoader | None) -> tuple[LoadedSubmission, str]:
    return _parse_submission(path, loader=loader), source_fingerprint(path)


async def score_path(path: str | Path, assessor: Assessor, loader: PaperLoader | None = None) -> SubmissionResult:
    """Validate, parse and assess one submission folder or zip (``loader``: the parsing workers; by
    default one under the default limits)."""
    path = Path(path)
    loaded, fingerprint = await asyncio.to_thread(_parse_and_fingerprint, path, loader)
    return await assess_loaded(loaded, assessor, source=str(path), fingerprint=fingerprint)


def submission_estimate(loaded: LoadedSubmission, assessor: Assessor) -> float:
    """What assessing the submission is expected to cost: the dry run's figure (answers the cache holds
    cost nothing)."""
    from checklist_eval.assessors.config import AssessorConfig
    from checklist_eval.challenge.costplan import plan_papers

    llm = cast(Any, assessor)  # an assessor with a budget is the LLM assessor, which has its config
    config = AssessorConfig(assessor="llm", **llm.config.model_dump())
    plan = plan_papers([(f"{loaded.id}/{role}", paper) for role, paper in loaded.papers.items()], config)
    return plan.cost_usd or 0.0


# --------------------------------------------------------------------------------------------- batch


@dataclass
class BatchOutcome:
    results: list[BatchEntry]  # in submission order; their records are in the results folder's ledger
    failures: list[Failure]
    scored: int = 0
    resumed: int = 0
    usage: Usage = field(default_factory=Usage)
    wall_s: float = 0.0
    summary_path: Path | None = None

    def counts(self) -> BatchCounts:
        return BatchCounts(submissions=len(self.results) + len(self.failures), scored=self.scored,
                           resumed=self.resumed, failed=len(self.failures), wall_s=self.wall_s,
                           usage=self.usage, summary=str(self.summary_path))


def result_ids(paths: Sequence[Path]) -> dict[Path, str]:
    """A distinct results-folder id per submission, whatever the names.

    The id is the name made safe (``submission_id_of``) when no other submission's safe name equals it,
    compared case-insensitively (a results folder may live on a case-insensitive disk). Within a group
    that collides ("team a/", "team_a/", "Team_A.zip"), a member whose name already is the safe name
    keeps it; every other member gets ``<safe name>-<first 6 hex of sha256(its name)>``, lengthened
    until no id in the run is taken. The result does not depend on the order of ``paths``.
    """
    slugs = {p: submission_id_of(p) for p in paths}
    groups: dict[str, list[Path]] = {}
    for p in sorted(paths, key=lambda q: q.name):
        groups.setdefault(slugs[p].casefold(), []).append(p)
    ids: dict[Path, str] = {}
    for members in groups.values():
        natural = [p for p in members if p.name == slugs[p]]
        owner = members[0] if len(members) == 1 else (natural[0] if len(natural) == 1 else None)
        if owner is not None:
            ids[owner] = slugs[owner]
    taken = {sid.casefold() for sid in ids.values()}
    for members in groups.values():
        for p in members:
            if p in ids:
                continue
            digest = hashlib.sha256(p.name.encode("utf-8", "surrogateescape")).hexdigest()
            sid = next(c for n in (6, 12, 64) if (c := f"{slugs[p]}-{digest[:n]}").casefold() not in taken)
            ids[p] = sid
            taken.add(sid.casefold())
    return ids


def one_line(err: BaseException) -> str:
    if isinstance(err, InputError):
        return str(err)
    text = " ".join(str(err).split()) or "(no message)"
    return f"{type(err).__name__}: {text}"


ProgressHook = Callable[[str, int, int, str], None]  # (event, done, total, the submission that finished)


class BatchRunner:
    """Scores every submission under ``root`` into ``out`` with one shared assessor."""

    def __init__(self, root: str | Path, out: str | Path, assessor: Assessor, *, jobs: int = 4,
                 on_progress: ProgressHook | None = None, parse_limits: ParseLimits | None = None,
                 settings: RunSettings | None = None):
        self.root = Path(root)
        self.settings = settings
        self.out = Path(out)
        self.layout = ResultsLayout(self.out)
        self.assessor = assessor
        self.jobs = max(1, jobs)
        self.on_progress = on_progress or (lambda event, done, total, submission: None)
        self.parse_limits = parse_limits
        self.pool: ParserPool | None = None
        self.store: ResultsStore | None = None
        self.run_id = 0
        self.positions: dict[str, int] = {}

    def _store(self) -> ResultsStore:
        assert self.store is not None, "the run's database is opened by run()"
        return self.store

    async def _one(self, path: Path, sid: str, fingerprint: str, sem: asyncio.Semaphore) -> BatchEntry:
        """Parse and assess one submission and commit it (records and scores, one transaction);
        ``fingerprint`` was computed once, by ``run``."""
        async with sem:
            loaded = await asyncio.to_thread(_parse_submission, path, sid, self.pool)
            with await self._admitted(loaded):
                result = await assess_loaded(loaded, self.assessor, source=str(path), fingerprint=fingerprint)
            result.settings = self.settings
            score = await asyncio.to_thread(self._commit, path, sid, result)
            return BatchEntry(folder_id=sid, score=score, all_warnings=result.warnings + score.warnings,
                              usage=result.usage)

    def _commit(self, path: Path, sid: str, result: SubmissionResult) -> SubmissionScore:
        return self._store().commit_submission(self.run_id, result, name=path.name, papers=paper_digests(path),
                                               position=self.positions[sid])

    async def _admitted(self, loaded: LoadedSubmission) -> contextlib.AbstractContextManager:
        """Under ``--max-cost``: the submission starts only if its estimate fits what is left (else
        BudgetExceeded: not started, left for the resumed run), and then finishes whatever it costs."""
        from checklist_eval.endpoint.budget import ADMITTED

        budget = getattr(self.assessor, "budget", None)
        if budget is None:
            return contextlib.nullcontext()
        estimate = await asyncio.to_thread(submission_estimate, loaded, self.assessor)
        allowance = budget.admit(estimate)

        @contextlib.contextmanager
        def admitted():
            token = ADMITTED.set(allowance)
            try:
                yield
            finally:
                ADMITTED.reset(token)
                budget.release(allowance)

        return admitted()

    async def _one_safe(self, path: Path, sid: str, fingerprint: str, sem: asyncio.Semaphore):
        """(path, result, None) or (path, None, one-line error): one bad submission never stops the batch."""
        try:
            return path, await self._one(path, sid, fingerprint, sem), None
        except asyncio.CancelledError:
            raise
        except BudgetExceeded as err:  # not this submission's fault: it is left for the resumed run
            return path, None, err
        except StorageRefused:  # the database cannot be written: every other submission would fail alike
            raise
        except Exception as err:
            refused = environment_error(err, self.out, storage_only=True)
            if refused is not None:  # disk full, read-only: every other submission would fail the same way
                raise refused from None
            return path, None, one_line(err)

    def _ids(self, paths: list[Path]) -> dict[Path, str]:
        return result_ids(paths)

    async def run(self) -> BatchOutcome:
        # Papers are parsed in isolated worker processes, one per core: a paper that crashes, hangs
        # or exhausts its worker fails alone, and the native PDF library never runs in two threads.
        with ParserPool(None, self.parse_limits) as self.pool:
            return await self._run()

    async def _run(self) -> BatchOutcome:
        from checklist_eval.challenge.results.adopt import has_legacy_files
        from checklist_eval.challenge.results.folder import ResultsFolder

        started = time.perf_counter()
        started_at = now_iso()
        paths = find_submissions(self.root)
        if not self.layout.db.is_file() and has_legacy_files(self.out):
            ResultsFolder.open(self.out)  # a folder from before the database: imported (or refused) first
        with locked_out(self.out):
            remove_stale_temps(self.out)  # a previous run killed mid-write; we hold the folder now
            with ResultsStore(self.out) as self.store:
                self.run_id = self.store.begin_run("batch", self.settings, assessor_identity(self.assessor),
                                                   str(self.root), expected=len(paths))
                try:
                    return await self._run_locked(paths, started, started_at)
                except BaseException:
                    with contextlib.suppress(Exception):  # the run ended here: readers say interrupted
                        self.store.finish_run(self.run_id, "interrupted", [], None)
                    raise

    async def _run_locked(self, paths: list[Path], started: float, started_at: str) -> BatchOutcome:
        ids = self._ids(paths)
        self.positions = {ids[p]: i for i, p in enumerate(paths)}
        usage_before = self.assessor.usage
        outcome = BatchOutcome(results=[], failures=[])
        done_by_path, todo = await self._resume(paths, ids)
        outcome.resumed = len(done_by_path)
        self.on_progress("start", len(done_by_path), len(paths), "")
        sem = asyncio.Semaphore(self.jobs)
        tasks = [asyncio.ensure_future(self._one_safe(p, ids[p], fp, sem)) for p, fp in todo.items()]
        failures_by_path, stopped = await self._collect(tasks, ids, outcome, done_by_path, len(paths))
        outcome.results = [done_by_path[p] for p in paths if p in done_by_path]
        outcome.failures = [failures_by_path[p] for p in paths if p in failures_by_path]
        outcome.usage = self.assessor.usage - usage_before
        outcome.wall_s = time.perf_counter() - started
        outcome.summary_path = await asyncio.to_thread(self._finish, outcome, started_at, stopped is not None)
        if stopped is not None:  # the finished submissions are committed; the rest wait for the rerun
            raise stopped
        return outcome

    async def _resume(self, paths: list[Path], ids: dict[Path, str]
                      ) -> tuple[dict[Path, BatchEntry], dict[Path, str]]:
        """(submissions already finished in an earlier run for this very source, copied into this
        run; path -> fingerprint of the rest)."""
        todo: dict[Path, str] = {}  # path -> fingerprint, hashed once here and passed on
        done_by_path: dict[Path, BatchEntry] = {}
        for p in paths:
            fingerprint = await asyncio.to_thread(source_fingerprint, p)
            finished = await asyncio.to_thread(self._resumed, ids[p], fingerprint)
            if finished is not None:
                done_by_path[p] = finished
            else:
                todo[p] = fingerprint
        return done_by_path, todo

    def _resumed(self, sid: str, fingerprint: str) -> BatchEntry | None:
        store = self._store()
        found = store.finished(sid, fingerprint, self.settings, assessor_identity(self.assessor))
        if found is None:
            return None
        from_run, result = found
        score = store.copy_submission(from_run, self.run_id, sid, self.positions[sid])
        return BatchEntry(folder_id=sid, score=score, all_warnings=result.warnings + score.warnings,
                          usage=result.usage)

    async def _collect(self, tasks: Sequence[asyncio.Future], ids: dict[Path, str], outcome: BatchOutcome,
                       done_by_path: dict[Path, BatchEntry], total: int
                       ) -> tuple[dict[Path, Failure], BudgetExceeded | None]:
        """Await the submissions as they finish, adding results to ``done_by_path``; returns the failures
        and the budget stop, if one came."""
        done = len(done_by_path)
        failures_by_path: dict[Path, Failure] = {}
        stopped: BudgetExceeded | None = None
        try:
            for fut in asyncio.as_completed(tasks):
                path, result, err = await fut
                if isinstance(err, BudgetExceeded):
                    stopped = err
                    continue
                if result is not None:
                    done_by_path[path] = result
                    outcome.scored += 1
                else:
                    failures_by_path[path] = Failure(submission_id=ids[path], source=str(path), error=err)
                done += 1
                self.on_progress("done" if result is not None else "failed", done, total, ids[path])
        except BaseException:  # the run stops (full disk, interrupt): no submission goes on unwatched
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return failures_by_path, stopped

    def _finish(self, outcome: BatchOutcome, started_at: str, stopped: bool) -> Path:
        """End the run (complete, or stopped by the budget) with its failures and summary, in one
        transaction, then export the folder from the database."""
        from checklist_eval.challenge.results.exports import write_exports

        counts = outcome.counts()
        summary = BatchSummary(
            root=str(self.root),
            started_at=started_at,
            finished_at=now_iso(),
            wall_s=outcome.wall_s,
            submissions=counts.submissions,
            scored=counts.scored,
            resumed=counts.resumed,
            failed=counts.failed,
            **assessor_identity(self.assessor),
            usage_this_run=outcome.usage,
            usage_total=sum((res.usage for res in outcome.results), Usage()),
            scores=[res.score.public() for res in outcome.results],
            failures=outcome.failures,
        )
        store = self._store()
        store.finish_run(self.run_id, STOPPED if stopped else COMPLETE, outcome.failures,
                         summary.model_dump(mode="json"))
        write_exports(store)
        return self.layout.summary_json


async def run_batch(root: str | Path, out: str | Path, assessor: Assessor, *, jobs: int = 4,
                    on_progress: ProgressHook | None = None, parse_limits: ParseLimits | None = None,
                    settings: RunSettings | None = None) -> BatchOutcome:
    return await BatchRunner(root, out, assessor, jobs=jobs, on_progress=on_progress,
                             parse_limits=parse_limits, settings=settings).run()
