"""Assessment records: one row per (submission_id, role, question_id), the ledger scores come from.

Every scoring run writes them (CSV and JSONL) and ``rescore`` reads them back, so scores can be
recomputed, and appeal decisions applied, without any model. Reading CSV keeps the literal answer
``NA``: pandas' default would turn it into a missing value, which is the bug that made the 2024
reference scorer report R = 0.53 instead of 0.73 on its own sample.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, field_serializer, field_validator, model_validator

from checklist_eval.errors import InputError
from checklist_eval.fsutil import loads_json
from checklist_eval.models import (
    CASES,
    ROLES,
    STATES,
    Answer,
    Assessment,
    Case,
    Paper,
    Passage,
    Role,
    State,
    is_answered,
    normalize_answer,
    state_of,
)
from checklist_eval.tables import (
    Row,
    csv_text,
    read_csv_rows,
)


class Record(Row):
    """One assessed checklist answer of one paper of one submission; its fields, in order, are the
    columns of ``records.csv`` and the keys of ``records.jsonl``. The first five are required on read,
    the rest were added over time at the end and read as empty (or 0) from older files."""

    submission_id: str
    role: Role
    question_id: str
    answer: Answer | None = None
    correct: bool = False
    case: Case | None = None  # empty in the files when unknown (older or hand-written ledgers)
    question_title: str = ""
    checklist_id: str = ""
    p_correct: float | None = Field(default=None, ge=0.0, le=1.0)
    justification: str = ""
    review: str = ""
    assessor: str = ""
    model: str = ""
    prompt_version: str = ""
    source: str = ""
    scored_at: str = ""
    # The cost ledger, one row per call: per paper and per run are sums over these.
    cached: bool = False
    calls: int = Field(default=0, ge=0)
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    cached_tokens: int = Field(default=0, ge=0)
    cost_usd: float = Field(default=0.0, ge=0.0, allow_inf_nan=False)
    # The reasoning part of completion_tokens, and what the endpoint refused and how the request was
    # changed for it ("; "-separated).
    reasoning_tokens: int = Field(default=0, ge=0)
    quirks: str = ""
    # The graded verdict (correct / incorrect / unverifiable); empty for assessors that do not grade.
    verdict: str = ""
    # Signs the paper tries to steer its assessor (hidden text, text addressed to it): see manipulation.py.
    manipulation: str = ""
    # Provenance of the verdict, so a row can be reproduced and an appeal checked against the call log.
    endpoint: str = ""
    output_strategy: str = ""
    temperature: float | None = None
    seed: int | None = None
    # Where the answer is in the author's files ("checklist.tex:115", "page 12"), for the report.
    location: str = ""
    # The evidence state (contradicted / supported / unverified) and the passages the verdict rests on
    # (a JSON list of {"quote", "where"}). Read from a file written before they existed, the state is
    # derived from correct and verdict (see ``models.state_of``) and the passages are none.
    state: State | None = None
    passages: list[Passage] = Field(default_factory=list)

    @model_validator(mode="after")
    def _state_known(self) -> Record:
        if self.state is None:
            self.state = state_of(self.c == 1, self.verdict or None, bool(self.passages))
        return self
    # Share of the paper's text the model was given: below 1 the paper was over its context and this
    # question got the passages most relevant to it; empty for the heuristic assessor.
    context_share: float | None = Field(default=None, ge=0.0, le=1.0)
    # Who read the paper's checklist: "tex" (what the machine's TeX printed), "source" (the source
    # evaluator, without TeX) or "pdf" (a PDF handed in); empty in files written before it was kept.
    reader: str = ""
    # What an appeal decided on this answer, when one stands on it: "overridden by appeal: incorrect ->
    # correct, ..." (``correct`` and ``state`` are then the decision's, ``verdict`` stays the assessor's)
    # or "confirmed by appeal (changes nothing): ..."; empty when none was decided (see ``appeals``).
    appeal: str = ""

    @field_validator("case", mode="before")
    @classmethod
    def _empty_case_is_unknown(cls, value: object) -> object:
        return None if value == "" else value

    @field_serializer("case")
    def _unknown_case_is_empty(self, case: Case | None) -> str:
        return case or ""

    @property
    def is_answered(self) -> bool:
        """The author committed to an answer (Yes/No/NA): not TODO, not missing."""
        return is_answered(self.answer)

    def with_correct(self, correct: bool) -> Record:
        """The row with ``correct`` decided elsewhere (an appeal, an override), its state kept in step:
        made incorrect it is contradicted; made correct, a contradicted one is unverified (the decision,
        not a passage, settled it)."""
        row = self.model_copy(update={"correct": correct})
        if not row.c:
            row.state = State.CONTRADICTED
        elif self.state is State.CONTRADICTED or self.state is None:
            row.state = State.UNVERIFIED
        return row

    @property
    def shown_state(self) -> State:
        """The evidence state as c_i counts it: an answer an appeal made correct is no longer contradicted
        (unverified: the appeal, not a passage, decided), one it made incorrect is."""
        if not self.c:
            return State.CONTRADICTED
        state = self.state or State.UNVERIFIED
        return State.UNVERIFIED if state is State.CONTRADICTED else state

    @property
    def c(self) -> int:
        """c_i of the rules: 1 only for an answered question (Yes/No/NA) judged correct; TODO/missing
        are 0 whatever the ``correct`` column says (a hand-edited ledger cannot make a TODO count)."""
        return int(bool(self.correct) and self.is_answered)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.submission_id, self.role, self.question_id)

    def csv_cells(self) -> dict[str, Any]:
        """The row as records.csv spells it: 0/1 flags, full-precision floats, empty for missing."""
        d = self.model_dump()
        d["answer"] = self.answer.value if self.answer is not None else ""
        d["correct"] = int(self.correct)
        d["p_correct"] = "" if self.p_correct is None else repr(float(self.p_correct))
        d["cached"] = int(self.cached)
        d["cost_usd"] = repr(float(self.cost_usd))
        d["state"] = self.state.value if self.state is not None else ""
        d["passages"] = json.dumps([p.model_dump() for p in self.passages], ensure_ascii=False) if self.passages else ""
        return d


COLUMNS = Record.columns()
REQUIRED = COLUMNS[:5]
LEDGER_COUNTS = ("calls", "prompt_tokens", "completion_tokens", "cached_tokens")
LEDGER_COLUMNS = ("cached", *LEDGER_COUNTS, "cost_usd")
# Calls, tokens and dollars beyond this are not a run's figures but a corrupt or hostile file.
MAX_LEDGER_FIGURE = 1e15


def records_from_assessments(
    submission_id: str,
    role: Role,
    paper: Paper,
    assessments: Sequence[Assessment],
    *,
    case: Case,
    scored_at: str,
) -> list[Record]:
    """Rows for one assessed paper, in checklist order, one per question of its checklist version.

    A question the assessor did not return (should not happen) is recorded as incorrect rather than
    dropped, so n stays the size of the checklist version.
    """
    from checklist_eval.assessors.evidence.manipulation import paper_flag

    by_id = {a.question_id: a for a in assessments}
    flag = paper_flag(paper)
    rows = []
    for item in paper.checklist.items:
        a = by_id.get(item.id)
        prov = a.provenance if a else None
        rows.append(
            Record(
                submission_id=submission_id,
                role=role,
                question_id=item.id,
                answer=item.answer,
                correct=bool(a.correct) if a else False,
                case=case,
                question_title=item.title,
                checklist_id=paper.checklist.id,
                p_correct=a.p_correct if a else None,
                justification=item.justification or "",
                review=a.review if a else "not assessed",
                assessor=(prov.assessor if prov else "") or "",
                model=(prov.model if prov else "") or "",
                prompt_version=(prov.prompt_version if prov else "") or "",
                source=paper.source,
                scored_at=scored_at,
                cached=bool(prov and prov.cached),
                quirks="; ".join(prov.quirks) if prov else "",
                **(prov.usage.model_dump() if prov else {}),
                verdict=(a.verdict or "") if a else "",
                manipulation=flag,
                **_provenance_columns(prov),
                location=item.location,
                reader=paper.reader or "",
                state=a.state if a else None,
                passages=a.passages if a else [],
            )
        )
    return rows


def _provenance_columns(prov) -> dict[str, object]:
    if prov is None:
        return {}
    strategy = prov.strategy.value if prov.strategy is not None else ""
    return {"endpoint": prov.endpoint or "", "output_strategy": "" if strategy == "none" else strategy,
            "temperature": prov.temperature, "seed": prov.seed, "context_share": prov.context_share}


# ---------------------------------------------------------------------------------------------- write


def _jsonl_object(r: Record) -> dict[str, Any]:
    """A records.jsonl line: the CSV's cells, with the answer and p_correct as JSON null when missing."""
    d = r.csv_cells()
    d["answer"] = r.answer.value if r.answer is not None else None
    d["p_correct"] = r.p_correct
    d["passages"] = [p.model_dump() for p in r.passages]
    return d


