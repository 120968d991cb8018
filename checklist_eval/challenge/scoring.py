"""The challenge scores, exactly as the rules define them (``RULES`` below states them in words and
formulas; the participant pages, docs/scoring.md and the HTML reports print that text, and a test evaluates
each page's formulas on crafted cases against these functions).

Arithmetic is done on exact fractions and converted to float once at the end: nothing is rounded
before multiplying, and two submissions with the same rational S get bit-identical floats, so
leaderboard ties are real ties. G/A/T are aligned by question id, never by row position.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from pydantic import Field

from checklist_eval.challenge.records import Record, group_by_submission
from checklist_eval.errors import ScoringError
from checklist_eval.models import ROLES, Answer, Case, Model, Role, Usage
from checklist_eval.tables import Row

if TYPE_CHECKING:
    import pandas as pd


# The rules as every page states them (Codabench Overview, docs/scoring.md, HTML reports): (formula,
# what it means). The formulas use one notation, evaluated as printed on each page by
# tests/test_rules_text.py against the functions below: say here, and only here, what they compute.
RULES: tuple[tuple[str, str], ...] = (
    ("C = Σ c_i / n", "the correctness of a paper (C_G, C_A, C_T), where c_i = 1 when the assessor judges "
                      "answer i correct and 0 when it judges it wrong or the answer is TODO or missing, and n is "
                      "the number of questions of the paper's checklist version"),
    ("g_i = [a_i = t_i]", "1 when A's answer to question i is the same as T's (NA, N/A and Not Applicable are "
                          "one answer), else 0; T's TODO or missing answer is T's answer, so there g_i = 1 only "
                          "when A's answer is the same"),
    ("R = Σ [c_i of A = g_i] / n", "the resilience of the assessor against A: the share of all n questions "
                                   "where its verdict on A agrees with g_i, a question T leaves TODO or missing "
                                   "included"),
    ("S = C_G × C_A × (1 − R) × C_T", "the score that ranks the leaderboard"),
    ("C_A = 0, C_T = 0, R = 1", "a submission of G alone, so its S = 0"),
    ("", "a submission of G and T only is scored with A taken as T's paper carrying G's checklist answers"),
)
RULES_NOTATION = "[x] is 1 when x holds, else 0; Σ sums over the n questions"


def rules_parts() -> list[tuple[str, str]]:
    """(formula, what it means) per rule, the notation last, as a page lays them out; the formula is
    empty where a rule is words alone."""
    return [(formula, words if formula else words[0].upper() + words[1:]) for formula, words in RULES] + \
        [("", f"Notation: {RULES_NOTATION}.")]


def rules_markdown() -> str:
    """The rules as a markdown list, as the Codabench Overview page and docs/scoring.md print them."""
    parts = rules_parts()
    items = [f"- `{formula}`: {words}." if formula else f"- {words}." for formula, words in parts[:-1]]
    return "\n".join([*items, "", parts[-1][1]])


class PublicScore(Model):
    """A submission's scores as scripts read them: a ``rescore --json`` row, summary.json's ``scores``."""

    submission_id: str
    case: Case
    C_G: float
    C_A: float
    C_T: float
    R: float
    S: float


class SubmissionScore(PublicScore):
    questions: int = Field(description="n, the number of questions of G's checklist version")
    warnings: list[str] = Field(default_factory=list)

    def public(self) -> PublicScore:
        return PublicScore.model_validate(self.model_dump(include=set(PublicScore.model_fields)))


class ScoreRow(Row, PublicScore):
    """A line of a batch's ``scores.csv``: the scores, n, and every warning joined by "; "."""

    questions: int
    warnings: str = ""

    @classmethod
    def of(cls, score: SubmissionScore, warnings: list[str]) -> ScoreRow:
        return cls(**score.model_dump(exclude={"warnings"}), warnings="; ".join(warnings))


class ScoreReport(PublicScore):
    """What ``score --json`` prints: the scores, every warning of the submission, what the run spent."""

    warnings: list[str]
    usage: Usage


class AppealOutcome(Model):
    """What one row of ``rescore --overrides FILE`` did to the verdict of its answer."""

    submission_id: str
    role: str
    question_id: str
    before: bool = Field(description="the verdict that stood before (the assessor's or an earlier decision's)")
    correct: bool = Field(description="the verdict that stands after")
    changes_nothing: bool = Field(description="before == correct: the decision confirms what stood")
    recorded: bool = Field(description="added to results.sqlite now (false: already kept, or a lone ledger)")


class ScoreMove(Model):
    """A submission's S before and after ``rescore --overrides``."""

    submission_id: str
    S_before: float
    S: float
    moved: bool


class RescoreReport(Model):
    """What ``rescore --json`` prints."""

    submissions: list[PublicScore]


class AppealedRescoreReport(RescoreReport):
    """What ``rescore --overrides FILE --json`` prints: the scores as before, then what each decision of
    the file did and which scores moved."""

    appeals: list[AppealOutcome]
    moves: list[ScoreMove]


def correctness(rows: Sequence[Record]) -> Fraction:
    """C of one paper: its rows are the n questions of its checklist version."""
    if not rows:
        raise ScoringError("a paper with no questions cannot be scored")
    return Fraction(sum(r.c for r in rows), len(rows))


