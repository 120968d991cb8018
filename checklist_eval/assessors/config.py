"""What an assessor is built from: the one place the LLM assessor's settings and their defaults live.

``AssessorConfig`` is what a caller asks for (which assessor and every LLM setting; a dry run may plan
with no model yet); ``LLMConfig`` is the checked form the LLM assessor is built from (a model is given,
the choices and bounds hold). Neither holds an API key: only the name of the environment variable the
key is read from when the assessor is built, and their dumps and reprs show ``base_url`` without
credentials or query. Kept free of ``openai`` so that building a command's parser stays fast.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import ConfigDict, field_serializer

from checklist_eval.endpoint.context import ContextWindow
from checklist_eval.errors import AssessorError
from checklist_eval.models import Model
from checklist_eval.redact import public_url

AssessorName = Literal["heuristic", "llm"]
Structured = Literal["auto", "json_schema", "json_object", "text"]
ReasoningEffort = Literal["minimal", "low", "medium", "high"]
# auto: asked for, dropped where the endpoint refuses them; on: a refusal stops the run; off: never asked
Logprobs = Literal["auto", "on", "off"]
ASSESSORS: tuple[str, ...] = get_args(AssessorName)
STRUCTURED_CHOICES: tuple[str, ...] = get_args(Structured)
REASONING_EFFORTS: tuple[str, ...] = get_args(ReasoningEffort)
LOGPROBS_CHOICES: tuple[str, ...] = get_args(Logprobs)

# High enough that one G/A/T triplet (about 45 calls) is in flight at once: the wall time of a
# triplet is then about one model latency. Rate limits belong to rpm/tpm, not to this bound.
DEFAULT_CONCURRENCY = 64
DEFAULT_PROMPT_VERSION = "assess-v1"

CHARS_PER_TOKEN = 4
# --timeout's default; left at it, a local engine's deadlines follow its pace (endpoint/pace.py)
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_CONTEXT_TOKENS = 128_000
CONTEXT_TOKENS = {  # longest-prefix match; anything else gets DEFAULT_CONTEXT_TOKENS or context_tokens
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
}


class LLMSettings(Model):
    """Every setting of the LLM assessor but the model, with its default (the command-line flags default
    to None and show these in ``--help``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = DEFAULT_CONCURRENCY
    rpm: float | None = None
    tpm: float | None = None
    timeout: float = DEFAULT_TIMEOUT_S
    max_attempts: int = 6
    structured: Structured = "auto"
    prompt_version: str = DEFAULT_PROMPT_VERSION
    cache_path: Path | None = None
    no_cache: bool = False
    refresh: bool = False
    prices: Path | None = None
    temperature: float = 0.0
    max_tokens: int = 800
    seed: int | None = None
    logprobs: Logprobs = "auto"  # token log-probabilities of the verdict (p_correct from them when usable)
    reask: int = 3  # extra requests when the model's reply holds no usable verdict (cut off, not parseable)
    context_tokens: int | None = None
    backoff_initial: float = 0.5
    backoff_max: float = 60.0
    max_cost: float | None = None  # USD cap on the run's spending (see ``budget``)
    reasoning_effort: ReasoningEffort | None = None  # sent as reasoning_effort; dropped (announced) where refused
    # A reply past this is refused (see assessors.transport). A verdict with logprobs is under 0.5 MB;
    # replies in flight hold at most concurrency x this.
    max_response_bytes: int = 4 * 2**20

    @field_serializer("base_url")
    def _public_base_url(self, url: str | None) -> str | None:
        # A dump goes to records, logs and reports; credentials in the endpoint's URL must not.
        return public_url(url)

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, public_url(value) if name == "base_url" else value

    @classmethod
    def default(cls, name: str) -> Any:
        """The default of field ``name`` (for ``--help``)."""
        return cls.model_fields[name].default

    @property
    def resolved_base_url(self) -> str | None:
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or None

    def sampling_params(self) -> dict[str, Any]:
        """The sampling asked for (temperature, budget, seed, reasoning effort): part of a cached
        answer's key, so a dry run finds exactly the answers a run with these settings stored."""
        params: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.seed is not None:
            params["seed"] = self.seed
        if self.reasoning_effort is not None:
            params["reasoning_effort"] = self.reasoning_effort
        return params


class LLMConfig(LLMSettings):
    """The settings the LLM assessor is built from: a model is named and the settings are checked."""

    model: str

    @classmethod
    def from_options(cls, **options: Any) -> LLMConfig:
        """The config for keyword options; None means "the default" (an unset flag)."""
        known = set(cls.model_fields)
        unknown = sorted(set(options) - known)
        if unknown:
            raise AssessorError(f"unknown LLM assessor option(s): {', '.join(unknown)}")
        given = {k: v for k, v in options.items() if v is not None}
        _check(given)
        return cls(**given)

    @property
    def context_window(self) -> int:
        return self.window().tokens

    def window(self) -> ContextWindow:
        """The context window known before the endpoint says anything: ``--context-tokens``, else the
        model table, else the default (the LLM assessor then asks the engine; see ``endpoint.probe``)."""
        if self.context_tokens:
            return ContextWindow(self.context_tokens, "--context-tokens")
        matches = [name for name in CONTEXT_TOKENS if self.model.startswith(name)]
        if matches:
            return ContextWindow(CONTEXT_TOKENS[max(matches, key=len)], "model table")
        return ContextWindow(DEFAULT_CONTEXT_TOKENS, "default")

    @property
    def prompt_char_budget(self) -> int:
        """Characters the whole prompt may hold (see ``context.ContextWindow``)."""
        return self.window().prompt_char_budget(self.max_tokens)


class AssessorConfig(LLMSettings):
    """Which assessor judges the answers and, for ``llm``, the settings it is asked for. Nothing is
    checked until ``llm_config`` (building the assessor): a dry run plans with what it was given."""

    assessor: AssessorName = "heuristic"
    model: str | None = None

    def llm_config(self) -> LLMConfig:
        """The checked settings of the LLM assessor (AssessorError: no model, a bound not met)."""
        options = {name: value for name, value in self if value is not None and name != "assessor"}
        _check(options)
        return LLMConfig(**options)


def _check(options: dict[str, Any]) -> None:
    """The settings a caller can get wrong, each named by the flag that sets it."""
    if not options.get("model"):
        raise AssessorError("--assessor llm needs --model (e.g. --model gpt-4o-mini)")
    structured = options.get("structured", "auto")
    if structured not in STRUCTURED_CHOICES:
        raise AssessorError(f"unknown structured-output strategy {structured!r}")
    if options.get("logprobs", "auto") not in LOGPROBS_CHOICES:
        raise AssessorError(f"unknown --logprobs {options['logprobs']!r}; choose one of: {', '.join(LOGPROBS_CHOICES)}")
    effort = options.get("reasoning_effort")
    if effort is not None and effort not in REASONING_EFFORTS:
        raise AssessorError(f"unknown reasoning effort {effort!r}; choose one of: {', '.join(REASONING_EFFORTS)}")
    if options.get("concurrency", DEFAULT_CONCURRENCY) < 1 or options.get("max_attempts", 1) < 1:
        raise AssessorError("--concurrency and --max-attempts must be at least 1")


def default_cache_path() -> Path:
    env = os.environ.get("CHECKLIST_EVAL_CACHE")
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/checklist-eval/cache.sqlite").expanduser()
