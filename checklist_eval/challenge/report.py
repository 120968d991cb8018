"""Human-readable reports: self-contained HTML pages and rich terminal summaries.

One report, made to act on, for a checked paper (``check --out``, ``serve``) and a scored submission
(``score``/``batch``, Codabench's detailed results): a summary first (the score, then what must be
fixed, each linking its card), then a card per question with the answer, where it is in the author's
files, the justification, the verdict and the review. Pages come from Jinja2 templates with
autoescape (``checklist_eval/templates``) and carry their own CSS and nothing else (no scripts, fonts
or images), so an organizer can mail one file or open it offline.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import jinja2

from checklist_eval.challenge.headline import (
    STATE_MEANING,
    card_anchor,
    counts_line,
    first_problem,
    paper_groups,
    state_counts_of,
    submission_groups,
    zero_factors,
)
from checklist_eval.challenge.results.layout import REPORT_HTML
from checklist_eval.challenge.scoring import rules_parts
from checklist_eval.endpoint.prices import format_cost
from checklist_eval.fsutil import atomic_write_text
from checklist_eval.models import (
    MUST_FIX_TAG,
    READER_NAMES,
    ROLES,
    Answer,
    Assessment,
    Paper,
    Passage,
    Role,
    Usage,
    WarningKind,
    state_counts,
)

if TYPE_CHECKING:  # pandas and rich stay out of the import path of the light commands
    from rich.console import Console

    from checklist_eval.challenge.records import Record
    from checklist_eval.challenge.scoring import SubmissionScore

# One line under the cards' p(correct): what the number is, and that it does not score.
P_LEGEND = ("p(correct): how likely the assessor holds the answer to be correct, from 0 to 1; the verdict, "
            "not p, decides whether the answer counts (c_i).")
ROLE_NAMES = {"G": "Genuine (G)", "A": "Adversarial (A)", "T": "Truth-adversarial (T)"}


@functools.lru_cache(maxsize=1)
def templates() -> jinja2.Environment:
    """The package's page templates (``checklist_eval/templates``, package data), escaping every value
    put into them: justifications, reviews, titles and file names are untrusted input."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("checklist_eval", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(fmt=_fmt, state_meaning=STATE_MEANING)
    return env


def render(template: str, **context: Any) -> str:
    return templates().get_template(template).render(**context)


def _answer_text(answer: Answer | str | None) -> str:
    if answer is None or answer == "":
        return "(missing)"
    return answer.value if isinstance(answer, Answer) else str(answer)


def _fmt(x: float | None, digits: int = 3) -> str:
    # Rounding happens here and only here: stored scores keep full precision.
    return "" if x is None else f"{x:.{digits}f}"


def usage_line(usage: Usage | None) -> str:
    """The spending line, only where a model ran: the offline assessor makes no calls and costs nothing."""
    if usage is None or usage.calls == 0:
        return ""
    reasoning = f" ({usage.reasoning_tokens} reasoning)" if usage.reasoning_tokens else ""
    return (f"Model calls: {usage.calls}; prompt tokens: {usage.prompt_tokens} ({usage.cached_tokens} cached); "
            f"completion tokens: {usage.completion_tokens}{reasoning}; cost: {format_cost(usage)}")


class Decision(Protocol):
    """An appeal decision as a report shows it (``appeals.AppliedOverride``)."""

    def describe(self) -> str: ...


Overrides = Mapping[tuple[str, str, str], Decision]


