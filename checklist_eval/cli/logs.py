"""``checklist-eval logs [--submission ID] [--question QID] [--json]``: what the model was asked and
what it answered, call by call, read from the cache's call log (to decide an appeal from evidence)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

from checklist_eval.cli.numbers import number


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "logs",
        help="show the model calls kept in the cache: the question asked and the raw reply",
        description="Show the logged model calls, oldest first: who and what was asked (submission, role, "
                    "paper, question), the model, endpoint, prompt version, strategy and sampling "
                    "parameters, and the reply exactly as received. The API key is never stored.",
    )
    p.add_argument("--cache", metavar="PATH", default=None,
                   help="cache file, or a batch results folder (its cache.sqlite); default $CHECKLIST_EVAL_CACHE "
                        "or ~/.cache/checklist-eval/cache.sqlite")
    p.add_argument("--submission", metavar="ID", default=None, help="only this submission's calls")
    p.add_argument("--question", metavar="QID", default=None, help="only this question's calls")
    p.add_argument("-n", "--count", type=number("--count", kind=int, low=1),
                   default=20, metavar="N", help="the newest N calls (default 20)")
    p.add_argument("--full-prompt", action="store_true",
                   help="also print the shared prompt (system message, paper, checklist) of each call")
    p.add_argument("--json", action="store_true", help="print the calls as a JSON list")
    p.set_defaults(func=run)


def cache_file(given: str | None) -> Path:
    from checklist_eval.assessors import default_cache_path
    from checklist_eval.challenge.results.folder import ResultsFolder

    path = Path(given) if given else default_cache_path()
    return ResultsFolder(path).layout.cache if path.is_dir() else path


def run(args: argparse.Namespace) -> int:
    from checklist_eval.endpoint.calllog import prompt_messages, read_calls

    path = cache_file(args.cache)
    if not path.exists() and heuristic_results(args.cache):
        return _no_model_calls(args)
    calls = read_calls(path, submission=args.submission, question=args.question, limit=args.count)
    if args.full_prompt or args.json:
        prompts: dict[str, list] = {}
        for c in calls:
            if args.full_prompt:
                if c["prefix_digest"] not in prompts:
                    prompts[c["prefix_digest"]] = prompt_messages(path, c["prefix_digest"])
                c["prompt_messages"] = prompts[c["prefix_digest"]]
    from pydantic import RootModel

    from checklist_eval.cli.output import emit
    from checklist_eval.summaries import LoggedCall

    logged = RootModel[list[LoggedCall]]([LoggedCall.model_validate(c) for c in calls])
    return emit(logged, args.json, lambda: _print_calls(calls, path, args), indent=1, ensure_ascii=False)


def heuristic_results(given: str | None) -> bool:
    """A batch results folder scored by the heuristic assessor (which calls no model, keeps no cache)."""
    from checklist_eval.challenge.results.folder import ResultsFolder
    from checklist_eval.fsutil import read_json_file

    if not given or not Path(given).is_dir():
        return False
    folder = ResultsFolder(given)
    settings = folder.settings()  # run_settings.json, else each result.json's
    if settings is not None:
        return settings.assessor == "heuristic"
    # a folder written before run settings were kept: its summary names the assessor (read capped: the
    # folder may be hostile)
    summary = read_json_file(folder.layout.summary_json)
    return isinstance(summary, dict) and summary.get("assessor") == "heuristic"


def _no_model_calls(args: argparse.Namespace) -> int:
    if args.json:
        print("[]")
    else:
        print(f"{args.cache}: scored by the heuristic assessor, which makes no model calls: there is no call "
              "to show (the verdicts and their reasons are in records.csv and each report.html)")
    return 0


def _print_calls(calls: list[dict], path: Path, args: argparse.Namespace) -> None:
    if not calls:
        print(f"no logged calls in {path}" + _filters(args), file=sys.stderr)
    for c in calls:
        sys.stdout.write(render_call(c))


def _filters(args) -> str:
    parts = [f"{k} {v}" for k, v in (("submission", args.submission), ("question", args.question)) if v]
    return f" for {', '.join(parts)}" if parts else ""


def render_call(c: dict) -> str:
    from checklist_eval.endpoint.calllog import reply_content

    when = datetime.fromtimestamp(c["created"], timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    who = " / ".join(x for x in (c["submission_id"], c["role"]) if x) or "(no submission)"
    params = ", ".join(f"{k}={v}" for k, v in c["params"].items())
    usage = (c["response"] or {}).get("usage") if isinstance(c["response"], dict) else None
    lines = [
        f"# {when}  {who}  question {c['question_id']}  [{c['outcome']}]",
        "",
        f"paper: {c['source']}",
        f"model: {c['model']} at {c['endpoint']}; prompt {c['prompt_version']}; {params}",
    ]
    if usage:
        lines.append(f"usage: {json.dumps(usage)}")
    if c.get("prompt_messages"):
        lines += ["", "## Shared prompt", ""]
        lines += [f"[{m.get('role')}]\n{m.get('content')}\n" for m in c["prompt_messages"]]
    lines += ["", "## Question asked", "", c["question"], "", "## Reply", "", reply_content(c["response"]), "", ""]
    return "\n".join(lines)
