"""Appeal decisions: the overrides files people write, and the decisions kept with the results, which
verdict ``rescore RESULTS --overrides FILE`` changed, from what to what, by which file, when, and on
which answer (``answer_digest``). results.sqlite keeps them (append-only); ``overrides.jsonl`` is their
export (and the history of a folder from before the database). A decision applies to the answer it
was decided on only (``decide``): after a re-upload that changed it, it stays in the history, not applied.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import ValidationError

from checklist_eval.challenge.records import Record, parse_bool
from checklist_eval.challenge.scoring import AppealOutcome
from checklist_eval.errors import InputError
from checklist_eval.models import Model
from checklist_eval.tables import read_csv_rows

OVERRIDES_JSONL = "overrides.jsonl"
MAX_HISTORY_LINES = 100_000  # a hostile or runaway file is read this far, no further
# An overrides file is a person's decisions: 100,000 rows with a paragraph of note each fit well under
# this. A larger file (a 50 MB note cell) is refused before it is parsed, so memory stays bounded.
MAX_OVERRIDES_BYTES = 16 << 20
MAX_NOTE_CHARS = 4000

Key = tuple[str, str, str]


OVERRIDES_HELP = (
    "Overrides (appeal decisions): a CSV with header submission_id,role,question_id,correct and "
    "optionally note. Each row sets the verdict of one existing record: role is G, A or T, correct is "
    "0 or 1. A row naming no existing record, or trying to make a TODO/missing answer correct, is an "
    "error. Rows are applied before any score is computed."
)


class Override(Model):
    """One row of an overrides file: the verdict an appeal decided for one existing record."""

    submission_id: str
    role: str  # checked by matching a record, so a bad role reads "no record for ..."
    question_id: str
    correct: bool
    note: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.submission_id, self.role, self.question_id)


OVERRIDE_REQUIRED = [name for name, f in Override.model_fields.items() if f.is_required()]


def apply_overrides(records: Sequence[Record], path: str | Path) -> tuple[list[Record], int]:
    """Return (records with the overrides applied, number of overridden rows)."""
    appeals = StreamedOverrides(path)
    out = appeals.apply(records)
    appeals.check()
    return out, len(appeals.answered)


def _refuse_conflict(path: Path, key: tuple[str, str, str], where: str, correct: str,
                     first_rows: dict[tuple[str, str, str], tuple[str, bool]]) -> None:
    """Two rows overriding one record with different verdicts: which one the appeal decided is not for
    the tool to guess (it applied the last one silently), so both rows are named."""
    value = parse_bool(correct, where, path)
    if key in first_rows and first_rows[key][1] != value:
        raise InputError(path, f"{first_rows[key][0]} and {where} override {'/'.join(key)} with different "
                               "verdicts (correct 0 and 1): keep one")
    first_rows.setdefault(key, (where, value))


def read_overrides(path: str | Path, index: dict[tuple[str, str, str], int]) -> list[Override]:
    """The overrides of ``path``, each naming a record of ``index`` (else an InputError); two rows for
    one record must agree."""
    path = Path(path)
    first_rows: dict[tuple[str, str, str], tuple[str, bool]] = {}
    out = []
    for i, row in enumerate(overrides_table(path)):
        where = f"row {i + 2}"
        key = (row["submission_id"].strip(), row["role"].strip().upper(), row["question_id"].strip())
        if key not in index:
            raise InputError(path, f"{where}: no record for {'/'.join(key)}")
        _refuse_conflict(path, key, where, row["correct"], first_rows)
        out.append(Override(submission_id=key[0], role=key[1], question_id=key[2],
                            correct=parse_bool(row["correct"], where, path), note=row.get("note", "")))
    return out


def overrides_table(path: Path) -> list[dict[str, str]]:
    """The rows of an overrides file, its size and each note's length bounded first (InputError)."""
    try:
        size = path.stat().st_size if path.is_file() else None
    except OSError:
        size = None
    if size is None:
        raise InputError(path, "overrides file not found")
    if size > MAX_OVERRIDES_BYTES:
        raise InputError(path, f"is {size / 2**20:.0f} MB; an overrides file holds at most "
                               f"{MAX_OVERRIDES_BYTES >> 20} MB of decisions (shorten its notes)")
    rows = read_csv_rows(path, OVERRIDE_REQUIRED)
    for i, row in enumerate(rows):
        if len(row.get("note", "")) > MAX_NOTE_CHARS:
            raise InputError(path, f"row {i + 2}: note longer than {MAX_NOTE_CHARS} characters: shorten it")
    return rows


