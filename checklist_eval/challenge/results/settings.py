"""The settings a batch results folder's records were made with, and the check a resumed run passes.

``RESULTS/run_settings.json`` holds the assessor, model, endpoint, prompt version, path (online,
batch-api or jsonl), temperature, seed and reasoning effort of the run that writes the folder; every
``result.json`` carries the same, for the records it holds. A rerun with other settings would mix
records made two ways in one leaderboard, or (batch-api) submit a second paid batch job for the same
questions, so it is refused with one line naming the flags that differ. ``--new-settings`` is the
explicit way through: the submissions scored with other settings are scored again with the new ones
(new requests, paid for), and the folder records the new settings.

The path is settled before the check: a run that does not say ``--via`` continues on the folder's
recorded path, so finishing a batch-api run with the same command minus ``--via`` reuses its
submitted jobs instead of sending every request online.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ConfigDict, ValidationError

from checklist_eval.challenge.results.layout import ResultsLayout
from checklist_eval.errors import InputError
from checklist_eval.fsutil import atomic_write_text
from checklist_eval.models import Model

NEW_SETTINGS_FLAG = "--new-settings"

# The flag that sets each field: what the one-line refusal names.
FLAGS = {
    "assessor": "--assessor", "model": "--model", "endpoint": "--base-url", "prompt_version": "--prompt-version",
    "via": "--via", "temperature": "--temperature", "seed": "--seed", "reasoning_effort": "--reasoning-effort",
    "tex": "--tex",
}  # fmt: skip


class RunSettings(Model):
    """What decides the answers a run's records hold (not how fast or how cached they came)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    assessor: str
    model: str | None = None
    endpoint: str | None = None
    prompt_version: str | None = None
    via: str = "online"
    temperature: float | None = None
    seed: int | None = None
    reasoning_effort: str | None = None
    tex: str = "auto"  # who read the LaTeX papers (--tex); a folder written before it was kept ran as auto


def settings_path(results: Path) -> Path:
    return ResultsLayout(results).settings


def read_settings(results: Path) -> RunSettings | None:
    """The folder's recorded settings; None for a new folder (or one written before they were kept)."""
    path = settings_path(results)
    try:
        return RunSettings.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValidationError, ValueError) as err:
        raise InputError(path, f"unreadable run settings ({type(err).__name__}); restore it or use a new "
                               "--out") from None


def write_settings(results: Path, settings: RunSettings) -> None:
    atomic_write_text(settings_path(results), json.dumps(settings.model_dump(), indent=1) + "\n")


def differences(recorded: RunSettings, current: RunSettings) -> list[str]:
    """``--flag NOW (recorded WAS)`` for every setting that differs."""
    out = []
    for name, flag in FLAGS.items():
        was, now = getattr(recorded, name), getattr(current, name)
        if was != now:
            out.append(f"{flag} {_shown(now)} (recorded {_shown(was)})")
    return out


def _shown(value: object) -> str:
    return "none" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def check_resume(where: Path, current: RunSettings, recorded: RunSettings | None, *, new_settings: bool) -> bool:
    """Whether the run replaces records made with other settings (only with ``new_settings``: else
    refused, InputError, one line naming the flags that differ and ``where`` the settings were read)."""
    if recorded is None:
        return False
    diff = differences(recorded, current)
    if diff and not new_settings:
        raise InputError(where, f"this folder's records were made with other settings: {'; '.join(diff)}. "
                                f"Rerun with the recorded flags, or add {NEW_SETTINGS_FLAG} to score the changed "
                                "submissions again (new, paid requests)")
    return bool(diff)
