"""What a reader needs first, in the same words on every output (HTML report, serve, the organizer's
pages, the terminal): how many answers are in each evidence state, then which answers to fix and which
to read, each with where it is in the author's files (``file:line`` or ``page N``).

The three states look like three states: supported (green, with its passage), unverified (neutral:
nothing checked it, so the author reads it), contradicted (red, with what contradicts it). An unverified
answer counts as correct in C (the rules' benefit of the doubt) but is never shown as a pass.

For a challenge submission the lists speak to the participant: on the adversarial paper A, an answer the
assessor judged wrong where A's answer differs from T's is a *planted answer caught* (it raises R, the
participant's loss), not something "to fix".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from checklist_eval.models import MUST_FIX_TAG, SUGGESTIONS_HEADING, UNVERIFIABLE_HEADING, State, state_counts

if TYPE_CHECKING:
    from checklist_eval.challenge.records import Record
    from checklist_eval.challenge.scoring import SubmissionScore

# The words of each state, everywhere: the chip's label and what it asks of the reader.
STATE_LABEL = {State.SUPPORTED.value: "supported", State.UNVERIFIED.value: "unverified",
               State.CONTRADICTED.value: "contradicted"}
STATE_MEANING = {State.SUPPORTED.value: "a passage of the paper backs it",
                 State.UNVERIFIED.value: "not checked: read it yourself",
                 State.CONTRADICTED.value: "the paper or the checklist shows it wrong"}
# The terminal's mark and colour of each state: unverified is neutral, never a tick.
STATE_MARK = {State.SUPPORTED.value: "✓", State.UNVERIFIED.value: "?", State.CONTRADICTED.value: "✗"}
STATE_STYLE = {State.SUPPORTED.value: "green", State.UNVERIFIED.value: "bright_black",
               State.CONTRADICTED.value: "red"}
# The order a reader acts in: what to fix, what to read, what is backed.
READING_ORDER = (State.CONTRADICTED.value, State.UNVERIFIED.value, State.SUPPORTED.value)


def first_problem(review: str) -> str:
    """A review's first must-fix line (its worst problem), else its first line that is not a heading."""
    headings = (SUGGESTIONS_HEADING, UNVERIFIABLE_HEADING)
    lines = [ln.strip().removeprefix("- ") for ln in review.splitlines() if ln.strip() and ln.strip() not in headings]
    tagged = [ln.removesuffix(MUST_FIX_TAG) for ln in lines if ln.endswith(MUST_FIX_TAG)]
    return (tagged or lines or ["judged incorrect"])[0]


def counts_line(counts: dict[str, int], *, of: str = "answers", author: bool = True) -> str:
    """"16 answers: 2 contradicted (to fix), 11 unverified (not checked: read them yourself), 3 supported
    by a passage of the paper"; ``author`` False (a challenge submission, where A's contradicted answers
    are planted answers caught) leaves out what to do."""
    total = sum(counts.values())
    it = "it" if counts["unverified"] == 1 else "them"
    fix, read = (" (to fix)", f": read {it} yourself") if author else ("", "")
    return (f"{total} {of}: {counts['contradicted']} contradicted{fix}, {counts['unverified']} unverified "
            f"(not checked{read}), {counts['supported']} supported by a passage of the paper")


@dataclass(frozen=True)
class Entry:
    """One answer a list names: its card, its question, where it is, and (to fix) its worst problem."""

    anchor: str
    role: str
    qid: str
    title: str
    location: str
    problem: str = ""

    @property
    def label(self) -> str:
        return f"{self.qid}. {self.title}" if self.title else f"Question {self.qid}"

    @property
    def where(self) -> str:
        return self.location or "(place not recorded)"


@dataclass
class Group:
    """A titled list of answers in the headline. ``tone``: bad / neutral / good for the reader (an author,
    or on A a participant, whose interest is the assessor being fooled), which gives its colour."""

    key: str
    title: str
    tone: str
    entries: list[Entry] = field(default_factory=list)
    note: str = ""

    @property
    def anchor(self) -> str:
        import re

        return "list-" + re.sub(r"[^a-z0-9]+", "-", self.key.lower()).strip("-")


