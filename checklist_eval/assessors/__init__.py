"""Assessors: judges of checklist answers (``heuristic`` offline default, ``llm`` for any endpoint).

One configuration model (``config.AssessorConfig``) and one factory:

    assessor = build_assessor(AssessorConfig(assessor="llm", model="gpt-4o-mini", concurrency=16))
    make_assessor("llm", model="gpt-4o-mini", concurrency=16)   # the same, from keyword options
    estimate(papers, {"model": "gpt-4o-mini"})   # what ``check --dry-run`` prints

The command-line flags that fill an ``AssessorConfig`` are the CLI's (``checklist_eval.cli.flags``).
This module stays light (no ``openai`` import) so ``--help`` is fast; the LLM assessor is imported when
one is built.
"""

from __future__ import annotations

from typing import Any, Iterable

from checklist_eval.assessors.base import Assessor
from checklist_eval.assessors.config import (
    ASSESSORS,
    CHARS_PER_TOKEN,
    DEFAULT_CONCURRENCY,
    AssessorConfig,
    LLMConfig,
    default_cache_path,
)
from checklist_eval.errors import AssessorError

__all__ = [
    "Assessor",
    "AssessorConfig",
    "CHARS_PER_TOKEN",
    "DEFAULT_CONCURRENCY",
    "LLMConfig",
    "build_assessor",
    "default_cache_path",
    "estimate",
    "make_assessor",
]


def build_assessor(config: AssessorConfig) -> Assessor:
    """The assessor ``config`` describes (AssessorError when its LLM settings do not hold)."""
    if config.assessor == "heuristic":
        return make_assessor("heuristic")
    from checklist_eval.assessors.llm.assessor import LLMAssessor

    return LLMAssessor(config.llm_config())


def make_assessor(name: str, **config: Any) -> Assessor:
    """``heuristic`` (no config) or ``llm`` (keyword arguments of ``LLMConfig``)."""
    if name == "heuristic":
        from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor

        return HeuristicAssessor()
    if name == "llm":
        from checklist_eval.assessors.llm.assessor import LLMAssessor

        return LLMAssessor(LLMConfig.from_options(**config))
    raise AssessorError(f"unknown assessor {name!r}; choose one of: {', '.join(ASSESSORS)}")


def estimate(paper_list: Iterable[Any], assessor_config: dict[str, Any] | None = None) -> dict[str, Any]:
    """Calls, tokens and cost an LLM run over ``paper_list`` would spend, without calling anything.

    Prompt tokens are counted from the exact messages the assessor would send (chars / 4, the usual
    English ratio); completion tokens use the prompt's typical verdict size. Cached-prefix discounts
    are not assumed, so the cost is an upper estimate.
    """
    from checklist_eval.assessors.llm.dryrun import estimate_run

    return estimate_run(list(paper_list), dict(assessor_config or {}))