def records_to_csv_text(records: Iterable[Record]) -> str:
    return csv_text(Record, records)


def records_to_jsonl_text(records: Iterable[Record]) -> str:
    return "".join(json.dumps(_jsonl_object(r), ensure_ascii=False) + "\n" for r in records)



# ----------------------------------------------------------------------------------------------- read


def parse_bool(value: object, where: str, path: Path, column: str = "correct") -> bool:
    text = str(value).strip().lower()
    if text in ("1", "1.0", "true", "yes"):
        return True
    if text in ("0", "0.0", "false", "no"):
        return False
    raise InputError(path, f"{where}: {column} must be 0 or 1, got {value!r}")


def _parse_number(value: object, where: str, path: Path, column: str, kind: type) -> int | float:
    """An optional non-negative ledger figure; empty (older records files) reads as 0."""
    if value is None or str(value).strip() == "":
        return kind(0)
    try:
        as_float = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise InputError(path, f"{where}: {column} must be a number, got {value!r}") from None
    if not math.isfinite(as_float) or abs(as_float) > MAX_LEDGER_FIGURE:
        raise InputError(path, f"{where}: {column} is not a plausible figure (above {MAX_LEDGER_FIGURE:.0e}), "
                               f"got {str(value)[:40]!r}")
    number = kind(as_float) if kind is int else as_float
    if number < 0:
        raise InputError(path, f"{where}: {column} must not be negative, got {value!r}")
    return number


