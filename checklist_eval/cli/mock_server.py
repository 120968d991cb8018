"""``checklist-eval mock-server``: the loopback OpenAI-compatible server in the foreground, for drills
(``--fault-rate``) and for pointing the LLM assessor at something free and deterministic."""

from __future__ import annotations

import argparse

# Kept here (not imported from testing.profiles) so that building the parser stays import-light.
PROFILE_NAMES = ("openai-chat", "openai-reasoning", "azure", "vllm", "ollama", "gemini-openai", "anthropic-openai",
                 "llama-cpp-python", "llama-cpp-python-logits-off", "llama.cpp-server", "litellm-llama.cpp-server")
BATCH_FAULTS = ("complete-at-create", "garbage", "huge-usage")  # testing.batches.FAULTS (kept light: no h11 here)


def register(subparsers: argparse._SubParsersAction) -> None:
    from checklist_eval.cli.numbers import PORT

    p = subparsers.add_parser(
        "mock-server",
        help="run a loopback OpenAI-compatible server (deterministic verdicts, injectable faults)",
        description="Serve /v1/models, /v1/chat/completions and /v1/completions (echo + prompt logprobs) on "
                    "127.0.0.1 with deterministic verdicts. Point the assessor at it with --base-url. "
                    "GET /_stats shows counts.",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=PORT, default=8765, help="0 picks a free port (default 8765)")
    p.add_argument("--latency", type=float, default=0.0, metavar="S", help="seconds per completion")
    p.add_argument("--fault-rate", type=float, default=0.0, metavar="R", help="share of requests that fail")
    p.add_argument("--fault-kinds", default="429,500,timeout,malformed,truncated",
                   help="comma-separated subset of 429,500,timeout,malformed,truncated")
    p.add_argument("--retry-after", type=float, default=0.05, metavar="S", help="Retry-After of injected 429s")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rpm", type=float, default=None, metavar="N", help="answer 429 above N requests/minute")
    p.add_argument("--no-json-schema", action="store_true", help="refuse response_format json_schema")
    p.add_argument("--refuse-logprobs", action="store_true",
                   help="answer requests for logprobs with a 400 (as OpenAI's reasoning models do)")
    p.add_argument("--context-tokens", type=int, default=128_000, help="the context of one request (one slot)")
    p.add_argument("--slots", type=int, default=None, metavar="N",
                   help="work on at most N chat requests at once, queueing the rest (as llama.cpp's slots)")
    p.add_argument("--slots-share-cores", action="store_true",
                   help="the slots take turns on one processor, as llama.cpp's do on a CPU: k busy slots each "
                        "take k times --latency")
    p.add_argument("--props", action="store_true", help="serve llama.cpp's GET /props (n_ctx, total_slots)")
    p.add_argument("--context-error", default="openai", choices=("openai", "llama.cpp", "llama-cpp-python"),
                   help="the words of the 400 for a prompt over the context (default openai)")
    p.add_argument("--batch-delay", type=float, default=0.0, metavar="S",
                   help="seconds from batch creation to completion (/v1/batches)")
    p.add_argument("--batch-failure-rate", type=float, default=0.0, metavar="R",
                   help="share of batch lines answered 500 in the error file")
    p.add_argument("--batch-expire", type=int, default=0, metavar="N",
                   help="the first N batches expire with half their lines done")
    p.add_argument("--batch-fault", default=None, choices=BATCH_FAULTS,
                   help="a misbehaving batch provider (see checklist_eval.testing.batches)")
    p.add_argument("--misbehave", default=None, metavar="MODE",
                   help="answer every chat request the way a hostile endpoint would (modes: see "
                        "checklist_eval.testing.misbehave; e.g. drip, huge-stream, echo-key-review)")
    p.add_argument("--profile", default="openai-chat", choices=PROFILE_NAMES,
                   help="answer as this provider does: its refused parameters, error bodies, URL shape, key "
                        "header and usage fields (default openai-chat)")
    p.set_defaults(func=run)


def _misbehave_mode(mode: str | None) -> str | None:
    from checklist_eval.errors import InputError
    from checklist_eval.testing.misbehave import MODES

    if mode is not None and mode not in MODES:
        raise InputError(None, f"--misbehave: unknown mode {mode!r}; one of {', '.join(MODES)}")
    return mode


def run(args: argparse.Namespace) -> int:
    import asyncio

    from checklist_eval.errors import InputError, UsageError

    try:
        from checklist_eval.testing import FaultConfig, MockServer
    except ModuleNotFoundError as err:  # h11 is an optional dependency (the server extra)
        if err.name != "h11":
            raise
        raise UsageError(str(err)) from None
    kinds = tuple(k.strip() for k in args.fault_kinds.split(",") if k.strip())
    try:
        faults = FaultConfig(rate=args.fault_rate, kinds=kinds, retry_after=args.retry_after)
    except ValueError as err:
        raise InputError(None, f"--fault-kinds: {err}") from None
    server = MockServer(latency=args.latency, faults=faults, seed=args.seed, rpm_limit=args.rpm,
                        supports_json_schema=not args.no_json_schema, refuse_logprobs=args.refuse_logprobs,
                        context_tokens=args.context_tokens, host=args.host, port=args.port, profile=args.profile,
                        misbehave=_misbehave_mode(args.misbehave), slots=args.slots, props=args.props,
                        context_error=args.context_error, slots_share_cores=args.slots_share_cores)
    server.batches.delay = args.batch_delay
    server.batches.failure_rate = args.batch_failure_rate
    server.batches.expire = args.batch_expire
    server.batches.fault = args.batch_fault

    async def main() -> None:
        try:
            await server.start()
        except OSError as err:
            raise InputError(None, f"cannot listen on {args.host}:{args.port}: {err.strerror}") from None
        print(server.base_url, flush=True)
        await server.serve_forever()

    asyncio.run(main())
    return 0