@dataclass
class Card:
    anchor: str
    label: str
    answer: str
    justification: str
    verdict: str  # correct / incorrect / unverifiable: c_i as the scores count it
    p: str | None
    review: str
    location: str
    override: str
    link: str = ""
    state: str = ""  # contradicted / supported / unverified, as c_i counts it (see ``shown_state``)
    passages: Sequence[Passage] = ()
    appeal: str = ""  # "overridden" / "confirmed" by an appeal decision standing on the answer, or ""

    @property
    def first_problem(self) -> str:
        """What contradicts the answer: its review's worst problem (the must-fix line), or the appeal
        decision that made it wrong."""
        if self.appeal == "overridden" and self.state == "contradicted":
            return f"the appeal decision ({self.override})"
        return first_problem(self.review)

    @property
    def review_shown(self) -> str:
        """The assessor's review; an appeal that made the answer correct overrules its must-fix lines,
        so they no longer say "must fix"."""
        if self.appeal == "overridden" and self.state != "contradicted":
            return self.review.replace(MUST_FIX_TAG, " [overruled by appeal]")
        return self.review

    @property
    def review_label(self) -> str:
        return "Review (the assessor's, overruled by appeal)" if self.appeal == "overridden" else "Review"

    @property
    def counts(self) -> str:
        """How the answer counts in C, in plain words (c_i), said beside the state and never as a pass."""
        return "counts as correct (c_i = 1)" if self.verdict != "incorrect" else "counts as wrong (c_i = 0)"


def _card(r: Record, role_prefix: str, override: Decision | None, links: Links | None) -> Card:
    verdict = "incorrect" if not r.c else ("unverifiable" if r.verdict == "unverifiable" else "correct")
    title = f"{r.question_id}. {r.question_title}" if r.question_title else f"Question {r.question_id}"
    return Card(anchor=card_anchor(r), label=f"{role_prefix}{title}",
                answer=_answer_text(r.answer), justification=r.justification, verdict=verdict,
                p=_fmt(r.p_correct, 2) if r.p_correct is not None else None, review=r.review,
                location=r.location, override=override.describe() if override else "",
                link=links(r) if links else "", state=shown_state(r), passages=r.passages,
                appeal=appeal_kind(r.appeal))


def appeal_kind(mark: str) -> str:
    """"overridden" or "confirmed": what an appeal standing on a record did (``Record.appeal``), or ""."""
    from checklist_eval.challenge.results.appeals import CONFIRMED, OVERRIDDEN

    return "overridden" if mark.startswith(OVERRIDDEN) else "confirmed" if mark.startswith(CONFIRMED) else ""


def shown_state(r: Record) -> str:
    """The record's evidence state as c_i counts it (``Record.shown_state``)."""
    return r.shown_state.value


Links = Callable[["Record"], str]


def _cards(records: Sequence[Record], role: Role, prefix: str, overrides: Overrides | None,
           links: Links | None) -> list[Card]:
    """One card per question of ``role``, in checklist order."""
    return [_card(r, prefix, (overrides or {}).get(r.key), links) for r in records if r.role == role]


def _joined(records: Sequence[Record], attr: str) -> str:
    return ", ".join(sorted({str(getattr(r, attr) or "") for r in records} - {""}))


def _version_label(assessor: str | None) -> str:
    """What a record's ``prompt_version`` is: the offline assessor's rules version, or a model's prompt."""
    return "rules" if assessor == "heuristic" else "prompt"




def _read_by(by_role: dict[str, list[Record]]) -> list[str]:
    """"Checklists read by TeX (G, A), the source evaluator (T)": which reader made each role's records."""
    roles: dict[str, list[str]] = {}
    for role, rows in by_role.items():
        reader = next((r.reader for r in rows if r.reader), "")
        if reader in READER_NAMES:
            roles.setdefault(reader, []).append(role)
    if not roles:
        return []
    return ["Checklists read by " + "; ".join(f"{READER_NAMES[k]} ({', '.join(v)})" for k, v in roles.items())]


def _judged_by(records: Sequence[Record]) -> str:
    """Who judged: assessor, and the model, prompt version and endpoint only where they apply."""
    assessor = _joined(records, 'assessor')
    parts = [f"assessor {assessor or '(none)'}"]
    for attr, name in (("model", "model"), ("prompt_version", _version_label(assessor)), ("endpoint", "endpoint"),
                       ("output_strategy", "output strategy")):
        if _joined(records, attr):
            parts.append(f"{name} {_joined(records, attr)}")
    return "Judged by " + " \u00b7 ".join(parts)


