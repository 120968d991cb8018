"""``checklist-eval codabench export --out bundle.zip ...``: a ready-to-upload Codabench bundle."""

from __future__ import annotations

import argparse
from pathlib import Path

from checklist_eval.cli.numbers import number


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "codabench",
        help="Codabench competition bundle (export)",
        description="Codabench integration: `export` writes a competition bundle (format version 2).",
    )
    sub = p.add_subparsers(dest="codabench_command", metavar="SUBCOMMAND")
    e = sub.add_parser(
        "export",
        help="write a competition bundle zip",
        description=(
            "Write a Codabench competition bundle: competition.yaml (version 2, leaderboard columns "
            "S, C_G, C_A, C_T, R ranked by S, detailed results on), pages from the README's rules, a "
            "scoring program over this package, per-phase assessor settings and a Dockerfile for the "
            "worker image. Without --model the phases use the offline heuristic assessor. No API key is "
            "written: the worker reads it from its environment."
        ),
    )
    e.add_argument("--out", required=True, type=Path, metavar="ZIP", help="bundle file to write")
    e.add_argument("--title", default=None, help="competition title")
    e.add_argument("--phases", default="dev,final", help="comma-separated subset of dev,final (default both)")
    e.add_argument("--max-submissions-per-day", type=number("--max-submissions-per-day", kind=int, low=1, high=10_000),
                   default=1, metavar="N",
                   help="scored submissions per participant, day and phase (default 1)")
    e.add_argument("--docker-image", default=None, metavar="IMAGE", help="worker image the bundle names")
    e.add_argument("--model", default=None, help="LLM assessor model for the phases (default: heuristic)")
    e.add_argument("--base-url", default=None, metavar="URL", help="OpenAI-compatible endpoint for --model")
    e.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="NAME",
                   help="environment variable the worker reads the key from (default OPENAI_API_KEY)")
    e.set_defaults(func=run)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run(args: argparse.Namespace) -> int:
    from checklist_eval.challenge.codabench import DEFAULT_IMAGE, PHASES, BundleOptions, build_bundle
    from checklist_eval.errors import InputError

    phases = tuple(x.strip() for x in args.phases.split(",") if x.strip())
    unknown = [x for x in phases if x not in PHASES]
    if not phases or unknown or len(set(phases)) != len(phases):
        raise InputError(None, f"--phases: use a comma-separated subset of {','.join(PHASES)} (got {args.phases!r})")
    if args.max_submissions_per_day < 1:
        raise InputError(None, "--max-submissions-per-day must be at least 1")
    if args.base_url and not args.model:
        raise InputError(None, "--base-url goes with --model")
    options = BundleOptions(phases=phases, max_submissions_per_day=args.max_submissions_per_day,
                            docker_image=args.docker_image or DEFAULT_IMAGE, model=args.model,
                            base_url=args.base_url, api_key_env=args.api_key_env)
    if args.title:
        options.title = args.title
    if args.out.exists() and args.out.is_dir():
        raise InputError(args.out, "is a folder; give a .zip file name")
    names = build_bundle(args.out, options)
    print(f"wrote {args.out} ({len(names)} files): " + ", ".join(names))
    return 0