def _parse_optional(value: object, where: str, path: Path, column: str, kind: type) -> int | float | None:
    """An optional number: empty (or absent, in records written before the column existed) is None."""
    if value is None or (isinstance(value, float) and value != value) or str(value).strip() == "":
        return None
    return _parse_number(value, where, path, column, kind)


def _parse_answer(value: object, where: str, path: Path) -> Answer | None:
    if value is None or str(value).strip() == "":
        return None
    answer = normalize_answer(value)
    if answer is None:
        raise InputError(path, f"{where}: answer must be Yes, No, NA, TODO or empty, got {value!r}")
    return answer


def _parse_p(value: object, where: str, path: Path) -> float | None:
    if value is None or str(value).strip() == "":
        return None
    try:
        p = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise InputError(path, f"{where}: p_correct must be a number in [0, 1], got {value!r}") from None
    if not 0.0 <= p <= 1.0:
        raise InputError(path, f"{where}: p_correct must be in [0, 1], got {value!r}")
    return p


def _parse_state(value: object, where: str, path: Path) -> State | None:
    text = "" if value is None else str(value).strip().lower()
    if not text:
        return None  # a file written before the column: derived from correct and verdict
    try:
        return State(text)
    except ValueError:
        raise InputError(path, f"{where}: state must be {', '.join(s.value for s in STATES)} or empty,"
                               f" got {str(value)[:40]!r}") from None


MAX_PASSAGES_READ = 8


