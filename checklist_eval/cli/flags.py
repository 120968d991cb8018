"""Flag groups several commands share, and their mapping onto the library's configuration.

    add_assessor_args(parser)            # --assessor, --model, --base-url, --concurrency, --cache ...
    config = assessor_config(args)       # -> AssessorConfig (nothing checked yet: a dry run plans with it)
    assessor = assessor_from_args(args)  # -> Assessor, built from that config
    add_limit_args(parser); parse_limits(args)   # --parse-timeout, --parse-memory -> ParseLimits

The flags that configure the LLM assessor default to None, so that ``LLMSettings`` holds the defaults
(shown in ``--help`` from there) and an unset flag is told apart from one set to the default.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from checklist_eval.assessors.base import Assessor
from checklist_eval.assessors.config import (
    ASSESSORS,
    LOGPROBS_CHOICES,
    REASONING_EFFORTS,
    STRUCTURED_CHOICES,
    AssessorConfig,
    LLMSettings,
    default_cache_path,
)
from checklist_eval.cli.numbers import MAX_TIMEOUT_S, number
from checklist_eval.reading.isolation import DEFAULT_PARSE_MEMORY_MB, DEFAULT_PARSE_TIMEOUT_S, ParseLimits

# The numeric flags: finite and within these bounds, else one line and exit 2 (see cli.numbers).
_CONCURRENCY = number("--concurrency", kind=int, low=1, high=100_000)
_RPM = number("--rpm", low=0, low_open=True)
_TPM = number("--tpm", low=0, low_open=True)
_TIMEOUT = number("--timeout", low=0, low_open=True, high=MAX_TIMEOUT_S)
_MAX_ATTEMPTS = number("--max-attempts", kind=int, low=1, high=100)
_TEMPERATURE = number("--temperature", low=0, high=2)
_SEED = number("--seed", kind=int, low=-(2**63))
_MAX_COST = number("--max-cost", low=0, high=1e9)
_CONTEXT_TOKENS = number("--context-tokens", kind=int, low=512, high=100_000_000)
_PARSE_TIMEOUT = number("--parse-timeout", low=0, low_open=True, high=MAX_TIMEOUT_S)
_PARSE_MEMORY = number("--parse-memory", kind=int, low=0, high=2**40)

# Flags that map one to one onto a setting of the same name.
_SETTING_FLAGS = ("model", "base_url", "api_key_env", "concurrency", "rpm", "tpm", "timeout", "max_attempts",
                  "structured", "prompt_version", "prices", "temperature", "max_cost", "reasoning_effort",
                  "context_tokens", "logprobs")


def add_assessor_args(parser: argparse.ArgumentParser) -> None:
    """Add the flags that choose and configure an assessor. The API key is never a flag."""
    d = LLMSettings.default
    g = parser.add_argument_group("assessor")
    g.add_argument("--assessor", choices=ASSESSORS, default="heuristic",
                   help="heuristic (offline, default) or llm (any OpenAI-compatible endpoint)")
    g.add_argument("--model", default=None, help="model name for --assessor llm (e.g. gpt-4o-mini)")
    g.add_argument("--base-url", default=None,
                   help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL, else api.openai.com)")
    g.add_argument("--api-key-env", default=None, metavar="NAME",
                   help=f"environment variable holding the API key (default {d('api_key_env')})")
    g.add_argument("--concurrency", type=_CONCURRENCY, default=None, metavar="N",
                   help=f"requests in flight at most (default {d('concurrency')}); fewer when the engine says "
                        "its slots (llama.cpp /props) or answers timeouts/503s")
    g.add_argument("--rpm", type=_RPM, default=None, metavar="N", help="requests per minute limit")
    g.add_argument("--tpm", type=_TPM, default=None, metavar="N", help="tokens per minute limit")
    g.add_argument("--timeout", type=_TIMEOUT, default=None, metavar="S",
                   help=f"per-request timeout (s) (default {d('timeout'):g})")
    g.add_argument("--context-tokens", type=_CONTEXT_TOKENS, default=None, metavar="N",
                   help="the model's context window per request, in tokens (default: what the engine says "
                        "(llama.cpp /props, vLLM /v1/models), else the model table, else 128000); a paper "
                        "over it gives each question the passages most relevant to it")
    g.add_argument("--max-attempts", type=_MAX_ATTEMPTS, default=None, metavar="N",
                   help=f"attempts per request on 429/5xx/timeouts (default {d('max_attempts')})")
    g.add_argument("--structured", choices=STRUCTURED_CHOICES, default=None,
                   help=f"structured-output strategy (default {d('structured')}: json_schema, falling back "
                        "as the endpoint needs)")
    g.add_argument("--logprobs", choices=LOGPROBS_CHOICES, default=None,
                   help=f"token log-probabilities of the verdict, p_correct's source where usable (default "
                        f"{d('logprobs')}: asked for, left out where the endpoint refuses them; on: a refusal "
                        "stops the run; off: never asked, p_correct from the verdict alone)")
    g.add_argument("--reasoning-effort", choices=REASONING_EFFORTS, default=None,
                   help="reasoning effort for models that take it (gpt-5, o-series, Gemini 2.5); "
                        "default: the model's own. An endpoint that refuses it is sent none")
    g.add_argument("--prompt-version", default=None,
                   help=f"folder under prompts/ (default {d('prompt_version')})")
    g.add_argument("--cache", type=Path, default=None, metavar="PATH",
                   help="SQLite response cache (default $CHECKLIST_EVAL_CACHE or "
                        "~/.cache/checklist-eval/cache.sqlite)")
    g.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    g.add_argument("--refresh", action="store_true", help="ignore cached answers, store fresh ones")
    g.add_argument("--prices", type=Path, default=None, metavar="FILE",
                   help="JSON price table (USD per 1M tokens) overriding the packaged one")
    g.add_argument("--temperature", type=_TEMPERATURE, default=None, metavar="T",
                   help=f"sampling temperature (default {d('temperature'):g}); recorded with every verdict")
    if "--seed" not in parser._option_string_actions:  # a command with a --seed of its own keeps it
        g.add_argument("--seed", dest="sampling_seed", type=_SEED, default=None, metavar="N",
                       help="sampling seed sent to the endpoint (default none); recorded with every verdict")
    g.add_argument("--max-cost", type=_MAX_COST, default=None, metavar="USD",
                   help="stop before the run's spending could pass USD (exit 3; rerun with a higher cap "
                        "to resume from the cache)")


def llm_options(args: argparse.Namespace, cache_path: str | Path | None = None) -> dict[str, Any]:
    """The LLM settings the flags give, by setting name; an unset flag is None (the default applies).
    ``cache_path`` overrides --cache (a command may keep its cache beside its outputs); with neither,
    the cache is the user's default one."""
    cache = cache_path if cache_path is not None else getattr(args, "cache", None)
    options: dict[str, Any] = {name: getattr(args, name, None) for name in _SETTING_FLAGS}
    options["seed"] = getattr(args, "sampling_seed", None)
    options.update(cache_path=Path(cache) if cache is not None else default_cache_path(),
                   no_cache=bool(getattr(args, "no_cache", False)), refresh=bool(getattr(args, "refresh", False)))
    return options


