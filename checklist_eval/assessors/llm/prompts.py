"""The versioned prompt files (``prompts/<version>/``) as package data, loaded once per version."""

from __future__ import annotations

import importlib.resources
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from checklist_eval.errors import InputError
from checklist_eval.models import StructuredOutput

if TYPE_CHECKING:
    from importlib.abc import Traversable  # importlib.resources.abc from 3.11 on


def prompts_root() -> Traversable:
    """The package's ``prompts/`` folder, found as package data wherever the package is installed."""
    root = importlib.resources.files("checklist_eval").joinpath("prompts")
    if not root.is_dir():
        raise InputError(str(root), "prompt folder not found (broken install?)")
    return root


@dataclass(frozen=True)
class PromptSet:
    version: str
    system: str
    user_paper: str
    user_checklist: str
    user_question: str
    format_json: str
    format_text: str

    @staticmethod
    @lru_cache(maxsize=8)
    def load(version: str) -> PromptSet:
        folder = prompts_root().joinpath(version)
        if not folder.is_dir():
            raise InputError(str(folder), f"no prompt version {version!r}")
        parts = {}
        for name in ("system", "user_paper", "user_checklist", "user_question", "format_json", "format_text"):
            path = folder.joinpath(f"{name}.txt")
            if not path.is_file():
                raise InputError(str(path), "prompt file missing")
            parts[name] = path.read_text("utf-8").strip("\n")
        return PromptSet(version=version, **parts)

    def format_for(self, strategy: StructuredOutput) -> str:
        return self.format_text if strategy is StructuredOutput.TEXT else self.format_json

    @property
    def findings(self) -> bool:
        """The prompt asks for must_fix / suggestions (assess-v2 on), so the verdict must follow them."""
        return "must_fix" in self.format_json