def _parse_passages(value: object, where: str, path: Path) -> list[Passage]:
    """The passages cell: a JSON list of {"quote", "where"} (JSONL may hold the list itself)."""
    if value is None or value == "" or value == []:
        return []
    try:
        items = loads_json(value) if isinstance(value, str) else value
        if not isinstance(items, list):
            raise TypeError
        return [Passage(quote=str(p["quote"])[:2000], where=str(p.get("where") or "")[:300])
                for p in items[:MAX_PASSAGES_READ]]
    except (json.JSONDecodeError, RecursionError, TypeError, KeyError, AttributeError):
        raise InputError(path, f"{where}: passages must be a JSON list of {{\"quote\", \"where\"}}") from None


def record_from_mapping(row: dict, where: str, path: Path) -> Record:
    role = str(row.get("role", "")).strip().upper()
    if role not in ROLES:
        raise InputError(path, f"{where}: role must be G, A or T, got {row.get('role')!r}")
    sid = str(row.get("submission_id") or "").strip()
    qid = str(row.get("question_id") or "").strip()
    if not sid or not qid:
        raise InputError(path, f"{where}: submission_id and question_id must not be empty")
    case = str(row.get("case") or "").strip().upper()
    if case and case not in CASES:
        raise InputError(path, f"{where}: case must be G, GT or GAT, got {row.get('case')!r}")
    text = {k: ("" if row.get(k) is None else str(row.get(k))) for k in COLUMNS}
    return Record(
        submission_id=sid,
        role=role,
        question_id=qid,
        answer=_parse_answer(row.get("answer"), where, path),
        correct=parse_bool(row.get("correct"), where, path),
        case=case,
        p_correct=_parse_p(row.get("p_correct"), where, path),
        cached=parse_bool(row.get("cached") or 0, where, path, column="cached"),
        cost_usd=_parse_number(row.get("cost_usd"), where, path, "cost_usd", float),
        reasoning_tokens=_parse_number(row.get("reasoning_tokens"), where, path, "reasoning_tokens", int),
        temperature=_parse_optional(row.get("temperature"), where, path, "temperature", float),
        seed=_parse_optional(row.get("seed"), where, path, "seed", int),
        **{k: _parse_number(row.get(k), where, path, k, int) for k in LEDGER_COUNTS},
        state=_parse_state(row.get("state"), where, path),
        passages=_parse_passages(row.get("passages"), where, path),
        **{
            k: text[k]
            for k in (
                "question_title", "checklist_id", "justification", "review", "assessor", "model",
                "prompt_version", "source", "scored_at", "quirks", "verdict", "manipulation", "endpoint",
                "output_strategy", "location", "reader", "appeal",
            )
        },
    )


def group_by_submission(records: Iterable[Record]) -> dict[str, list[Record]]:
    """Records per submission id, in order of first appearance."""
    groups: dict[str, list[Record]] = {}
    for r in records:
        groups.setdefault(r.submission_id, []).append(r)
    return groups



# ------------------------------------------------------------------------- 2024 reference challenge CSV


def read_challenge_checklist_csv(path: str | Path, *, submission_id: str, role: Role, case: Case) -> list[Record]:
    """Read one per-paper CSV of the 2024 challenge's scorer (columns Question_Title, Answer,
    Justification, Review, Correctness_Score) as records.

    Those files carry no question id, so the question title is the id: it is the same string across
    the G/A/T files of a submission, which keeps G/A/T aligned by question rather than by row
    position. Only scores 0 and 1 are accepted (c_i is binary in the rules).
    """
    path = Path(path)
    out = []
    for i, row in enumerate(read_csv_rows(path, ["Question_Title", "Answer", "Correctness_Score"])):
        where = f"row {i + 2}"
        score = row["Correctness_Score"].strip()
        if score not in ("0", "1", "0.0", "1.0"):
            raise InputError(path, f"{where}: Correctness_Score must be 0 or 1, got {score!r}")
        out.append(
            Record(
                submission_id=submission_id,
                role=role,
                question_id=row["Question_Title"].strip(),
                question_title=row["Question_Title"].strip(),
                answer=_parse_answer(row["Answer"], where, path),
                correct=score.startswith("1"),
                case=case,
                justification=row.get("Justification", ""),
                review=row.get("Review", ""),
                source=str(path),
            )
        )
    return out
