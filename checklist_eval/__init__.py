"""checklist-eval: parse paper checklists, assess each answer, score challenge submissions.

The small public API; everything else is reachable from the submodules named after each stage.
"""

from checklist_eval.models import (
    Answer,
    Assessment,
    Checklist,
    ChecklistItem,
    ChecklistSpec,
    Paper,
    Question,
    Usage,
    normalize_answer,
)
from checklist_eval.reading.parsing import load_paper

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "Assessment",
    "Checklist",
    "ChecklistItem",
    "ChecklistSpec",
    "Paper",
    "Question",
    "Usage",
    "normalize_answer",
    "load_paper",
    "__version__",
]