def _tally(records: Sequence[Record]) -> str:
    ok = sum(r.c for r in records)
    n = state_counts([shown_state(r) for r in records])
    return (f"{ok} of {len(records)} answers judged correct: {n['supported']} supported by a passage of the paper,"
            f" {n['unverified']} unverified (no passage found to support or contradict them; the rules count them"
            f" correct, but nothing checked them); {n['contradicted']} contradicted.")


def _all_clear(counts: dict[str, int]) -> str:
    """The line said when no answer is listed: only when every answer is supported."""
    if counts["contradicted"] or counts["unverified"]:
        return ""
    return "Nothing to fix or to read: every answer is supported by a passage of the paper (see its card)."


# What the offline assessor cannot judge, said in every report it made: a green answer is one its
# checks did not contradict, not one they proved.
OFFLINE_LIMITS = ("The offline checks read words, not meaning. They cannot judge whether an experiment, a proof or"
                  " a discussion is adequate, whether a linked repository or a supplement really holds what is"
                  " claimed, or anything outside the text they were given (supplements, cited works, code). An"
                  " unverified answer is one they could neither support with a passage nor contradict: read it"
                  " yourself before you rely on it.")


def limits_of(records: Sequence[Record]) -> str:
    return OFFLINE_LIMITS if any(r.assessor == "heuristic" for r in records) else ""


def paper_records(paper: Paper, assessments: Sequence[Assessment]) -> list[Record]:
    """One checked paper as assessment records (role G of a one-paper submission), so its report and
    its C follow exactly the rules the challenge scores follow (``Record.c``, ``scoring.correctness``)."""
    from checklist_eval.challenge.records import records_from_assessments

    sid = Path(paper.source).name or "paper"
    return records_from_assessments(sid, "G", paper, assessments, case="G", scored_at="")


