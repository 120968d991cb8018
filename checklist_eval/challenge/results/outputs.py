"""A scored submission as one document: ``SubmissionResult``, what results.sqlite keeps of it and what
each ``result.json`` export holds (written last, after its report)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from checklist_eval.challenge.records import Record
from checklist_eval.challenge.results.appeals import AppliedOverride
from checklist_eval.challenge.results.settings import RunSettings
from checklist_eval.challenge.scoring import ScoreReport, SubmissionScore
from checklist_eval.models import Case, Model, Usage

RESULT_FORMAT = 1


class SubmissionResult(Model):
    """Everything one scored submission produced; ``result.json`` of its results folder."""

    format: int = RESULT_FORMAT
    submission_id: str
    source: str
    fingerprint: str
    case: Case
    assessor: str
    model: str | None = None
    prompt_version: str | None = None
    scored_at: str
    score: SubmissionScore
    usage: Usage = Field(default_factory=Usage)
    warnings: list[str] = Field(default_factory=list)
    records: list[Record]
    settings: RunSettings | None = None  # what the records were made with (batch runs; None in older files)
    # The appeal decisions standing on these records when the file was written (``score`` is with them
    # applied); None in files written before appeals were kept here, which are then not checked.
    appeals: list[AppliedOverride] | None = None
    # Which run of results.sqlite this file exports, and the generation that committed the submission
    # (None in files written before the database).
    run: int | None = None
    generation: int | None = None

    def report(self) -> ScoreReport:
        """What ``score --json`` prints."""
        return ScoreReport(**self.score.public().model_dump(), warnings=self.all_warnings, usage=self.usage)

    @property
    def all_warnings(self) -> list[str]:
        """The submission's warnings, then its score's."""
        return self.warnings + self.score.warnings


def read_result(path: Path) -> SubmissionResult | None:
    """A finished result, or None when absent or unreadable (then the submission is redone)."""
    try:
        return SubmissionResult.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None
