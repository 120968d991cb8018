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
            "S, C_G, C_A, C_T, R ranked by S, detailed results on), pages for participants, a sample "
            "submission, a scoring program that installs this package from a wheel inside the bundle on a "
            "stock python image, and per-phase assessor settings. Without --model the phases use the "
            "offline heuristic assessor. With --model, the key is a capped one written into the reference "
            "data (--api-key-file; a provider's own key shape is refused without --key-is-capped) or, on "
            "your own queue (--queue), a file on your worker hosts."
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
    e.add_argument("--api-key-file", type=Path, default=None, metavar="FILE",
                   help="a capped key (e.g. a LiteLLM virtual key with max_budget) for the phases' reference data")
    e.add_argument("--key-is-capped", action="store_true",
                   help="the key in --api-key-file (or the credentials in --base-url) is capped, though shaped "
                        "like a provider's own (sk-...)")
    e.add_argument("--spend-cap", type=number("--spend-cap", low=0, high=1e9), default=None, metavar="USD",
                   help="the key's spending cap, stated on the pages (required with --api-key-file)")
    e.add_argument("--queue", default=None, metavar="VHOST",
                   help="your own Codabench queue (its vhost); the key is then a file on its worker hosts")
    e.add_argument("--worker-key-path", default=None, metavar="PATH",
                   help="where the scoring container finds the key on your queue's workers "
                        "(default /app/data/checklist-eval/api_key = HOST_DIRECTORY/data/checklist-eval/api_key)")
    e.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="NAME",
                   help="on your own queue, the variable read when the key file is absent (default OPENAI_API_KEY)")
    e.set_defaults(func=run)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run(args: argparse.Namespace) -> int:
    from checklist_eval.challenge.codabench import build_bundle
    from checklist_eval.errors import InputError

    options = bundle_options(args)
    if args.out.exists() and args.out.is_dir():
        raise InputError(args.out, "is a folder; give a .zip file name")
    names = build_bundle(args.out, options)
    print(f"wrote {args.out} ({len(names)} files): " + ", ".join(names))
    return 0


def _phases(value: str) -> tuple[str, ...]:
    from checklist_eval.challenge.codabench import PHASES
    from checklist_eval.errors import InputError

    phases = tuple(x.strip() for x in value.split(",") if x.strip())
    unknown = [x for x in phases if x not in PHASES]
    if not phases or unknown or len(set(phases)) != len(phases):
        raise InputError(None, f"--phases: use a comma-separated subset of {','.join(PHASES)} (got {value!r})")
    return phases


def _check_credential_flags(args: argparse.Namespace) -> None:
    from checklist_eval.errors import InputError
    from checklist_eval.redact import url_credentials

    needs_model = [flag for flag, given in (("--base-url", args.base_url), ("--api-key-file", args.api_key_file),
                                            ("--worker-key-path", args.worker_key_path)) if given]
    if needs_model and not args.model:
        raise InputError(None, f"{needs_model[0]} goes with --model")
    if args.worker_key_path and not args.worker_key_path.startswith("/app/data/"):
        raise InputError(None, "--worker-key-path must be under /app/data/, the worker host's HOST_DIRECTORY/data "
                               "as the scoring container sees it")
    url_secrets = url_credentials(args.base_url)
    if args.key_is_capped and not (args.api_key_file or url_secrets):
        raise InputError(None, "--key-is-capped goes with --api-key-file (or a --base-url carrying credentials)")
    if url_secrets and not args.queue and not args.key_is_capped:
        # The bundle is handed to a platform: credentials in the URL are a key like any other there.
        raise InputError(None, "--base-url carries credentials (user:password@ or a key in its query), which the "
                               "bundle would hand to the platform: say they are capped with --key-is-capped "
                               "--spend-cap USD, or give the URL without them")
    if url_secrets and args.key_is_capped and args.spend_cap is None:
        raise InputError(None, "--base-url carries credentials: --key-is-capped needs --spend-cap USD, the cap on "
                               "them, stated on the pages")
    if args.api_key_file and args.spend_cap is None:
        raise InputError(None, "--api-key-file needs --spend-cap USD: the cap on that key, stated on the pages")
    if args.spend_cap is not None and not args.spend_cap > 0:
        raise InputError(None, "--spend-cap must be a positive amount in USD")
    if args.model and not (args.api_key_file or args.queue or args.base_url):
        raise InputError(None, "--model needs a key the compute worker can use: --api-key-file with a capped key, "
                               "or --queue with your own workers holding the key (or --base-url for an endpoint "
                               "without a key)")


def bundle_options(args: argparse.Namespace):
    """The bundle the flags describe; InputError (exit 2) for flags that cannot make a working bundle."""
    from checklist_eval.challenge.codabench import (
        DEFAULT_IMAGE,
        WORKER_KEY_PATH,
        BundleOptions,
        check_capped_key,
        read_key_file,
    )
    from checklist_eval.errors import InputError
    from checklist_eval.redact import public_url

    phases = _phases(args.phases)
    if args.max_submissions_per_day < 1:
        raise InputError(None, "--max-submissions-per-day must be at least 1")
    _check_credential_flags(args)
    key = None
    if args.api_key_file:
        key = read_key_file(args.api_key_file)
        check_capped_key(key, args.api_key_file, capped=args.key_is_capped)
    base_url = public_url(args.base_url)
    options = BundleOptions(phases=phases, max_submissions_per_day=args.max_submissions_per_day,
                            docker_image=args.docker_image or DEFAULT_IMAGE, model=args.model,
                            base_url=base_url, endpoint_url=args.base_url if args.base_url != base_url else None,
                            api_key_env=args.api_key_env, api_key=key, spend_cap_usd=args.spend_cap,
                            queue=args.queue, worker_key_path=args.worker_key_path or WORKER_KEY_PATH)
    if options.endpoint_url and options.credential == "worker":
        raise InputError(None, "--base-url carries credentials or a query, and with --queue the bundle holds no "
                               "secret: give the URL without them (the key goes in the workers' key file)")
    if args.title:
        options.title = args.title
    return options