def agreement_rows(records: Sequence[Record]) -> list[dict[str, Any]]:
    """Per question of T (in T's order): a_i, t_i, g_i = 1(a_i == t_i), c_i of A, whether they agree.

    Every question counts, as in the rules' R = sum 1(c_i = g_i) / n: T's TODO (or missing) answer is
    T's answer, so g_i = 1 only when A's answer is the same. A question A lacks has a = missing, c_A = 0.
    """
    a_by_id = {r.question_id: r for r in records if r.role == "A"}
    out = []
    for t in (r for r in records if r.role == "T"):
        a = a_by_id.get(t.question_id)
        a_ans = a.answer if a else None
        c_a = a.c if a else 0
        g = int(a_ans == t.answer)
        out.append({"question_id": t.question_id, "a": a_ans, "t": t.answer, "g": g, "c_A": c_a, "agree": c_a == g})
    return out


def resilience(records: Sequence[Record]) -> Fraction:
    """R of the rules over all n questions of T."""
    rows = agreement_rows(records)
    if not rows:
        raise ScoringError("a T paper with no questions cannot be scored")
    return Fraction(sum(1 for row in rows if row["agree"]), len(rows))


def _case_of(submission_id: str, records: Sequence[Record]) -> Case:
    """The case the records declare (``score`` and ``batch`` write it), checked against their roles.

    Records without a case (older or hand-written ledgers) are G when G alone, else GAT: answers
    cannot tell GT from GAT (a GAT A may keep G's answers), and the label is all that differs, as S
    is computed the same way in both cases.
    """
    roles = {r.role for r in records}
    declared = {r.case for r in records if r.case}
    if len(declared) > 1:
        raise ScoringError(f"submission {submission_id}: rows disagree on the case ({', '.join(sorted(declared))})")
    if "G" not in roles:
        raise ScoringError(f"submission {submission_id}: no G (genuine) rows; every case needs G")
    if roles == {"G"}:
        case: Case = "G"
        allowed = {"G"}
    elif roles == {"G", "A", "T"}:
        case = "GT" if declared == {"GT"} else "GAT"
        allowed = {"GT", "GAT"}
    else:
        raise ScoringError(
            f"submission {submission_id}: roles {''.join(sorted(roles))} are not a valid case "
            "(need G alone, or G, A and T; a GT submission records A as T's paper with G's answers)"
        )
    if declared - allowed:
        raise ScoringError(f"submission {submission_id}: case {declared.pop()} does not match its roles")
    return case


def score_submission(submission_id: str, records: Sequence[Record]) -> SubmissionScore:
    """Scores of one submission from its records (any order)."""
    case = _case_of(submission_id, records)
    by_role = {role: [r for r in records if r.role == role] for role in ROLES}
    warnings: list[str] = []
    c_g = correctness(by_role["G"])
    if case == "G":
        c_a, c_t, r = Fraction(0), Fraction(0), Fraction(1)
    else:
        c_a, c_t = correctness(by_role["A"]), correctness(by_role["T"])
        r = resilience(records)
        a_ids = {x.question_id for x in by_role["A"]}
        t_ids = {x.question_id for x in by_role["T"]}
        if a_ids != t_ids:
            warnings.append(
                "A and T do not have the same questions "
                f"(only in A: {sorted(a_ids - t_ids)}, only in T: {sorted(t_ids - a_ids)})"
            )
    s = c_g * c_a * (1 - r) * c_t
    return SubmissionScore(
        submission_id=submission_id,
        case=case,
        C_G=float(c_g),
        C_A=float(c_a),
        C_T=float(c_t),
        R=float(r),
        S=float(s),
        questions=len(by_role["G"]),
        warnings=warnings,
    )


def score_records(records: Sequence[Record]) -> list[SubmissionScore]:
    """Scores of every submission of an in-memory ledger (``results.folder.scored_submissions`` reads a file)."""
    return [score_submission(sid, rows) for sid, rows in group_by_submission(records).items()]


# --------------------------------------------------------------------------------- per-question tables


def paper_table(records: Sequence[Record], role: Role) -> pd.DataFrame:
    """One paper's per-question table: id, title, answer, c_i, p_correct, review, justification.

    The HTML reports render it; their verdict column is c_i, so what a report calls correct is
    exactly what C counts."""
    import pandas as pd

    rows = [
        {
            "question_id": r.question_id,
            "title": r.question_title,
            "answer": r.answer.value if isinstance(r.answer, Answer) else "",
            "c": r.c,
            "p_correct": r.p_correct,
            "review": r.review,
            "justification": r.justification,
            "verdict": r.verdict,
        }
        for r in records
        if r.role == role
    ]
    return pd.DataFrame(
        rows, columns=["question_id", "title", "answer", "c", "p_correct", "review", "justification", "verdict"]
    )


def agreement_table(records: Sequence[Record]) -> pd.DataFrame:
    """Per-question agreement of the assessor on A with T (a_i, t_i, g_i, c_i(A), agree)."""
    import pandas as pd

    rows = [
        {**row, "a": row["a"].value if row["a"] else "", "t": row["t"].value if row["t"] else ""}
        for row in agreement_rows(records)
    ]
    return pd.DataFrame(rows, columns=["question_id", "a", "t", "g", "c_A", "agree"])
