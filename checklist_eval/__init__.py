"""checklist-eval: parse paper checklists, assess each answer, score challenge submissions.

The small public API; everything else is reachable from the submodules named after each stage.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    # The public names are looked up when first used: a command that never needs them (``--help``, the
    # leaderboard) does not pay for pydantic's models, and one that parses starts its parse workers first.
    if name == "load_paper":
        from checklist_eval.reading.parsing import load_paper

        return load_paper
    if name in __all__:
        import checklist_eval.models as models

        return getattr(models, name)
    raise AttributeError(f"module 'checklist_eval' has no attribute {name!r}")
