"""``checklist-eval serve``: the upload page for authors and, with ``--results DIR``, the organizer's
browser over a batch's results (needs the ``[web]`` extra: Starlette and uvicorn)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    from checklist_eval.cli.flags import add_assessor_args, add_limit_args
    from checklist_eval.cli.numbers import PORT

    p = subparsers.add_parser(
        "serve", help="a web page to check a paper (and browse a results folder)",
        description="Serve the upload page (a PDF, .tex, .zip or .tar.gz, or a G/A/T set: progress per "
                    "question, then the report) with its JSON API (POST /api/check, GET /api/check/ID), and "
                    "with --results the organizer's read-only browser: leaderboard, submission, question, the "
                    "model call behind it and the appeal decisions. The offline assessor is the default; with "
                    "--assessor llm and its flags the model is offered too (the key stays on the server).")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=PORT, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="a host name the server answers (repeatable). Requests naming another host in their "
                        "Host header get 421: the defence against DNS rebinding. Default: localhost, 127.0.0.1 "
                        "and ::1 for a loopback --host; the --host address itself for another; the machine's "
                        "names for 0.0.0.0. '*' answers every name (behind a proxy that checks them)")
    p.add_argument("--results", metavar="DIR", default=None, help="a batch results folder to browse (read-only)")
    p.add_argument("--max-upload-mb", type=int, default=100, metavar="MB",
                   help="largest upload accepted; a larger one is answered 413 (default 100)")
    p.add_argument("--jobs", type=int, default=2, metavar="N", help="checks running at once (default 2)")
    p.add_argument("--queue", type=int, default=16, metavar="N",
                   help="checks waiting at most; one more is answered 503 (default 16)")
    add_assessor_args(p)
    add_limit_args(p)
    p.set_defaults(func=run)


def _llm_offered(args: argparse.Namespace):
    """The LLM settings to offer, checked now (a missing key or model: exit 2 before serving)."""
    import asyncio

    from checklist_eval.assessors import build_assessor
    from checklist_eval.cli.flags import assessor_config

    if args.assessor != "llm":
        return None
    config = assessor_config(args)
    asyncio.run(build_assessor(config).aclose())
    return config


def settings_of(args: argparse.Namespace):
    from pathlib import Path

    from checklist_eval.cli.flags import parse_limits
    from checklist_eval.errors import InputError
    from checklist_eval.web.hosts import allowed_hosts
    from checklist_eval.web.jobs import ServeSettings

    results = Path(args.results) if args.results else None
    if results is not None:
        from checklist_eval.challenge.results.folder import ResultsFolder

        ResultsFolder.open(results)  # not a results folder, or settings that disagree: exit 2 now
    for flag, value in (("--max-upload-mb", args.max_upload_mb), ("--jobs", args.jobs), ("--queue", args.queue)):
        if value < 1:
            raise InputError(flag, "must be at least 1")
    return ServeSettings(max_upload_bytes=args.max_upload_mb * 2**20, jobs=args.jobs, queue=args.queue,
                         limits=parse_limits(args), llm=_llm_offered(args), results=results,
                         allowed_hosts=allowed_hosts(args.host, args.allowed_host))


def run(args: argparse.Namespace) -> int:
    import asyncio
    import socket

    try:
        import uvicorn

        from checklist_eval.web.app import make_app
    except ImportError as err:
        from checklist_eval.errors import InputError

        raise InputError("serve", f"needs the web extra: pip install 'checklist-eval[web]' ({err.name} missing)"
                         ) from None
    app = make_app(settings_of(args))
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
        sock.listen(2048)  # connections made from now on wait in the backlog until uvicorn accepts them
    except OSError as err:
        from checklist_eval.errors import InputError

        raise InputError(f"{args.host}:{args.port}", f"cannot listen here ({err.strerror or err})") from None
    host, port = sock.getsockname()[:2]
    print(f"serving on http://{host}:{port}/" + (" (results: /results/)" if args.results else ""), flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", server_header=False, timeout_graceful_shutdown=5))
    asyncio.run(server.serve(sockets=[sock]))
    return 0
