"""Typed records that flow between the stages: sources -> parsed paper -> assessments -> scores.

Every stage speaks these types and nothing else, so a stage can be replaced (a PDF parser for a LaTeX
one, an LLM assessor for the heuristic one) without the others noticing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Answer(str, Enum):
    """An author's answer to one checklist question. A missing answer is ``None``, never a member."""

    YES = "Yes"
    NO = "No"
    NA = "NA"
    TODO = "TODO"

    @property
    def is_answered(self) -> bool:
        """True for an answer an author committed to (Yes/No/NA), False for the TODO placeholder."""
        return self is not Answer.TODO


_ANSWER_SPELLINGS = {
    "yes": Answer.YES,
    "y": Answer.YES,
    "no": Answer.NO,
    "n": Answer.NO,
    "na": Answer.NA,
    "n/a": Answer.NA,
    "n.a.": Answer.NA,
    "n.a": Answer.NA,
    "not applicable": Answer.NA,
    "notapplicable": Answer.NA,
    "todo": Answer.TODO,
}
_BRACKETS = re.compile(r"^[\s\[\(\{\"'`]+|[\s\]\)\}\"'`.:;,]+$")


def normalize_answer(value: object) -> Answer | None:
    """Fold the spellings seen in the wild ("[N/A]", "Not Applicable", "yes", "NA") to an Answer.

    Empty or unrecognised input gives ``None`` (a missing answer). A float NaN, which pandas produces
    when it reads an empty cell, is also missing.
    """
    if value is None:
        return None
    if isinstance(value, Answer):
        return value
    if isinstance(value, float):  # pandas' NaN for an empty cell
        return None
    text = _BRACKETS.sub("", str(value)).strip().lower()
    text = re.sub(r"\s+", " ", text)
    return _ANSWER_SPELLINGS.get(text)


class Model(BaseModel):
    """The base of every record type of the project. Its validator is built the first time it is used,
    not when its module is imported: a command uses a few of the sixty-odd types, and building them
    all cost each start about 0.15 s of CPU (the suite starts thousands of commands)."""

    model_config = ConfigDict(defer_build=True)


class Question(Model):
    """One question of a checklist version, as data (see ``checklist_eval/reading/checklists/*.json``)."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    question: str
    guidelines: list[str] = Field(default_factory=list)


class ChecklistSpec(Model):
    """A checklist version: the ordered question set a paper's answers are matched against."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    questions: list[Question]

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.id == qid:
                return q
        raise KeyError(f"{self.id} has no question {qid!r}")

    @property
    def ids(self) -> list[str]:
        return [q.id for q in self.questions]


class ChecklistItem(Model):
    """A question of the checklist together with what the author wrote for it."""

    id: str
    title: str
    question: str
    guidelines: list[str] = Field(default_factory=list)
    answer: Answer | None = None
    justification: str | None = None
    justification_latex: str | None = None
    # Where the answer is in the author's files: file (project-relative) and 1-based line for LaTeX,
    # 1-based page for a PDF; None where no answer was found.
    file: str | None = None
    line: int | None = None
    page: int | None = None

    @property
    def location(self) -> str:
        """The place as an author looks it up: "checklist.tex:115", "page 12", or ""."""
        if self.file:
            return f"{self.file}:{self.line}" if self.line else self.file
        return f"page {self.page}" if self.page else ""

    @classmethod
    def for_question(cls, q: Question, answer: Answer | None = None, justification: str | None = None,
                     justification_latex: str | None = None) -> ChecklistItem:
        """The item for question ``q`` of a spec, carrying what the author wrote (if anything)."""
        return cls(id=q.id, title=q.title, question=q.question, guidelines=list(q.guidelines),
                   answer=answer, justification=justification, justification_latex=justification_latex)

    @property
    def is_answered(self) -> bool:
        """True when the author committed to an answer (Yes/No/NA); False for TODO or a missing one."""
        return is_answered(self.answer)


def is_answered(answer: Answer | None) -> bool:
    """The one test of "answered": the author committed to Yes/No/NA (not TODO, not missing)."""
    return answer is not None and answer.is_answered


class Checklist(Model):
    """The filled-in checklist of one paper: every question of its version, in template order."""

    id: str
    items: list[ChecklistItem]

    def item(self, qid: str) -> ChecklistItem:
        for it in self.items:
            if it.id == qid:
                return it
        raise KeyError(f"checklist {self.id} has no question {qid!r}")

    @property
    def answers(self) -> dict[str, Answer | None]:
        return {it.id: it.answer for it in self.items}