def paper_view(paper: Paper, assessments: Sequence[Assessment], *, assessor: str | None, model: str | None,
               usage: Usage | None, prompt_version: str | None = None,
               links: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """What one checked paper's report shows (the template's ``r``); ``links``: (label, href) of where to go
    next (serve's "check another paper" and the report's JSON)."""
    from checklist_eval.assessors.evidence.manipulation import describe, injection_passages
    from checklist_eval.challenge.scoring import correctness

    records = paper_records(paper, assessments)
    cards = _cards(records, "G", "", None, None)
    judged = [f"assessor {assessor}"] + ([f"model {model}"] if model else []) + (
        [f"{_version_label(assessor)} {prompt_version}"] if prompt_version else [])
    return {
        "heading": f"Checklist assessment: {paper.title or Path(paper.source).name}",
        "meta": [f"Source: {paper.source}", f"checklist {paper.checklist.id}", " / ".join(judged),
                 *([f"read by {READER_NAMES[paper.reader]}"] if paper.reader in READER_NAMES else []),
                 datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")],
        "scores": [], "headline": f"Correctness C = {_fmt(float(correctness(records)))}", "rules": rules_parts()[:1],
        "p_legend": P_LEGEND,
        "tally": _tally(records), "groups": paper_groups(records), "zero": "",
        "counts": counts_line(state_counts_of(records)), "all_clear": _all_clear(state_counts_of(records)),
        "limits": limits_of(records), "states": state_counts([c.state for c in cards]),
        "usage": usage_line(usage), "overrides": [], "score_warnings": [],
        "hidden": [describe(run) for run in paper.hidden_text], "injection": injection_passages(paper),
        "undecided": [w.location or w.message for w in paper.warnings if w.kind is WarningKind.UNDECIDED],
        "source_differs": [w.message for w in paper.warnings if w.kind is WarningKind.SOURCE_DIFFERS],
        "agreement": [],
        "links": list(links),
        "sections": [{"heading": "Answers", "source": "", "warnings": [str(w) for w in paper.warnings],
                      "cards": cards}],
    }


def render_paper_report(
    paper: Paper,
    assessments: Sequence[Assessment],
    *,
    assessor: str | None,
    model: str | None,
    usage: Usage | None,
    prompt_version: str | None = None,
    links: Sequence[tuple[str, str]] = (),
) -> str:
    """The HTML text of one paper's report (see ``write_paper_report``)."""
    view = paper_view(paper, assessments, assessor=assessor, model=model, usage=usage,
                      prompt_version=prompt_version, links=links)
    return render("report.html", page_title=f"Checklist report: {paper.title or Path(paper.source).name}", r=view)


def write_paper_report(
    out_dir: str | Path,
    paper: Paper,
    assessments: Sequence[Assessment],
    *,
    assessor: str | None,
    model: str | None,
    usage: Usage | None,
    prompt_version: str | None = None,
    links: Sequence[tuple[str, str]] = (),
) -> Path:
    """Write ``out_dir/report.html`` for one paper (atomically) and return its path."""
    text = render_paper_report(paper, assessments, assessor=assessor, model=model, usage=usage,
                               prompt_version=prompt_version, links=links)
    return atomic_write_text(Path(out_dir) / REPORT_HTML, text)


# --------------------------------------------------------------------------------------------------
# Submission reports (G/A/T): built from assessment records, so a rescored submission can be redrawn.


def _agreement_rows(records: Sequence[Record]) -> list[dict[str, Any]]:
    from checklist_eval.challenge.scoring import agreement_rows

    rows = []
    for row in agreement_rows(records):  # every question counts (T's TODO is T's answer)
        rows.append({"qid": row["question_id"], "a": _answer_text(row["a"]), "t": _answer_text(row["t"]),
                     "g": int(row["g"]), "c_a": int(row["c_A"]), "agree": "yes" if row["agree"] else "no",
                     # the participant's interest: an agreement raises R (their loss), a disagreement lowers it
                     "cls": "bad" if row["agree"] else "ok"})
    return rows


def _manipulation_lines(by_role: dict[str, list[Record]], kind: str) -> list[str]:
    from checklist_eval.assessors.evidence.manipulation import entries

    lines = []
    for role in ROLES:
        flag = next((r.manipulation for r in by_role.get(role, []) if r.manipulation), "")
        lines += [f"{role}: {line}" for line in entries(flag, kind)]
    return lines


def submission_view(score: SubmissionScore, records: Sequence[Record], *, usage: Usage | None = None,
                    overrides: Overrides | None = None, links: Links | None = None,
                    title: str | None = None, next_links: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """What one submission's report shows (the template's ``r``); ``overrides``: the appeal decisions
    already applied to ``records``; ``links``: a record's page in the organizer's browser."""
    from checklist_eval.assessors.evidence.manipulation import HIDDEN, INJECTION, SOURCE_DIFFERS, UNDECIDED

    by_role: dict[str, list[Record]] = {}
    for r in records:
        by_role.setdefault(r.role, []).append(r)
    multi = len(by_role) > 1
    sections: list[dict[str, Any]] = []
    for role in ROLES:
        if role not in by_role:
            continue
        c = {"G": score.C_G, "A": score.C_A, "T": score.C_T}[role]
        sections.append({"heading": f"{ROLE_NAMES[role]}: C = {_fmt(c)}",
                         "source": next((r.source for r in by_role[role] if r.source), ""), "warnings": [],
                         "cards": _cards(records, role, f"{role} " if multi else "", overrides, links)})
    cards = [card for section in sections for card in section["cards"]]
    meta = [f"Case {score.case}", f"{score.questions} questions", "S = C_G \u00d7 C_A \u00d7 (1 \u2212 R) \u00d7 C_T",
            _judged_by(records)] + _read_by(by_role)
    if score.case == "GT":
        meta.append("Case GT: the adversarial paper A is T's paper with G's checklist answers")
    applied = [o for k, o in (overrides or {}).items() if k[0] == score.submission_id]
    return {
        "heading": title or f"Submission {submission_name(score.submission_id, records)}", "meta": meta,
        "scores": [("case", score.case)] + [(k, _fmt(getattr(score, k), 4)) for k in ("C_G", "C_A", "C_T", "R", "S")],
        "headline": f"S = {_fmt(score.S, 4)}", "tally": _tally(records), "rules": rules_parts(), "p_legend": P_LEGEND,
        "groups": submission_groups(records), "zero": zero_factors(score), "usage": usage_line(usage),
        "counts": counts_line(state_counts_of(records), of="answers in all", author=False),
        "all_clear": _all_clear(state_counts_of(records)),
        "limits": limits_of(records), "states": state_counts([c.state for c in cards]),
        "overrides": applied, "score_warnings": list(score.warnings),
        "hidden": _manipulation_lines(by_role, HIDDEN), "injection": _manipulation_lines(by_role, INJECTION),
        "undecided": _manipulation_lines(by_role, UNDECIDED),
        "source_differs": _manipulation_lines(by_role, SOURCE_DIFFERS),
        "agreement": _agreement_rows(records) if "A" in by_role and "T" in by_role else [],
        "links": list(next_links), "sections": sections,
    }


def submission_name(sid: str, records: Sequence[Record]) -> str:
    """"Équipe Zoé (Equipe_Zoe)": the name as the team gave it with the safe id beside it; the id alone
    when they are the same."""
    from checklist_eval.challenge.submissions import given_name

    name = given_name(next((r.source for r in records if r.source), ""), sid)
    return f"{name} ({sid})" if name and name != sid else sid


def render_submission_report(
    score: SubmissionScore, records: Sequence[Record], *, usage: Usage | None = None,
    overrides: Overrides | None = None, title: str | None = None, links: Sequence[tuple[str, str]] = (),
) -> str:
    view = submission_view(score, records, usage=usage, overrides=overrides, title=title, next_links=links)
    return render("report.html", page_title=view["heading"], r=view)


def write_submission_report(
    path: str | Path, score: SubmissionScore, records: Sequence[Record], *, usage: Usage | None = None,
    overrides: Overrides | None = None, title: str | None = None,
) -> Path:
    return atomic_write_text(path, render_submission_report(score, records, usage=usage, overrides=overrides,
                                                            title=title))


# --------------------------------------------------------------------------------------------------
# Terminal summaries


def print_scores_table(console: Console, scores: Sequence[SubmissionScore], *, title: str = "Scores") -> None:
    """One row per submission, rounded for display only."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=escape(title))
    table.add_column("submission")
    table.add_column("case")
    for col in ("C_G", "C_A", "C_T", "R", "S"):
        table.add_column(col, justify="right")
    for s in scores:
        table.add_row(
            escape(s.submission_id), s.case, *(_fmt(getattr(s, k), 3) for k in ("C_G", "C_A", "C_T", "R", "S"))
        )
    console.print(table)
    for s in scores:
        for w in s.warnings:
            console.print(f"[yellow]warning[/yellow] {escape(s.submission_id)}: {escape(w)}", markup=True,
                          highlight=False)


def print_submission_summary(console: Console, score: SubmissionScore, records: Sequence[Record]) -> None:
    """Scores plus the A-vs-T agreement table when the submission has both."""
    from rich.markup import escape
    from rich.table import Table

    from checklist_eval.challenge.scoring import agreement_rows

    print_scores_table(console, [score], title=f"Submission {score.submission_id} ({score.case})")
    roles = {r.role for r in records}
    if not {"A", "T"} <= roles:
        return
    table = Table(title="A vs T (per question)")
    for col in ("#", "a", "t", "g", "c_A", "agree?"):
        table.add_column(col)
    for row in agreement_rows(records):
        agree = "[red]yes[/red]" if row["agree"] else "[green]no[/green]"  # an agreement raises R: your loss
        table.add_row(
            escape(row["question_id"]), _answer_text(row["a"]), _answer_text(row["t"]), str(row["g"]),
            str(row["c_A"]), agree,
        )
    console.print(table)
