"""Assessors: judges of checklist answers (``heuristic`` offline default, ``llm`` for any endpoint).

Commands (``check``, ``score``, ``batch``) share one set of flags and one factory, both here:

    add_assessor_args(parser)            # --assessor, --model, --base-url, --concurrency, --cache ...
    assessor = assessor_from_args(args)  # -> Assessor
    make_assessor("llm", model="gpt-4o-mini", concurrency=16)
    estimate(papers, {"model": "gpt-4o-mini"})   # what ``check --dry-run`` prints

This module stays light (no ``openai`` import) so ``--help`` is fast; the LLM assessor is imported when
one is built.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Iterable

from checklist_eval.assessors.base import Assessor
from checklist_eval.errors import AssessorError

__all__ = [
    "Assessor",
    "DEFAULT_CONCURRENCY",
    "LLMConfig",
    "add_assessor_args",
    "assessor_from_args",
    "default_cache_path",
    "estimate",
    "make_assessor",
]

ASSESSORS = ("heuristic", "llm")
STRUCTURED_CHOICES = ("auto", "json_schema", "json_object", "text")
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
# High enough that one G/A/T triplet (about 45 calls) is in flight at once: the wall time of a
# triplet is then about one model latency. Rate limits belong to --rpm/--tpm, not to this bound.
DEFAULT_CONCURRENCY = 64
DEFAULT_PROMPT_VERSION = "assess-v1"

CHARS_PER_TOKEN = 4
DEFAULT_CONTEXT_TOKENS = 128_000
CONTEXT_TOKENS = {  # longest-prefix match; anything else gets DEFAULT_CONTEXT_TOKENS or --config
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
}


@dataclass
class LLMConfig:
    """Everything the LLM assessor can be told, and the one place its defaults live (the command-line
    flags default to None and show these in ``--help``). Here rather than in ``llm`` so that building a
    parser does not import ``openai``."""

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = DEFAULT_CONCURRENCY
    rpm: float | None = None
    tpm: float | None = None
    timeout: float = 120.0
    max_attempts: int = 6
    structured: str = "auto"
    prompt_version: str = DEFAULT_PROMPT_VERSION
    cache_path: Path | None = None
    no_cache: bool = False
    refresh: bool = False
    prices: Path | None = None
    temperature: float = 0.0
    max_tokens: int = 800
    seed: int | None = None
    logprobs: bool = True
    reask: int = 3  # extra requests when the model's reply holds no usable verdict (cut off, not parseable)
    context_tokens: int | None = None
    backoff_initial: float = 0.5
    backoff_max: float = 60.0
    max_cost: float | None = None  # USD cap on the run's spending (see ``budget``)
    reasoning_effort: str | None = None  # sent as reasoning_effort; dropped (announced) where refused
    # A reply past this is refused (see assessors.transport). A verdict with logprobs is under 0.5 MB;
    # replies in flight hold at most concurrency x this.
    max_response_bytes: int = 4 * 2**20

    @classmethod
    def default(cls, name: str) -> Any:
        """The default of field ``name`` (for ``--help``)."""
        return cls.__dataclass_fields__[name].default

    @classmethod
    def from_options(cls, **options: Any) -> LLMConfig:
        """The config for keyword options; None means "the default" (an unset flag)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise AssessorError(f"unknown LLM assessor option(s): {', '.join(unknown)}")
        if not options.get("model"):
            raise AssessorError("--assessor llm needs --model (e.g. --model gpt-4o-mini)")
        cfg = cls(**{k: v for k, v in options.items() if v is not None})
        if cfg.structured not in STRUCTURED_CHOICES:
            raise AssessorError(f"unknown structured-output strategy {cfg.structured!r}")
        if cfg.reasoning_effort is not None and cfg.reasoning_effort not in REASONING_EFFORTS:
            raise AssessorError(f"unknown reasoning effort {cfg.reasoning_effort!r}; choose one of: "
                                f"{', '.join(REASONING_EFFORTS)}")
        if cfg.concurrency < 1 or cfg.max_attempts < 1:
            raise AssessorError("--concurrency and --max-attempts must be at least 1")
        return cfg

    @property
    def resolved_base_url(self) -> str | None:
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or None

    @property
    def context_window(self) -> int:
        if self.context_tokens:
            return self.context_tokens
        matches = [name for name in CONTEXT_TOKENS if self.model.startswith(name)]
        return CONTEXT_TOKENS[max(matches, key=len)] if matches else DEFAULT_CONTEXT_TOKENS

    @property
    def prompt_char_budget(self) -> int:
        """Characters the whole prompt may hold (see the ``llm`` module docstring)."""
        return CHARS_PER_TOKEN * (self.context_window - self.max_tokens)


def default_cache_path() -> Path:
    env = os.environ.get("CHECKLIST_EVAL_CACHE")
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/checklist-eval/cache.sqlite").expanduser()