class Section(Model):
    """A heading of the paper body as a reader sees it ("4.2", "Experiments"); ``number`` is None for
    unnumbered headings and a letter for appendices ("A", "B.1")."""

    number: str | None = None
    title: str
    level: int = 1


class HiddenRun(Model):
    """Text the paper carries but a reader cannot see. A PDF's runs are cut from the body and the
    justifications; a LaTeX source's stay in the body (flagged), as its hiding command shows them."""

    technique: str  # PDF: a key of pdf.techniques.TECHNIQUES ("background", "tiny"...); LaTeX: "white text"...
    text: str  # the run's first words
    page: int | None = None  # 1-based PDF page; None for LaTeX


class WarningKind(str, Enum):
    """What a parser warning is about, so code decides on the kind and never on the wording."""

    HIDDEN_TEXT = "hidden_text"  # text in the source a reader cannot see
    INPUT_SKIPPED = "input_skipped"  # an \\input/\\include (or a file) left out of the paper
    ENCODING = "encoding"  # a file decoded as something other than UTF-8
    TRUNCATED = "truncated"  # text cut to a limit (a long justification, a body over the model's budget)
    DUPLICATE_ANSWER = "duplicate_answer"  # a question answered more than once; the first answer kept
    MISSING_ANSWER = "missing_answer"  # a question with no answer found
    UNMATCHED_ANSWER = "unmatched_answer"  # an answer mark that belongs to no question
    ROOT_CHOICE = "root_choice"  # several candidate main files; which one was read
    UNDECIDED = "undecided"  # an answer whose printed form the source does not decide (a conditional, a redefinition)
    SOURCE_DIFFERS = "source_differs"  # the source reads an answer or justification TeX does not print
    TEX = "tex"  # why TeX's reading was not used (a missing package, a failed compile) or what it lacks
    OTHER_CHECKLIST = "other_checklist"  # another checklist in the paper (a datasheet), left aside
    NO_BODY = "no_body"  # only the checklist was read: answers pointing into the paper cannot be verified
    THIN_BODY = "thin_body"  # a paper body too short to verify most answers
    OTHER = "other"  # a warning read back from an older record, whose kind was not kept


class ParseWarning(Model):
    """One thing the parser wants a reader to know. ``str(w)`` is the message, as printed and written
    into result files; ``location`` is the file, page or question it is about, when there is one."""

    model_config = ConfigDict(frozen=True)

    kind: WarningKind
    message: str
    location: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_plain_text(cls, value: object) -> object:
        return {"kind": WarningKind.OTHER, "message": value} if isinstance(value, str) else value

    def __str__(self) -> str:
        return self.message

    def repeated(self, times: int) -> ParseWarning:
        """The same warning standing for ``times`` identical ones."""
        return self if times == 1 else self.model_copy(update={"message": f"{self.message} (x{times})"})


# What each ``Paper.reader`` is, as reports and the parse table say it.
READER_NAMES = {"tex": "TeX (what the compiled PDF prints)", "source": "the source evaluator (no TeX reading)",
                "pdf": "the PDF reader"}


def warnings_of(paper: Paper, kind: WarningKind) -> list[ParseWarning]:
    return [w for w in paper.warnings if w.kind is kind]


class Paper(Model):
    """A parsed paper: the body text an assessor receives plus the checklist read out of it."""

    source: str
    format: Literal["latex", "pdf"]
    title: str | None = None
    abstract: str | None = None
    body: str = ""
    sections: list[Section] = Field(default_factory=list)
    # Reference targets a reader can see, spelled as in running text: "Section 4.2", "Table 3",
    # "Figure 2", "Appendix B", "Theorem 1". Assessors use them to check an answer's pointers.
    anchors: list[str] = Field(default_factory=list)
    checklist: Checklist
    warnings: list[ParseWarning] = Field(default_factory=list)
    # Hidden runs found (and removed from body and justifications) in a PDF; each also has a warning.
    hidden_text: list[HiddenRun] = Field(default_factory=list)
    # Where the body's text is in the author's files: (offset in ``body``, "paper.tex:212" or "page 7"),
    # in body order; a passage is at the last place that starts at or before it. Empty when unknown.
    places: list[tuple[int, str]] = Field(default_factory=list)
    # Who read the checklist: "tex" (the PDF the machine's TeX printed from the LaTeX), "source" (the
    # source evaluator, without TeX), "pdf" (a PDF handed in); None in records older than the field.
    reader: Literal["tex", "source", "pdf"] | None = None

    def place_of(self, offset: int) -> str:
        """The file:line or page of a position in the body, or "" when the parser kept no place."""
        import bisect

        i = bisect.bisect_right(self.places, (offset, "\uffff")) - 1
        return self.places[i][1] if i >= 0 else ""


