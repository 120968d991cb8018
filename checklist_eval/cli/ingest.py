"""``checklist-eval ingest RESULTS --responses FILE``: finish a ``--via jsonl`` run from a results file
in the OpenAI batch output format (what vLLM's ``run_batch`` writes)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from checklist_eval.summaries import IngestSummary


def register(subparsers: argparse._SubParsersAction) -> None:
    from checklist_eval.cli.common import results_command

    p = results_command(
        subparsers, "ingest", run,
        help="read batch results (OpenAI batch output / vLLM run_batch) and finish a --via jsonl run",
        description=(
            "Read a results JSONL ({custom_id, response: {status_code, body}, error} per line) for the "
            "requests a `batch`/`score --via jsonl` run wrote, then score that run exactly as the online "
            "path would. Requests without a usable answer go online (--retry-via online) or into a "
            "follow-up requests file RESULTS/requests-followup-N.jsonl (default). Exit 2 on an unusable "
            "results file or RESULTS folder."
        ),
        results_help="the results folder of the --via jsonl run",
        json_help="print the counts as JSON",
    )
    p.add_argument("--responses", required=True, type=Path, metavar="FILE", help="results JSONL")
    p.add_argument("--retry-via", choices=("online", "jsonl"), default="jsonl",
                   help="where unanswered or unusable requests go (default jsonl: a follow-up file)")


async def _ingest(args: argparse.Namespace, record: dict) -> IngestSummary:
    from checklist_eval.assessors.llm.batch_replay import is_waiting
    from checklist_eval.challenge.batch import run_batch, score_path
    from checklist_eval.challenge.batch_api import BatchFlow
    from checklist_eval.challenge.results.folder import write_score_folder
    from checklist_eval.cli.via import build_assessor

    results = Path(args.results)
    assessor = build_assessor(record["options"], args.retry_via, key_when_sending=True)  # a key only to retry online
    flow = BatchFlow(assessor)
    try:
        counts = await flow.read_responses(args.responses)
        if record["command"] == "batch":
            from checklist_eval.challenge.results.settings import read_settings

            outcome = await run_batch(record["root"], results, assessor, jobs=int(record.get("jobs") or 4),
                                      settings=read_settings(results))
            waiting = sum(1 for f in outcome.failures if is_waiting(f.error))
            scored: dict[str, Any] = {"scored": outcome.scored, "resumed": outcome.resumed,
                                      "failed": len(outcome.failures) - waiting, "waiting": waiting,
                                      "usage": outcome.usage}
        else:
            try:
                result = await score_path(record["root"], assessor)
            except Exception:
                if not assessor.pending:
                    raise
                result = None
            if result is not None:
                write_score_folder(results, result, Path(record["root"]))
            scored = {"scored": int(result is not None), "failed": 0, "waiting": int(result is None),
                      "usage": result.usage if result else None}
        followup = None
        if assessor.pending:
            n = 1 + sum(1 for _ in results.glob("requests-followup-*.jsonl"))
            followup = results / f"requests-followup-{n}.jsonl"
            flow.write_requests_file(assessor.pending, followup)
        from checklist_eval.summaries import IngestSummary

        return IngestSummary(answers=counts, **scored, followup_requests=len(assessor.pending),
                             followup_file=str(followup) if followup else None, results=str(results))
    finally:
        await assessor.aclose()


def run(args: argparse.Namespace) -> int:
    import asyncio

    from checklist_eval.cli.output import emit
    from checklist_eval.cli.via import read_run_file

    record = read_run_file(Path(args.results))
    summary = asyncio.run(_ingest(args, record))
    code = emit(summary, args.json, lambda: _print_summary(summary))
    from checklist_eval.errors import EXIT_SOME_FAILED

    return EXIT_SOME_FAILED if code == 0 and summary.failed else code


def _print_summary(summary: IngestSummary) -> None:
    a = summary.answers
    print(f"read {a['ok']} answers ({a['error']} failed, {a['unknown']} not of this run, "
          f"{a['unreadable']} unreadable lines); {summary.scored} scored, {summary.failed} failed, "
          f"{summary.waiting} waiting for answers; "
          f"results in {summary.results}")
    if summary.followup_file:
        print(f"{summary.followup_requests} requests still need an answer: run {summary.followup_file} "
              f"and ingest its results")
