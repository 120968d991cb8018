"""``checklist-eval batch-status RESULTS``: where the batch jobs of a run stand (and download finished ones)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    from checklist_eval.cli.common import results_command

    p = results_command(
        subparsers, "batch-status", run,
        help="status of a run's provider batch jobs; downloads finished ones",
        description=(
            "List the batch jobs recorded in RESULTS/cache.sqlite (or --cache), ask the provider about "
            "unfinished ones (key from the environment variable the run used) and download the answers "
            "of finished ones, so that rerunning the `batch --via batch-api` command only scores. Exit 2 "
            "when no jobs are recorded."
        ),
        results_help="results folder of a --via batch-api run",
        json_help="print a JSON list of jobs",
    )
    p.add_argument("--cache", type=Path, default=None, metavar="PATH", help="the run's cache file, if not "
                   "RESULTS/cache.sqlite")
    p.add_argument("--offline", action="store_true", help="show the recorded state without asking the provider")


async def _refresh(cache_path: Path, offline: bool) -> tuple[list, list[str]]:
    from checklist_eval.challenge.batch_api import BatchFlow, read_jobs
    from checklist_eval.cli.via import build_assessor
    from checklist_eval.endpoint.cache import Cache
    from checklist_eval.errors import AssessorError

    notes: list[str] = []
    cache = Cache(cache_path)
    try:
        jobs = read_jobs(cache)
    finally:
        cache.close()
    if offline:
        return jobs, notes
    groups = {(j.base_url, j.api_key_env, j.model) for j in jobs if j.kind == "batch-api" and not j.downloaded}
    for base_url, key_env, model in sorted(groups, key=str):
        try:
            assessor = build_assessor({"model": model, "base_url": base_url, "api_key_env": key_env,
                                       "cache_path": cache_path}, "online")
        except AssessorError as err:
            notes.append(f"not asked ({model}): {err}")
            continue
        try:
            flow = BatchFlow(assessor)
            for job in flow.jobs():
                if not job.downloaded and job.batch_id:
                    await flow.refresh(job)
        except AssessorError as err:
            notes.append(str(err))
        finally:
            await assessor.aclose()
    cache = Cache(cache_path)
    try:
        return read_jobs(cache), notes
    finally:
        cache.close()


def run(args: argparse.Namespace) -> int:
    import asyncio

    from pydantic import RootModel

    from checklist_eval.challenge.batch_api import JobStatus
    from checklist_eval.challenge.results.layout import ResultsLayout
    from checklist_eval.cli.output import emit
    from checklist_eval.errors import InputError

    cache_path = args.cache or ResultsLayout(args.results).cache
    if not cache_path.is_file():
        raise InputError(cache_path, "no cache file, so no batch jobs recorded")
    jobs, notes = asyncio.run(_refresh(cache_path, args.offline))
    if not jobs:
        raise InputError(cache_path, "no batch jobs recorded")
    emit(RootModel[list[JobStatus]]([j.public() for j in jobs]), args.json, lambda: _print_jobs(jobs))
    for note in notes:
        print(f"checklist-eval: {note}", file=__import__("sys").stderr)
    return 0


def _print_jobs(jobs) -> None:
    for j in jobs:
        c = j.counts
        print(f"{j.name}  {j.kind:9}  {j.model}  {j.batch_id or '-'}  {j.status:11}  "
              f"{c.get('completed', 0)}/{j.requests} done, {c.get('failed', 0)} failed"
              f"{'  downloaded' if j.downloaded else ''}")
    waiting = sum(1 for j in jobs if j.kind == "batch-api" and not j.downloaded)
    print(f"{len(jobs)} jobs, {waiting} unfinished" + ("" if waiting else
          "; rerun the batch command with --via batch-api to score"))