# A token count above this is not a count but a broken or hostile reply. Clamped to it, a call's cost
# (at most 1e6 USD per 1M tokens, see ``number_problem``'s callers) stays a figure records can hold.
MAX_TOKEN_COUNT = 10**12


def clamp_count(value: object) -> int:
    """A token count from an endpoint, as a ledger can hold it: missing, null, junk or negative reads
    as 0, anything above ``MAX_TOKEN_COUNT`` (1e300, infinity) as ``MAX_TOKEN_COUNT``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return 0
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return 0
    if number != number or number <= 0:
        return 0
    return MAX_TOKEN_COUNT if number >= MAX_TOKEN_COUNT else int(number)


def number_problem(value: float, *, low: float | None = None, high: float | None = None,
                   low_open: bool = False) -> str | None:
    """Why ``value`` is not a usable setting (not finite, out of range), or None when it is. The one
    check behind every numeric flag and priced field: NaN passes every comparison, so a NaN cap
    never stops and a NaN deadline never ends; a negative price turns a cap off."""
    if not math.isfinite(value):
        return "must be a finite number"
    if low is not None and (value <= low if low_open else value < low):
        return f"must be {'above' if low_open else 'at least'} {low:g}"
    if high is not None and value > high:
        return f"must be at most {high:g}"
    return None


class Usage(Model):
    """Tokens and money spent; summed over retries so a failed attempt still shows in the ledger."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = Field(default=0.0, allow_inf_nan=False)  # a result file saying "Infinity" is not read
    reasoning_tokens: int = 0  # the part of completion_tokens a reasoning model spent thinking
    unpriced_calls: int = 0  # answered calls of a model the price table does not know (cost_usd leaves them out)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            unpriced_calls=self.unpriced_calls + other.unpriced_calls,
        )

    def __sub__(self, other: Usage) -> Usage:
        """What was spent between two readings of a running total (``after - before``)."""
        return Usage(
            calls=self.calls - other.calls,
            prompt_tokens=self.prompt_tokens - other.prompt_tokens,
            completion_tokens=self.completion_tokens - other.completion_tokens,
            cached_tokens=self.cached_tokens - other.cached_tokens,
            cost_usd=self.cost_usd - other.cost_usd,
            reasoning_tokens=self.reasoning_tokens - other.reasoning_tokens,
            unpriced_calls=self.unpriced_calls - other.unpriced_calls,
        )