class StreamedOverrides:
    """The overrides of ``path`` applied to a ledger read one submission at a time (``apply``).

    Their problems are raised by ``check``, once the whole ledger was read, in the order
    ``apply_overrides`` raises them: the file's, then the first row naming no record or with a bad
    ``correct``, then the first row making a TODO or missing answer correct."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.error: InputError | None = None
        self.rows: list[tuple[tuple[str, str, str], str]] = []  # (key, correct as written), in file order
        try:
            table = overrides_table(self.path)
        except InputError as err:
            self.error = err
            table = []
        for row in table:
            key = (row["submission_id"].strip(), row["role"].strip().upper(), row["question_id"].strip())
            self.rows.append((key, row["correct"]))
        self.verdicts = {key: _as_bool(correct) for key, correct in self.rows}  # the last row of a key wins
        self.answered: dict[tuple[str, str, str], bool] = {}  # the keys found, and whether answered

    def apply(self, records: Sequence[Record]) -> list[Record]:
        out = []
        for rec in records:
            if rec.key in self.verdicts:
                self.answered[rec.key] = rec.is_answered
                correct = self.verdicts[rec.key]
                if correct is not None:  # a decision of a file not kept: marked as one, by its name
                    rec = rec.with_correct(correct).model_copy(update={
                        "appeal": appeal_mark(rec.correct, correct, f"({self.path.name}, not kept)")})
            out.append(rec)
        return out

    def check(self) -> None:
        if self.error is not None:
            raise self.error
        first_rows: dict[tuple[str, str, str], tuple[str, bool]] = {}
        for i, (key, correct) in enumerate(self.rows):
            if key not in self.answered:
                raise InputError(self.path, f"row {i + 2}: no record for {'/'.join(key)}")
            _refuse_conflict(self.path, key, f"row {i + 2}", correct, first_rows)
        for i, (key, correct) in enumerate(self.rows):
            if _as_bool(correct) and not self.answered[key]:
                raise InputError(self.path, f"row {i + 2}: {'/'.join(key)} is TODO or missing and cannot be correct")


def _as_bool(value: str) -> bool | None:
    try:
        return parse_bool(value, "", Path())
    except InputError:
        return None



# -------------------------------------------------------------------------------- decisions kept


class AppliedOverride(Model):
    """One appeal decision as applied: the verdict the assessor gave and the one that stands."""

    submission_id: str
    role: str
    question_id: str
    was_correct: bool
    correct: bool
    file: str  # the overrides file, by its name
    note: str = ""
    applied_at: str = ""
    # The answer the decision was made on (``answer_digest`` of its record); empty in decisions kept
    # before it was recorded. A decision on an answer since replaced is kept, not applied.
    decided_on: str = ""

    @property
    def key(self) -> Key:
        return (self.submission_id, self.role, self.question_id)

    @property
    def changes(self) -> bool:
        """Whether the decision changes the assessor's verdict (else it confirms it: changes nothing)."""
        return self.was_correct != self.correct

    def describe(self) -> str:
        """"incorrect -> correct by appeal.csv on ... (note)"; "incorrect, confirmed by ..." for one that
        leaves the assessor's verdict as it was."""
        note = f" ({self.note})" if self.note else ""
        when = f" on {self.applied_at}" if self.applied_at else ""
        change = f" \u2192 {verdict_word(self.correct)}" if self.changes else ", confirmed"
        return f"{verdict_word(self.was_correct)}{change} by {self.file}{when}{note}"

    def mark(self) -> str:
        """What the record it stands on says of it (``Record.appeal``)."""
        when = f", {self.applied_at}" if self.applied_at else ""
        note = f": {self.note}" if self.note else ""
        return appeal_mark(self.was_correct, self.correct, f"({self.file}{when}){note}")


OVERRIDDEN = "overridden by appeal"
CONFIRMED = "confirmed by appeal (changes nothing)"


def verdict_word(correct: bool) -> str:
    return "correct" if correct else "incorrect"


def appeal_mark(was: bool, now: bool, by: str) -> str:
    """"overridden by appeal: incorrect \u2192 correct (appeal.csv, ...): note", or "confirmed by appeal
    (changes nothing): incorrect (...)" for a decision that leaves the assessor's verdict as it was."""
    if was != now:
        return f"{OVERRIDDEN}: {verdict_word(was)} \u2192 {verdict_word(now)} {by}"
    return f"{CONFIRMED}: {verdict_word(now)} {by}"


def history_path(results: str | Path) -> Path:
    return Path(results) / OVERRIDES_JSONL


def read_history(results: str | Path) -> list[AppliedOverride]:
    """Every recorded decision, oldest first; none when the folder has no history. A line that is not
    a decision is refused with its number: the history decides scores, so none is skipped."""
    from checklist_eval.challenge.results.ledger import json_objects

    path = history_path(results)
    if not path.is_file():
        return []
    out = []
    for n, obj in json_objects(path, max_lines=MAX_HISTORY_LINES):
        try:
            out.append(AppliedOverride.model_validate(obj))
        except ValidationError as err:
            raise InputError(path, f"line {n}: not an appeal decision ({_first_problem(err)})") from None
    return out


