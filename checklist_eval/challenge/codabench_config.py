"""The phase configuration (``reference_data/config.json``) a Codabench scoring program reads: every key,
its type and its values. ``codabench.phase_config`` writes it; the scoring program refuses anything
else with one line naming the key, so a hand-edited ``"assessor": "LLM"`` (or a misspelt key) fails
the submission instead of being scored by the heuristic without a word."""

from __future__ import annotations

import math
from pathlib import Path, PurePosixPath
from typing import Any

from checklist_eval.errors import InputError

__all__ = ["check_phase_config"]

ASSESSORS = ("heuristic", "llm")
CREDENTIALS = ("bundle", "worker", "none")


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) and value.strip() and len(value) <= 4096 else "a non-empty string"


def _one_of(*choices: str):
    def check(value: Any) -> str | None:
        return None if value in choices else f"one of {', '.join(choices)}"
    return check


def _file_name(value: Any) -> str | None:
    """A file beside config.json: a plain name, never a path out of the reference data."""
    if _text(value) is None and "/" not in value and "\\" not in value and value not in (".", ".."):
        return None
    return "a file name beside config.json"


def _path_or_name(value: Any) -> str | None:
    if _file_name(value) is None or (_text(value) is None and PurePosixPath(value).is_absolute()):
        return None
    return "a file name beside config.json or an absolute path on the worker"


def _url(value: Any) -> str | None:
    if value is None or (_text(value) is None and value.startswith(("http://", "https://"))):
        return None
    return "an http(s) URL or null"


def _number(low: float, high: float, *, integer: bool = False):
    def check(value: Any) -> str | None:
        kinds = (int,) if integer else (int, float)
        if isinstance(value, kinds) and not isinstance(value, bool) and math.isfinite(value) and low <= value <= high:
            return None
        return f"{'an integer' if integer else 'a number'} from {low:g} to {high:g}"
    return check


FIELDS = {
    "phase": _text,
    "assessor": _one_of(*ASSESSORS),
    "model": _text,
    "base_url": _url,
    "base_url_file": _file_name,
    "credential": _one_of(*CREDENTIALS),
    "api_key_file": _path_or_name,
    "api_key_env": _text,
    "spend_cap_usd": _number(0, 1e9),
    "parse_timeout_s": _number(0.001, 7 * 86400),
    "parse_memory_mb": _number(0, 2**40, integer=True),
}
NEEDED = {"llm": ("model", "credential"), "bundle": ("api_key_file",), "worker": ("api_key_file",)}


def check_phase_config(config: Any, path: Path) -> dict[str, Any]:
    """``config`` as read from ``path`` when every key is known and every value usable; else InputError
    naming the key and what it must be."""
    if not isinstance(config, dict):
        raise InputError(path, "is not a JSON object")
    for key, value in config.items():
        if key not in FIELDS:
            raise InputError(path, f"{key!r} is not a phase setting (known: {', '.join(FIELDS)})")
        wanted = FIELDS[key](value)
        if wanted is not None:
            raise InputError(path, f"{key}: {str(value)[:60]!r} is not {wanted}")
    if config.get("assessor", "heuristic") == "heuristic":
        extra = [k for k in ("model", "credential") if k in config]
        if extra:
            raise InputError(path, f"{extra[0]} is set but the assessor is not llm (\"assessor\": \"llm\")")
        return config
    for key in NEEDED["llm"] + NEEDED.get(config.get("credential", ""), ()):
        if key not in config:
            raise InputError(path, f"an llm phase needs {key!r}")
    if config["credential"] == "bundle" and _file_name(config["api_key_file"]) is not None:
        raise InputError(path, "api_key_file: a key the bundle carries is a file name beside config.json")
    if config["credential"] == "worker" and not PurePosixPath(config["api_key_file"]).is_absolute():
        raise InputError(path, "api_key_file: a key on the worker host is an absolute path (under /app/data)")
    return config
