"""Assessors: judges of checklist answers (``heuristic`` offline default, ``llm`` for any endpoint)."""

from checklist_eval.assessors.base import Assessor

__all__ = ["Assessor"]