def _first_problem(err: ValidationError) -> str:
    first = err.errors()[0]
    return f"{'.'.join(str(x) for x in first['loc']) or 'value'}: {first['msg']}"


def answer_digest(rec: Record) -> str:
    """What an appeal was decided on: the answer and its justification as read (sha256, 16 hex)."""
    import hashlib

    answer = rec.answer.value if rec.answer is not None else ""
    return hashlib.sha256(f"{answer}\0{rec.justification}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def decide(records: Sequence[Record], decisions: dict[Key, AppliedOverride]
           ) -> tuple[list[Record], list[AppliedOverride]]:
    """(the records with the standing decisions made on these very answers applied, the decisions
    not applied because the answer they were made on has since been replaced)."""
    out, replaced = [], []
    for r in records:
        d = decisions.get(r.key)
        if d is not None and d.decided_on and d.decided_on != answer_digest(r):
            replaced.append(d)
            d = None
        out.append(r.with_correct(d.correct).model_copy(update={"appeal": d.mark()}) if d is not None else r)
    return out, replaced


class Step(Model):
    """One decision of the history as a page lists it: the verdict that stood on its answer before it
    (the assessor's, or an earlier decision's on the same answer) and the one after."""

    decision: AppliedOverride
    before: bool

    @property
    def changes_nothing(self) -> bool:
        return self.before == self.decision.correct


def steps(history: Iterable[AppliedOverride]) -> list[Step]:
    """Every decision, oldest first, each with the verdict that stood before it."""
    stood: dict[tuple[Key, str], bool] = {}
    out = []
    for d in history:
        at = (d.key, d.decided_on)
        out.append(Step(decision=d, before=stood.get(at, d.was_correct)))
        stood[at] = d.correct
    return out


def as_assessed(records: Sequence[Record], decisions: dict[Key, AppliedOverride]) -> list[Record]:
    """The records as the assessor left them. An export shows each record as it stands (``appeal`` set,
    the decision's verdict); a folder imported from its exports gets the assessor's verdict back from the
    decision's ``was_correct`` (the state derived as for a file without one), so the database keeps the
    assessor's word and the decision beside it, as when the decision was made."""
    from checklist_eval.models import state_of

    out = []
    for r in records:
        d = decisions.get(r.key)
        if r.appeal and d is not None:
            r = r.model_copy(update={"correct": d.was_correct, "appeal": "",
                                     "state": state_of(d.was_correct, r.verdict or None, bool(r.passages))})
        out.append(r)
    return out


def standing(history: Iterable[AppliedOverride]) -> dict[Key, AppliedOverride]:
    """The decision that stands per record: the latest."""
    return {entry.key: entry for entry in history}


def with_decisions(records: Sequence[Record], decisions: dict[Key, AppliedOverride]) -> list[Record]:
    """The records with the standing decisions applied (a TODO or missing answer stays incorrect:
    ``Record.c`` sees to that whatever ``correct`` says); one made on another answer is not."""
    return decide(records, decisions)[0]


# ---------------------------------------------------------------------------- what a decision did


def decided_keys(path: str | Path) -> list[Key]:
    """The records an overrides file decides on, in its order (read as ``StreamedOverrides`` reads it)."""
    return [key for key, _correct in StreamedOverrides(path).rows]


def outcomes(keys: Sequence[Key], before: dict[Key, Record], after: dict[Key, Record],
             added: set[Key]) -> list[AppealOutcome]:
    """What each decided record's verdict was before an overrides file and is after it, in the file's
    order (a record named twice, once); ``added``: the decisions kept now."""
    out = []
    for key in dict.fromkeys(keys):
        if key not in before or key not in after:
            continue
        was, now = bool(before[key].c), bool(after[key].c)
        out.append(AppealOutcome(submission_id=key[0], role=key[1], question_id=key[2], before=was, correct=now,
                                 changes_nothing=was == now, recorded=key in added))
    return out


def outcome_line(o: AppealOutcome, before: Record | None, after: Record | None, kept: bool) -> str:
    """One line for the terminal: "team-alpha/A/7: incorrect -> correct (overridden by appeal)", or
    "changes nothing: team-beta/G/1 stays incorrect, as assessed (recorded)"."""
    key = f"{o.submission_id}/{o.role}/{o.question_id}"
    if not o.changes_nothing:
        back = after is not None and not after.appeal.startswith(OVERRIDDEN)
        how = "the assessor's verdict again, by appeal" if back else OVERRIDDEN
        return f"{key}: {verdict_word(o.before)} \u2192 {verdict_word(o.correct)} ({how})"
    why = "by an earlier appeal" if before is not None and before.appeal else "as assessed"
    said = "recorded" if o.recorded else "already recorded" if kept else "not kept: a lone ledger"
    return f"changes nothing: {key} stays {verdict_word(o.correct)}, {why} ({said})"