class StructuredOutput(str, Enum):
    """How a model was asked for its verdict; one parser exists per strategy."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT = "json_object"
    TEXT = "text"
    NONE = "none"  # no model involved (heuristic assessor, TODO/missing short-circuit)


class Provenance(Model):
    assessor: str
    model: str | None = None
    prompt_version: str | None = None
    strategy: StructuredOutput = StructuredOutput.NONE
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 0
    # What the endpoint refused and how the request was changed for it ("temperature=0.0 refused: ...").
    quirks: list[str] = Field(default_factory=list)
    endpoint: str | None = None  # host[:port]/path of the endpoint; never a key
    temperature: float | None = None
    seed: int | None = None
    # Share of the paper's text the model was given (below 1: a paper over the context, cut to the
    # passages most relevant to this question); None for an assessor that reads no prompt.
    context_share: float | None = Field(default=None, ge=0.0, le=1.0)


Verdict = Literal["correct", "incorrect", "unverifiable"]


class State(str, Enum):
    """What the evidence says of an answer, in every output's words. ``contradicted``: a must-fix, the
    paper or the checklist shows the answer wrong (c_i = 0). ``supported``: a passage of the paper backs
    the claim. ``unverified``: neither was found; the answer keeps c_i = 1 (the benefit of the doubt)."""

    CONTRADICTED = "contradicted"
    SUPPORTED = "supported"
    UNVERIFIED = "unverified"


STATES: tuple[State, ...] = (State.CONTRADICTED, State.SUPPORTED, State.UNVERIFIED)
# Said wherever unverified answers are counted, so an author does not read "correct" as "checked".
UNVERIFIED_MEANING = "unverified: no passage of the paper was found to support or contradict the answer"


class Passage(Model):
    """A passage of the paper a verdict rests on: its words as the body has them and where an author
    finds it ("paper.tex:212", "page 7"; "" when the parser kept no place)."""

    model_config = ConfigDict(frozen=True)

    quote: str
    where: str = ""

    def __str__(self) -> str:
        return f"{self.where}: {self.quote}" if self.where else self.quote


class Assessment(Model):
    """The verdict on one checklist answer: is it correct and consistent with the paper?"""

    question_id: str
    answer: Answer | None
    correct: bool
    p_correct: float = Field(ge=0.0, le=1.0)
    review: str = ""
    evidence: list[str] = Field(default_factory=list)
    provenance: Provenance
    # Findings by severity. ``must_fix`` make the answer incorrect; ``suggestions`` leave it standing;
    # ``unverifiable`` name what could not be checked against the text we have. When ``verdict`` is
    # set it is derived from them (see ``verdict_of``) and ``correct`` agrees with it; None means an
    # older record or an assessor that does not grade its findings.
    must_fix: list[str] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)
    unverifiable: list[str] = Field(default_factory=list)
    verdict: Verdict | None = None
    # The passages of the paper the verdict rests on (best first), and the evidence state. A state left
    # None (an older cache entry) is derived from the verdict and the passages: see ``state_of``.
    passages: list[Passage] = Field(default_factory=list)
    state: State | None = None

    @model_validator(mode="after")
    def _verdict_agrees_with_findings(self) -> Assessment:
        if self.verdict is not None:
            expected = verdict_of(self.must_fix, self.unverifiable)
            if self.verdict != expected or self.correct != (expected != "incorrect"):
                raise ValueError(f"verdict {self.verdict!r} / correct={self.correct} contradicts the findings"
                                 f" (expected {expected!r})")
        if self.state is None:
            self.state = state_of(self.correct, self.verdict, bool(self.passages))
        elif (self.state is State.CONTRADICTED) == self.correct:
            raise ValueError(f"state {self.state.value!r} contradicts correct={self.correct}")
        return self


def state_of(correct: bool, verdict: str | None, has_passage: bool) -> State:
    """The evidence state when an assessor did not set one: incorrect is contradicted; a correct answer
    is supported only when it is graded correct (not unverifiable) and rests on a passage."""
    if not correct:
        return State.CONTRADICTED
    return State.SUPPORTED if has_passage and verdict != "unverifiable" else State.UNVERIFIED


def state_counts(states: Sequence[State | str | None]) -> dict[str, int]:
    """How many answers are in each state, every state named (0 included), in ``STATES`` order."""
    values = [s.value if isinstance(s, State) else (s or "") for s in states]
    return {s.value: values.count(s.value) for s in STATES}


def verdict_of(must_fix: list[str], unverifiable: list[str]) -> Verdict:
    """Blocking findings alone decide: any must-fix makes the answer incorrect. Without one, an answer
    whose evidence could not be checked is "unverifiable" and keeps c_i = 1 (the benefit of the doubt:
    the challenge counts only answers found incorrect against the author)."""
    if must_fix:
        return "incorrect"
    return "unverifiable" if unverifiable else "correct"


MUST_FIX_TAG = " [must fix]"
SUGGESTIONS_HEADING = "Suggestions (the answer stands):"
UNVERIFIABLE_HEADING = "Could not be verified from the text we have:"


def compose_review(must_fix: list[str], suggestions: list[str], unverifiable: list[str],
                   notes: Sequence[str] = (), empty: str = "No problems found.") -> str:
    """The review an author reads: blocking findings first (each tagged), then suggestions, then what
    could not be verified, then paper-level notes. The first line is the worst problem."""
    lines = [f"- {m}{MUST_FIX_TAG}" for m in must_fix]
    if suggestions:
        lines += [SUGGESTIONS_HEADING] + [f"- {s}" for s in suggestions]
    if unverifiable:
        lines += [UNVERIFIABLE_HEADING] + [f"- {u}" for u in unverifiable]
    if not lines:
        lines = [f"- {empty}"]
    return "\n".join(lines + [f"- {n}" for n in notes])


Role = Literal["G", "A", "T"]
# A submission's case, from the roles it holds: G alone, G + T (A is T's paper with G's answers), G + A + T.
# It is written where it is known (the loaded submission, its records, its score), never inferred back.
Case = Literal["G", "GT", "GAT"]
ROLES: tuple[Role, ...] = ("G", "A", "T")
CASES: tuple[Case, ...] = ("G", "GT", "GAT")