# Flags that map one to one onto an LLMConfig field of the same name.
_CONFIG_FLAGS = ("model", "base_url", "api_key_env", "concurrency", "rpm", "tpm", "timeout", "max_attempts",
                 "structured", "prompt_version", "prices", "temperature", "max_cost", "reasoning_effort")


def add_assessor_args(parser: argparse.ArgumentParser) -> None:
    """Add the flags that choose and configure an assessor. The API key is never a flag. Flags that
    configure the LLM assessor default to None: ``LLMConfig`` holds the defaults."""
    d = LLMConfig.default
    g = parser.add_argument_group("assessor")
    g.add_argument("--assessor", choices=ASSESSORS, default="heuristic",
                   help="heuristic (offline, default) or llm (any OpenAI-compatible endpoint)")
    g.add_argument("--model", default=None, help="model name for --assessor llm (e.g. gpt-4o-mini)")
    g.add_argument("--base-url", default=None,
                   help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL, else api.openai.com)")
    g.add_argument("--api-key-env", default=None, metavar="NAME",
                   help=f"environment variable holding the API key (default {d('api_key_env')})")
    g.add_argument("--concurrency", type=int, default=None, metavar="N",
                   help=f"requests in flight at most (default {d('concurrency')})")
    g.add_argument("--rpm", type=float, default=None, metavar="N", help="requests per minute limit")
    g.add_argument("--tpm", type=float, default=None, metavar="N", help="tokens per minute limit")
    g.add_argument("--timeout", type=float, default=None, metavar="S",
                   help=f"per-request timeout (s) (default {d('timeout'):g})")
    g.add_argument("--max-attempts", type=int, default=None, metavar="N",
                   help=f"attempts per request on 429/5xx/timeouts (default {d('max_attempts')})")
    g.add_argument("--structured", choices=STRUCTURED_CHOICES, default=None,
                   help=f"structured-output strategy (default {d('structured')}: json_schema, falling back "
                        "as the endpoint needs)")
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
    g.add_argument("--temperature", type=float, default=None, metavar="T",
                   help=f"sampling temperature (default {d('temperature'):g}); recorded with every verdict")
    if "--seed" not in parser._option_string_actions:  # a command with a --seed of its own keeps it
        g.add_argument("--seed", dest="sampling_seed", type=int, default=None, metavar="N",
                       help="sampling seed sent to the endpoint (default none); recorded with every verdict")
    g.add_argument("--max-cost", type=float, default=None, metavar="USD",
                   help="stop before the run's spending could pass USD (exit 3; rerun with a higher cap "
                        "to resume from the cache)")


def _config_from_args(args: argparse.Namespace, cache_path: str | Path | None) -> dict[str, Any]:
    """LLMConfig options from the flags; an unset flag stays None, so LLMConfig's default applies."""
    cache = cache_path if cache_path is not None else getattr(args, "cache", None)
    options: dict[str, Any] = {name: getattr(args, name, None) for name in _CONFIG_FLAGS}
    options["seed"] = getattr(args, "sampling_seed", None)
    options.update(cache_path=Path(cache) if cache is not None else default_cache_path(),
                   no_cache=bool(getattr(args, "no_cache", False)), refresh=bool(getattr(args, "refresh", False)))
    return options


def assessor_from_args(args: argparse.Namespace, *, cache_path: str | Path | None = None) -> Assessor:
    """Build the assessor the flags of ``add_assessor_args`` describe. ``cache_path`` overrides --cache
    (a command may keep its cache beside its outputs)."""
    name = getattr(args, "assessor", "heuristic")
    if name == "heuristic":
        return make_assessor("heuristic")
    return make_assessor(name, **_config_from_args(args, cache_path))


def make_assessor(name: str, **config: Any) -> Assessor:
    """``heuristic`` (no config) or ``llm`` (keyword arguments of ``LLMConfig``)."""
    if name == "heuristic":
        from checklist_eval.assessors.heuristic import HeuristicAssessor

        return HeuristicAssessor()
    if name == "llm":
        from checklist_eval.assessors.llm import LLMAssessor

        return LLMAssessor(LLMConfig.from_options(**config))
    raise AssessorError(f"unknown assessor {name!r}; choose one of: {', '.join(ASSESSORS)}")


def estimate(paper_list: Iterable[Any], assessor_config: dict[str, Any] | None = None) -> dict[str, Any]:
    """Calls, tokens and cost an LLM run over ``paper_list`` would spend, without calling anything.

    Prompt tokens are counted from the exact messages the assessor would send (chars / 4, the usual
    English ratio); completion tokens use the prompt's typical verdict size. Cached-prefix discounts
    are not assumed, so the cost is an upper estimate.
    """
    from checklist_eval.assessors.dryrun import estimate_run

    return estimate_run(list(paper_list), dict(assessor_config or {}))