def card_anchor(r: Record) -> str:
    return question_anchor(r.role, r.question_id)


def question_anchor(role: str, question_id: str) -> str:
    """The id of a question's card in a report ("q-A-7"), for links from other pages."""
    import re

    return f"q-{role}-{re.sub(r'[^A-Za-z0-9_-]', '_', question_id)}"


def _entry(r: Record, with_problem: bool) -> Entry:
    return Entry(anchor=card_anchor(r), role=r.role, qid=r.question_id, title=r.question_title or "",
                 location=r.location or "", problem=first_problem(r.review) if with_problem else "")


def paper_groups(records: Sequence[Record], prefix: str = "") -> list[Group]:
    """An author's lists for one paper: the contradicted answers to fix, then the unverified ones to read."""
    fix = [_entry(r, True) for r in records if r.shown_state is State.CONTRADICTED]
    read = [_entry(r, False) for r in records if r.shown_state is State.UNVERIFIED]
    return [g for g in (Group(f"{prefix}fix", f"{prefix}To fix ({len(fix)} contradicted)", "bad", fix),
                        Group(f"{prefix}read", f"{prefix}To read yourself ({len(read)} unverified: nothing checked "
                                               f"{'it' if len(read) == 1 else 'them'})", "neutral", read))
            if g.entries]


def _planted(records: Sequence[Record]) -> set[str]:
    """Question ids where A's answer differs from T's: the answers the participant planted."""
    t = {r.question_id: r.answer for r in records if r.role == "T"}
    return {r.question_id for r in records if r.role == "A" and r.question_id in t and r.answer != t[r.question_id]}


def submission_groups(records: Sequence[Record]) -> list[Group]:
    """A participant's lists, per role: G and T (which should be right) to fix and to read; on A the
    planted answers the assessor caught (they raise R) and the truthful ones it judged wrong."""
    roles = {r.role for r in records}
    groups: list[Group] = []
    planted = _planted(records)
    for role in ("G", "A", "T"):
        mine = [r for r in records if r.role == role]
        if not mine:
            continue
        if role != "A" or "T" not in roles:
            groups += paper_groups(mine, prefix=f"{role}: " if len(roles) > 1 else "")
            continue
        caught = [_entry(r, True) for r in mine if not r.c and r.question_id in planted]
        passed = [_entry(r, False) for r in mine if r.c and r.question_id in planted]
        flagged = [_entry(r, True) for r in mine if not r.c and r.question_id not in planted]
        groups += [g for g in (
            Group("A: caught", f"A: planted answers caught ({len(caught)} of {len(planted)})", "bad",
                  caught, "the assessor judged these planted answers wrong: each raises R"),
            Group("A: passed", f"A: planted answers that passed ({len(passed)} of {len(planted)})", "good",
                  passed, "the assessor accepted these planted answers"),
            Group("A: flagged", f"A: answers as in T judged wrong ({len(flagged)})", "neutral", flagged,
                  "A's answer is T's, yet the assessor judged it wrong")) if g.entries]
    return groups


def zero_factors(score: SubmissionScore) -> str:
    """Why S is 0, by the factors of S = C_G x C_A x (1 - R) x C_T that are 0; "" when S is not 0."""
    if score.S != 0:
        return ""
    if score.case == "G":
        return ("S = 0: a submission of G alone has no A and T, so the rules set C_A = C_T = 0 and R = 1; "
                "send G, A and T to score above 0.")
    why = []
    if score.C_G == 0:
        why.append("C_G = 0 (no answer of G was judged correct)")
    if score.C_A == 0:
        why.append("C_A = 0 (no answer of A was judged correct)")
    if score.R == 1:
        why.append("R = 1, so 1 \u2212 R = 0 (the assessor resisted on every question: it caught every planted "
                   "answer of A and accepted every other)")
    if score.C_T == 0:
        why.append("C_T = 0 (no answer of T was judged correct)")
    return "S = 0 because " + "; and ".join(why) + "." if why else ""


def state_counts_of(records: Sequence[Record]) -> dict[str, int]:
    return state_counts([r.shown_state for r in records])
