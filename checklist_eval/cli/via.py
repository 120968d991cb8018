"""``--via online|batch-api|jsonl`` for ``batch`` and ``score``: where the assessment requests go.

The orchestration is ``checklist_eval.challenge.batch_api``; this module holds the flags, the run file that lets
``ingest`` and ``batch-status`` find a run again, and the two command hooks.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from checklist_eval.challenge.results.layout import ResultsLayout
from checklist_eval.cli.numbers import number
from checklist_eval.fsutil import loads_json

VIA = ("online", "batch-api", "jsonl")
MAX_RUN_FILE_BYTES = 16 << 20  # the run record (options and ids) of even a huge batch is far smaller


def add_via_args(parser: argparse.ArgumentParser, default: str | None = "online") -> None:
    """``default`` None: the command settles the path itself (``batch`` goes on by its folder's)."""
    g = parser.add_argument_group("batch jobs (--assessor llm)")
    said = "default" if default == "online" else "default: the results folder's recorded path, else online"
    g.add_argument("--via", choices=VIA, default=default,
                   help=f"online: one request per question ({said}); batch-api: provider batch jobs "
                        "(/v1/files + /v1/batches, batch prices, up to 24 h); jsonl: write the requests "
                        "to --requests-out for an offline engine, then 'checklist-eval ingest'")
    g.add_argument("--requests-out", type=Path, default=None, metavar="FILE",
                   help="with --via jsonl: the requests file to write")
    g.add_argument("--submit-only", action="store_true",
                   help="with --via batch-api: upload and create the batches, then exit; rerun the same "
                        "command (or see 'checklist-eval batch-status') to finish")
    g.add_argument("--retry-via", choices=("online", "batch-api"), default="online",
                   help="where requests that failed or came back unusable in a batch go (default online)")
    g.add_argument("--batch-max-requests", type=number("--batch-max-requests", kind=int, low=1),
                   default=None, metavar="N",
                   help="requests per uploaded file at most (default 50000, the OpenAI limit)")
    g.add_argument("--batch-max-mb", type=number("--batch-max-mb", low=0, low_open=True, high=1e6),
                   default=None, metavar="MB",
                   help="megabytes per uploaded file at most (default 200, the OpenAI limit)")


def _check(args: argparse.Namespace, drain: bool = False) -> None:
    from checklist_eval.errors import InputError

    if drain:
        return  # an online run finishing a batch-api folder's jobs: the online flags apply
    if getattr(args, "assessor", "heuristic") != "llm":
        raise InputError(None, f"--via {args.via} needs --assessor llm (the heuristic assessor sends no requests)")
    if args.via == "jsonl" and args.requests_out is None:
        raise InputError(None, "--via jsonl needs --requests-out FILE")
    if args.via != "batch-api" and args.submit_only:
        raise InputError(None, "--submit-only goes with --via batch-api")
    if getattr(args, "refresh", False):
        raise InputError(None, f"--refresh is for online runs; for fresh --via {args.via} answers "
                               "use a new --cache file")


def build_assessor(options: dict[str, Any], retry_via: str, *, key_when_sending: bool = False):
    """``key_when_sending``: the run writes its requests to a file (``--via jsonl``, ``ingest``), so no API
    key is asked for unless a request is to be sent (a retry online)."""
    from checklist_eval.assessors import LLMConfig
    from checklist_eval.assessors.llm.batch_replay import BatchAssessor

    return BatchAssessor(LLMConfig.from_options(**options), retry_via=retry_via, key_when_sending=key_when_sending)


def _options(args: argparse.Namespace, cache: Path | None) -> dict[str, Any]:
    from checklist_eval.cli.flags import llm_options

    return llm_options(args, cache)


def _flow(assessor, args: argparse.Namespace, quiet: bool):
    from checklist_eval.challenge.batch_api import MAX_BYTES, MAX_REQUESTS, BatchFlow, Limits

    limits = Limits(
        max_requests=max(1, args.batch_max_requests or MAX_REQUESTS),
        max_bytes=int(args.batch_max_mb * 1024 * 1024) if args.batch_max_mb else MAX_BYTES)
    return BatchFlow(assessor, limits=limits, say=_say(quiet))


def _say(quiet: bool):
    def say(text: str) -> None:
        if not quiet:
            print(f"checklist-eval: {text}", file=sys.stderr, flush=True)
    return say


def write_run_file(out: Path, record: dict[str, Any]) -> None:
    from checklist_eval.fsutil import atomic_write_text
    from checklist_eval.redact import public_url

    options = {k: (str(v) if isinstance(v, Path) else v) for k, v in record["options"].items()}
    options["base_url"] = public_url(options.get("base_url"))
    atomic_write_text(ResultsLayout(out).run_file, json.dumps(record | {"options": options}, indent=1))


def read_run_file(results: Path) -> dict[str, Any]:
    from checklist_eval.errors import InputError

    path = ResultsLayout(results).run_file
    try:
        with path.open("rb") as fh:  # the folder may be hostile: a run record is a few KB
            raw = fh.read(MAX_RUN_FILE_BYTES + 1)
        if len(raw) > MAX_RUN_FILE_BYTES:
            raise ValueError(f"larger than {MAX_RUN_FILE_BYTES >> 20} MB, not one a run wrote")
        data = loads_json(raw)
        if not isinstance(data, dict) or not isinstance(data.get("options"), dict):
            raise ValueError("not a run record")
    except FileNotFoundError:
        raise InputError(path, "no batch run recorded here (run `batch --via jsonl|batch-api` first)") from None
    except (OSError, ValueError) as err:
        raise InputError(path, f"unreadable run record ({err})") from None
    for key in ("cache_path", "prices"):
        if data["options"].get(key):
            data["options"][key] = Path(data["options"][key])
    return data


async def run_batch_via(args: argparse.Namespace, out: Path, cache: Path, quiet: bool, settings=None,
                        drain: bool = False):
    """The ``batch`` command with --via batch-api|jsonl: a BatchOutcome, or None when the run stops
    before scoring (requests written, batches submitted). ``drain``: an online run finishing a batch-api
    folder: the jobs already submitted are waited for and used, nothing new is submitted, the rest goes
    online."""
    from checklist_eval.challenge.batch import run_batch
    from checklist_eval.challenge.batch_api import run_rounds
    from checklist_eval.challenge.submissions import find_submissions
    from checklist_eval.cli.flags import parse_limits
    from checklist_eval.reading.isolation import ParserPool

    _check(args, drain)
    paths = find_submissions(args.root)
    options = _options(args, cache)
    write_run_file(out, {"command": "batch", "root": str(Path(args.root).resolve()), "out": str(out.resolve()),
                         "jobs": args.jobs, "options": options})
    assessor = build_assessor(options, "online" if drain else args.retry_via, key_when_sending=args.via == "jsonl")
    flow = _flow(assessor, args, quiet)
    limits = parse_limits(args)
    try:
        async def replay():
            return await run_batch(args.root, out, assessor, jobs=args.jobs, parse_limits=limits, settings=settings)

        with ParserPool(args.jobs, limits) as pool:  # collection parses in the same isolated workers
            if args.via == "jsonl":
                return await _jsonl(flow, paths, args, replay, pool)
            result = await run_rounds(flow, paths, replay, submit_only=args.submit_only and not drain,
                                      jobs=args.jobs, loader=pool, submit_new=not drain)
        if result is None:
            print(f"submitted; check with `checklist-eval batch-status {out}`, finish by rerunning this command")
        return result
    finally:
        await assessor.aclose()


async def score_via(args: argparse.Namespace):
    """The ``score`` command with --via: a SubmissionResult, or None when the run stops before scoring."""
    from checklist_eval.assessors import default_cache_path
    from checklist_eval.challenge.batch import score_path
    from checklist_eval.challenge.batch_api import run_rounds
    from checklist_eval.cli.flags import parse_limits
    from checklist_eval.reading.isolation import ParserPool

    _check(args)
    options = _options(args, None)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        write_run_file(Path(args.out), {"command": "score", "root": str(Path(args.submission).resolve()),
                                        "out": str(Path(args.out).resolve()), "jobs": 1, "options": options})
    assessor = build_assessor(options | {"cache_path": options.get("cache_path") or default_cache_path()},
                              args.retry_via, key_when_sending=args.via == "jsonl")
    flow = _flow(assessor, args, getattr(args, "json", False))
    paths = [Path(args.submission)]
    try:
        with ParserPool(1, parse_limits(args)) as pool:
            async def replay():
                return await score_path(args.submission, assessor, loader=pool)

            if args.via == "jsonl":
                return await _jsonl(flow, paths, args, replay, pool)
            result = await run_rounds(flow, paths, replay, submit_only=args.submit_only, loader=pool)
        if result is None:
            print("submitted; finish by rerunning this command")
        return result
    finally:
        await assessor.aclose()


async def _jsonl(flow, paths, args, replay, loader):
    if any(job.batch_id and not job.downloaded for job in flow.jobs()):
        # A batch-api run's jobs at the provider answer their requests (and are paid for): waited for and
        # used, as an online finish does, rather than asked again online or left out of the file.
        flow.say("waiting for the batch jobs this folder already submitted")
        await flow.wait()
    requests = await flow.collect(paths, loader=loader)
    if not requests:  # everything answered already: score now
        return await replay()
    flow.write_requests_file(requests, args.requests_out)
    print(f"{len(requests)} requests written to {args.requests_out}; run them (e.g. python -m "
          f"vllm.entrypoints.openai.run_batch -i {args.requests_out} -o results.jsonl --model "
          f"{flow.assessor.model}) and then {_ingest_step(args)}")
    return None


def _ingest_step(args: argparse.Namespace) -> str:
    """The command that finishes the run, with its real results folder (the one holding the run file)."""
    import shlex

    if not getattr(args, "out", None):  # a score run without --out keeps no run file to ingest from
        return "rerun with --out DIR to keep the run, then `checklist-eval ingest DIR --responses results.jsonl`"
    return f"`checklist-eval ingest {shlex.quote(str(args.out))} --responses results.jsonl`"