def assessor_config(args: argparse.Namespace, cache_path: str | Path | None = None) -> AssessorConfig:
    """The configuration the flags of ``add_assessor_args`` describe (``cache_path``: see ``llm_options``)."""
    given = {name: value for name, value in llm_options(args, cache_path).items() if value is not None}
    return AssessorConfig(assessor=getattr(args, "assessor", "heuristic"), **given)


def assessor_from_args(args: argparse.Namespace, *, cache_path: str | Path | None = None) -> Assessor:
    """Build the assessor the flags describe (AssessorError, exit 2: e.g. --assessor llm without --model)."""
    from checklist_eval.assessors import build_assessor

    return build_assessor(assessor_config(args, cache_path))


def add_limit_args(parser: argparse.ArgumentParser) -> None:
    """``--parse-timeout``, ``--parse-memory`` and ``--tex`` for every command that parses papers."""
    from checklist_eval.reading.tex import DEFAULT_TEX, TEX_MODES

    parser.add_argument("--tex", choices=TEX_MODES, default=DEFAULT_TEX,
                        help="who reads a LaTeX paper: auto (the machine's TeX when it compiles the paper, "
                             "else the source evaluator), always (TeX, or the paper fails with the reason), "
                             f"never (the source evaluator alone); default {DEFAULT_TEX}")
    parser.add_argument("--parse-timeout", type=_PARSE_TIMEOUT, metavar="SECONDS", default=DEFAULT_PARSE_TIMEOUT_S,
                        help=f"wall-clock budget to parse one paper (default {DEFAULT_PARSE_TIMEOUT_S:g})")
    parser.add_argument("--parse-memory", type=_PARSE_MEMORY, metavar="MB", default=DEFAULT_PARSE_MEMORY_MB,
                        help=f"address-space limit of the process parsing one paper (default "
                             f"{DEFAULT_PARSE_MEMORY_MB}; 0 for none)")


def parse_limits(args: argparse.Namespace) -> ParseLimits:
    """The parse limits the flags of ``add_limit_args`` give (defaults for a command without them)."""
    from checklist_eval.reading.tex import DEFAULT_TEX

    memory = getattr(args, "parse_memory", None)
    return ParseLimits(getattr(args, "parse_timeout", None) or DEFAULT_PARSE_TIMEOUT_S,
                       DEFAULT_PARSE_MEMORY_MB if memory is None else memory, getattr(args, "tex", None) or DEFAULT_TEX)
