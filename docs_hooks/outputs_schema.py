"""The page of output columns and JSON keys, generated from the pydantic models that write them.

Every CSV and JSON output is a model's dump (tests/test_contract.py runs the CLI and compares), so the page is
made from the models when the site is built, never copied by hand: ``docs/outputs.md`` holds the marker
``<!-- outputs-schema -->``, and ``on_page_markdown`` (an MkDocs hook, named in ``mkdocs.yml``) puts the tables
there. ``OUTPUTS`` says which output each model is; ``python docs_hooks/outputs_schema.py`` prints the tables.
"""

from __future__ import annotations

import importlib
import re
import types
import typing
from typing import Any

MARKER = "<!-- outputs-schema -->"

# (the output, as a user meets it; the model that writes it, under ``checklist_eval.``)
OUTPUTS: tuple[tuple[str, str], ...] = (
    ("`records.csv`, `records.jsonl`", "challenge.records.Record"),
    ("overrides CSV (read)", "challenge.results.appeals.Override"),
    ("`overrides.jsonl` (`rescore RESULTS --overrides`)", "challenge.results.appeals.AppliedOverride"),
    ("`scores.csv` (batch)", "challenge.scoring.ScoreRow"),
    ("`failures.jsonl` (batch)", "challenge.results.leaderboard.Failure"),
    ("`summary.json` (batch)", "challenge.batch.BatchSummary"),
    ("`submissions/<id>/result.json` (batch, `score --out`; `appeals`: the decisions standing on its records, "
     "`score` with them applied, null in files written before)", "challenge.results.outputs.SubmissionResult"),
    ("`run_settings.json` (batch; also `settings` in each `result.json`)", "challenge.results.settings.RunSettings"),
    ("`batch --json`", "challenge.batch.BatchCounts"),
    ("`score --json`", "challenge.scoring.ScoreReport"),
    ("`rescore --json`", "challenge.scoring.RescoreReport"),
    ("`rescore --overrides FILE --json`", "challenge.scoring.AppealedRescoreReport"),
    ("each of its `appeals`: what one decision did to its answer's verdict", "challenge.scoring.AppealOutcome"),
    ("each of its `moves`: one submission's S before and after", "challenge.scoring.ScoreMove"),
    ("`rescore --json` `submissions`, `summary.json` `scores`", "challenge.scoring.PublicScore"),
    ("`leaderboard --csv`; `--json` (a list of these)", "challenge.results.leaderboard.LeaderboardRow"),
    ("`trials.csv` (`assessor-eval --out`)", "adversary.evaluation.Trial"),
    ("`parse --json` (`body` only with `--with-body`)", "summaries.ParseDocument"),
    ("`parse --json` `items`: where each answer is, `file` and 1-based `line` for LaTeX, `page` for a PDF "
     "(null where not found)", "summaries.ParsedItem"),
    ("`check --json`, `check.json`", "summaries.CheckResult"),
    ("a warning of `check --json` (and of `parse --json`)", "models.ParseWarning"),
    ("each of the `items` of `check --json`", "summaries.CheckedItem"),
    ("each passage of an item (and of the records' `passages` cell, a JSON list)", "models.Passage"),
    ("`validate --json`", "summaries.ValidationSummary"),
    ("`validate ROOT --json` (a batch root)", "summaries.RootValidation"),
    ("each of its `submissions`", "summaries.RootEntry"),
    ("`check`/`score`/`batch --dry-run --json` (a part only where it applies)", "challenge.costplan.CostPlan"),
    ("a dry run's `papers`", "challenge.costplan.PlannedPaper"),
    ("`batch-status --json` (a list of these)", "challenge.batch_api.JobStatus"),
    ("`ingest --json` (`resumed` for a batch run)", "summaries.IngestSummary"),
    ("`attack --json`, `plants.json`", "adversary.attack.AttackResult"),
    ("`assessor-eval --json` (a list for several systems), its `summary.json`",
     "adversary.evaluation.EvaluationReport"),
    ("`detection score --json`, its `scores.json`", "detection.nist.DetectionReport"),
    ("`assessor-eval --attack-runs --json`, its `attack_summary.json`", "adversary.attack_eval.AttackSummary"),
    ("`contamination --json` (from `--logprobs`: `texts` only)", "membership.contamination.ContaminationReport"),
    ("a contamination report's `texts`", "membership.contamination.TextScores"),
    ("`contamination-eval --json` (`{\"datasets\": {NAME: ...}}` for several)",
     "membership.contamination_eval.DatasetEvaluation"),
    ("`logs --json` (a list; `prompt_messages` with `--full-prompt`)", "summaries.LoggedCall"),
)


def model_of(ref: str) -> Any:
    module, name = ref.rsplit(".", 1)
    return getattr(importlib.import_module(f"checklist_eval.{module}"), name)


def fields_of(ref: str) -> list[str]:
    """The model's fields in order: the CSV's columns, the JSON document's keys."""
    return list(model_of(ref).model_fields)


def type_name(annotation: Any) -> str:
    """A field's type as a reader of the file sees it (``str | None``, ``list[Passage]``), module paths dropped."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return type_name(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(arg) for arg in typing.get_args(annotation))
    if origin is typing.Literal:
        return " | ".join(repr(arg) for arg in typing.get_args(annotation))
    if origin is not None:
        args = ", ".join(type_name(arg) for arg in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]" if args else getattr(origin, "__name__", "")
    if annotation is type(None):
        return "null"
    name = getattr(annotation, "__name__", None) or str(annotation)
    return re.sub(r"\b(?:[a-z_]+\.)+", "", name)


def default_of(info: Any) -> str:
    """The model's default for the field, or "required" where it has none."""
    if info.is_required():
        return "required"
    default = info.get_default(call_default_factory=True)
    return f"`{default!r}`" if not isinstance(default, (list, dict)) or len(repr(default)) < 40 else "empty"


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_table() -> str:
    lines = ["| output | model (`checklist_eval.`) | columns / keys, in order |", "| --- | --- | --- |"]
    for output, ref in OUTPUTS:
        keys = ", ".join(f"`{name}`" for name in fields_of(ref))
        lines.append(f"| {cell(output)} | `{ref}` | {keys} |")
    return "\n".join(lines)


def field_tables() -> str:
    parts = []
    for _, ref in OUTPUTS:
        model = model_of(ref)
        parts += [f"### `{ref}`", "", "| field | type | default |", "| --- | --- | --- |"]
        for name, info in model.model_fields.items():
            parts.append(f"| `{name}` | `{cell(type_name(info.annotation))}` | {cell(default_of(info))} |")
        parts.append("")
    return "\n".join(parts)


def render() -> str:
    return summary_table() + "\n\n## Field types\n\n" + field_tables()


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """MkDocs hook: the tables in place of the marker on the outputs page."""
    return markdown.replace(MARKER, render()) if MARKER in markdown else markdown


if __name__ == "__main__":
    print(render())
