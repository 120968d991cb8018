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
from pathlib import Path
from typing import Any, Iterable

from checklist_eval.assessors.base import Assessor
from checklist_eval.errors import AssessorError

__all__ = [
    "Assessor",
    "DEFAULT_CONCURRENCY",
    "add_assessor_args",
    "assessor_from_args",
    "default_cache_path",
    "estimate",
    "make_assessor",
]

ASSESSORS = ("heuristic", "llm")
STRUCTURED_CHOICES = ("auto", "json_schema", "json_object", "text")
# High enough that one G/A/T triplet (about 45 calls) is in flight at once: the wall time of a
# triplet is then about one model latency. Rate limits belong to --rpm/--tpm, not to this bound.
DEFAULT_CONCURRENCY = 64
DEFAULT_PROMPT_VERSION = "assess-v1"


def default_cache_path() -> Path:
    env = os.environ.get("CHECKLIST_EVAL_CACHE")
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/checklist-eval/cache.sqlite").expanduser()


def add_assessor_args(parser: argparse.ArgumentParser) -> None:
    """Add the flags that choose and configure an assessor. The API key is never a flag."""
    g = parser.add_argument_group("assessor")
    g.add_argument("--assessor", choices=ASSESSORS, default="heuristic",
                   help="heuristic (offline, default) or llm (any OpenAI-compatible endpoint)")
    g.add_argument("--model", default=None, help="model name for --assessor llm (e.g. gpt-4o-mini)")
    g.add_argument("--base-url", default=None,
                   help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL, else api.openai.com)")
    g.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="NAME",
                   help="environment variable holding the API key (default OPENAI_API_KEY)")
    g.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY, metavar="N",
                   help=f"requests in flight at most (default {DEFAULT_CONCURRENCY})")
    g.add_argument("--rpm", type=float, default=None, metavar="N", help="requests per minute limit")
    g.add_argument("--tpm", type=float, default=None, metavar="N", help="tokens per minute limit")
    g.add_argument("--timeout", type=float, default=120.0, metavar="S", help="per-request timeout (s)")
    g.add_argument("--max-attempts", type=int, default=6, metavar="N",
                   help="attempts per request on 429/5xx/timeouts (default 6)")
    g.add_argument("--structured", choices=STRUCTURED_CHOICES, default="auto",
                   help="structured-output strategy (auto: json_schema, falling back as the endpoint needs)")
    g.add_argument("--prompt-version", default=DEFAULT_PROMPT_VERSION, help="folder under prompts/")
    g.add_argument("--cache", type=Path, default=None, metavar="PATH",
                   help="SQLite response cache (default $CHECKLIST_EVAL_CACHE or "
                        "~/.cache/checklist-eval/cache.sqlite)")
    g.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    g.add_argument("--refresh", action="store_true", help="ignore cached answers, store fresh ones")
    g.add_argument("--prices", type=Path, default=None, metavar="FILE",
                   help="JSON price table (USD per 1M tokens) overriding the packaged one")


def _config_from_args(args: argparse.Namespace, cache_path: str | Path | None) -> dict[str, Any]:
    cache = cache_path if cache_path is not None else getattr(args, "cache", None)
    return {
        "model": getattr(args, "model", None),
        "base_url": getattr(args, "base_url", None),
        "api_key_env": getattr(args, "api_key_env", "OPENAI_API_KEY"),
        "concurrency": getattr(args, "concurrency", DEFAULT_CONCURRENCY),
        "rpm": getattr(args, "rpm", None),
        "tpm": getattr(args, "tpm", None),
        "timeout": getattr(args, "timeout", 120.0),
        "max_attempts": getattr(args, "max_attempts", 6),
        "structured": getattr(args, "structured", "auto"),
        "prompt_version": getattr(args, "prompt_version", DEFAULT_PROMPT_VERSION),
        "cache_path": Path(cache) if cache is not None else default_cache_path(),
        "no_cache": bool(getattr(args, "no_cache", False)),
        "refresh": bool(getattr(args, "refresh", False)),
        "prices": getattr(args, "prices", None),
    }


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
        from checklist_eval.assessors.llm import LLMAssessor, LLMConfig

        return LLMAssessor(LLMConfig.from_options(**config))
    raise AssessorError(f"unknown assessor {name!r}; choose one of: {', '.join(ASSESSORS)}")


def estimate(paper_list: Iterable[Any], assessor_config: dict[str, Any] | None = None) -> dict[str, Any]:
    """Calls, tokens and cost an LLM run over ``paper_list`` would spend, without calling anything.

    Prompt tokens are counted from the exact messages the assessor would send (chars / 4, the usual
    English ratio); completion tokens use the prompt's typical verdict size. Cached-prefix discounts
    are not assumed, so the cost is an upper estimate.
    """
    from checklist_eval.assessors.llm import estimate_run

    return estimate_run(list(paper_list), dict(assessor_config or {}))
