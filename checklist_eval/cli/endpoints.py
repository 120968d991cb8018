"""``checklist-eval endpoints [--cache PATH] [--json]``: the endpoints and models the cache knows, what each
was found to refuse (with the refusal it was learned from) and whether it has answered cleanly;
``checklist-eval endpoints forget URL [MODEL]`` clears that, so the next run asks the endpoint afresh."""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "endpoints",
        help="show (or forget) what the cache learned about each endpoint and model",
        description="List the endpoints and models the response cache knows: the output format in use, each "
                    "lesson learned from a refusal (the parameter no longer sent) with the HTTP status, an "
                    "excerpt of what the endpoint said and when, and whether it has answered cleanly. "
                    "`endpoints forget URL [MODEL]` clears those lessons (the cached verdicts stay); "
                    "`--refresh` on a run relearns them without clearing.",
    )
    p.add_argument("action", nargs="?", choices=("list", "forget"), default="list",
                   help="list (default) or forget")
    p.add_argument("url", nargs="?", default=None, metavar="URL", help="forget: the endpoint's base URL")
    p.add_argument("model", nargs="?", default=None, metavar="MODEL", help="forget: only this model")
    p.add_argument("--cache", metavar="PATH", default=None,
                   help="cache file, or a batch results folder (its cache.sqlite); default $CHECKLIST_EVAL_CACHE "
                        "or ~/.cache/checklist-eval/cache.sqlite")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=run)


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if ts else "-"


def run(args: argparse.Namespace) -> int:
    from checklist_eval.cli.logs import cache_file
    from checklist_eval.endpoint.cachefile import open_cache_db
    from checklist_eval.endpoint.lessons import forget, records
    from checklist_eval.errors import InputError, UsageError

    path = cache_file(args.cache)
    if args.action == "forget":
        if not args.url:
            raise UsageError("endpoints forget needs the endpoint's base URL (and optionally a model)")
        if not path.exists():
            raise InputError(path, "no cache file here: nothing was learned")
        db = open_cache_db(path)
        try:
            n = forget(db, args.url, args.model)
        finally:
            db.close()
        print(f"forgot {n} endpoint/model entr{'y' if n == 1 else 'ies'} in {path}")
        return 0
    if args.url or args.model:
        raise UsageError("endpoints: a URL goes with `forget` (endpoints forget URL [MODEL])")
    if not path.exists():
        found = []
    else:
        db = open_cache_db(path, read_only=True)
        try:
            found = records(db)
        finally:
            db.close()
    if args.json:
        print(json.dumps([r.to_dict() for r in found], indent=2, ensure_ascii=False))
        return 0
    if not found:
        print(f"no endpoint known in {path}")
        return 0
    for r in found:
        answered = f"answered cleanly {_when(r.answered)}" if r.answered else "no clean answer recorded"
        print(f"{r.endpoint}  model {r.model}: format {r.strategy or '-'}; {answered}; {r.verdicts} cached verdicts")
        if not r.lessons:
            print("  nothing learned: every parameter is sent as asked")
        for lesson in r.lessons:
            status = f"HTTP {lesson['status']}, " if lesson.get("status") else ""
            print(f"  - {lesson.get('lesson')} ({status}{_when(lesson.get('when'))}): {lesson.get('said', '')}")
    return 0
