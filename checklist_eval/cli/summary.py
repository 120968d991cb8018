"""What ``check``, ``score`` and ``batch`` print first: a summary that fits an 80x24 terminal.

The title line, the answers per evidence state with C, then the answers to fix (contradicted, with their
worst problem) and to read (unverified: nothing checked them), each with ``file:line`` or ``page N``,
then where the full report is. The lists are cut to the screen (the rest is counted, never dropped
silently); ``--verbose`` prints the whole table before it, ``--quiet`` the one summary line alone.
``score`` says the same of a submission, in the participant's words (``headline.submission_groups``),
and ``batch`` the counts, the best rows and every failure, each in one line of the screen's width.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from checklist_eval.challenge.headline import (
    STATE_MARK,
    STATE_STYLE,
    Entry,
    Group,
    paper_groups,
    state_counts_of,
    submission_groups,
    zero_factors,
)

if TYPE_CHECKING:
    from rich.console import Console

    from checklist_eval.challenge.records import Record
    from checklist_eval.challenge.scoring import SubmissionScore
    from checklist_eval.summaries import CheckResult

SCREEN_LINES = 22  # a 24-line terminal less the command typed and the prompt that follows
UNCUT = 10**6  # --verbose: the lists whole


def summary_line(result: CheckResult, records: Sequence[Record]) -> str:
    """The one line ``--quiet`` prints: C, the answers per state and the questions to fix."""
    n = result.states
    fix = [r.question_id for r in records if r.shown_state.value == "contradicted"]
    to_fix = f" (fix {', '.join(fix)})" if fix else ""
    return (f"C = {result.C:.3f}: {n['contradicted']} contradicted{to_fix}, {n['unverified']} unverified "
            f"(read yourself), {n['supported']} supported; {result.source}")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, an ellipsis marking a cut."""
    return text if len(text) <= width else text[: max(1, width - 1)] + "\u2026"


def _entry_lines(e: Entry, state: str, width: int) -> list[tuple[str, str]]:
    """(style, text) lines of one listed answer: mark, question, title and place; a problem under it."""
    where = e.where
    head = f"  {STATE_MARK[state]} {e.qid:>2} "
    room = width - len(head) - len(where) - 2
    title = _cut(_one_line(e.title or f"Question {e.qid}"), max(8, room))
    lines = [(STATE_STYLE[state], f"{head}{title.ljust(max(8, room))}  {where}")]
    if e.problem:
        lines.append(("", "       " + _cut(_one_line(e.problem), width - 7)))
    return lines


def _shared_file(groups: list[Group]) -> str:
    """The one file every listed answer is in, when its name is long enough to crowd the titles out."""
    files = {e.location.rpartition(":")[0] for g in groups for e in g.entries}
    (only,) = files if len(files) == 1 else ("",)
    return only if len(only) > 24 and all(e.location.rpartition(":")[2].isdigit() for g in groups
                                          for e in g.entries) else ""


def _group_lines(groups: list[Group], width: int, budget: int) -> list[tuple[str, str]]:
    """The groups' lines within ``budget``: each group keeps its heading and as many entries as fit; the
    ones left out are counted with where to see them. A long file name every answer shares is said once
    in the headings, the entries keeping their line."""
    import dataclasses

    state_of = {"bad": "contradicted", "neutral": "unverified", "good": "supported"}
    shared = _shared_file(groups)
    if shared:
        groups = [dataclasses.replace(g, entries=[
            dataclasses.replace(e, location="line " + e.location.rpartition(":")[2]) for e in g.entries])
            for g in groups]
    out: list[tuple[str, str]] = [("", f"Every answer is in {shared}:")] if shared else []
    for gi, g in enumerate(groups):
        later = len(groups) - gi - 1  # headings still to come, one line each at least
        out.append(("bold", _cut(g.title + ":", width)))
        shown = 0
        for e in g.entries:
            lines = _entry_lines(e, state_of[g.tone], width)
            room = budget - len(out) - later * 2 - (1 if shown + 1 < len(g.entries) else 0)
            if len(lines) > room:
                lines = lines[:1]  # the problem goes before the answer does
                if len(lines) > room:
                    break
            out += lines
            shown += 1
        if shown < len(g.entries):
            out.append(("", f"  (+{len(g.entries) - shown} more: see the report, or --verbose)"))
    return out


def print_summary(console: Console, paper, result: CheckResult, records: Sequence[Record],
                  out_dir: str | None, *, verbose: bool, usage=None) -> None:
    """The summary block (see the module's doc), within ``SCREEN_LINES`` lines of ``console.width``."""
    width = min(console.width, 100)
    n = result.states
    judge = result.assessor + (f" / {result.model}" if result.model else "")
    suffix = f" ({paper.checklist.id}, {judge})"
    lines: list[tuple[str, str]] = [
        ("bold", _cut(_one_line(paper.title or paper.source), max(20, width - len(suffix))) + suffix),
        ("bold", f"C = {result.C:.3f} \u00b7 {len(result.items)} answers: {n['contradicted']} contradicted, "
                 f"{n['unverified']} unverified, {n['supported']} supported"),
    ]
    notes = _notes(paper, result, verbose, usage)
    footer = _footer(out_dir, verbose)
    budget = SCREEN_LINES - len(lines) - len(notes) - len(footer) if not verbose else UNCUT
    groups = paper_groups(records)
    lines += _group_lines(groups, width, budget) if groups else [
        ("green", "Nothing to fix or to read: every answer is supported by a passage of the paper.")]
    _print_lines(console, lines + notes + footer, width)


def _print_lines(console: Console, lines: list[tuple[str, str]], width: int) -> None:
    """Each line cut to ``width``, but for a "footer" (a path to open) and a "wrap" line (said whole)."""
    for style, text in lines:
        whole = style in ("footer", "wrap")
        console.print(text if whole else _cut(text, width), style=None if whole else style, highlight=False,
                      markup=False, soft_wrap=style == "footer")


def _notes(paper, result: CheckResult, verbose: bool, usage=None) -> list[tuple[str, str]]:
    """One line each, only when they apply: no body read, hidden text, warnings, the model's spending."""
    notes: list[tuple[str, str]] = []
    if not paper.body.strip():
        notes.append(("yellow", f"{result.states['unverified']} of {len(result.items)} answers could not be "
                                "checked: only the checklist was read"))
    if paper.hidden_text and not verbose:  # --verbose lists every run above
        from checklist_eval.assessors.evidence.manipulation import describe

        more = f" (+{len(paper.hidden_text) - 1} more: --verbose)" if len(paper.hidden_text) > 1 else ""
        notes.append(("red", f"Hidden text{more}: {_one_line(describe(paper.hidden_text[0]))}"))
    from checklist_eval.models import WarningKind

    # the body's warning was printed on stderr before the run, and the note above says what it costs
    warnings = [w for w in result.warnings if w.kind not in (WarningKind.NO_BODY, WarningKind.THIN_BODY)]
    if warnings and not verbose:
        more = f" (+{len(warnings) - 1} more with --verbose)" if len(warnings) > 1 else ""
        notes.append(("yellow", f"warning: {_one_line(str(warnings[0]))}{more}"))
    if result.usage.calls:
        notes.append(("footer", usage_text(result, usage)))  # one line a script can read, wrapped by the terminal
    return notes


def usage_text(result: CheckResult, usage=None) -> str:
    """Calls, tokens and cost of a run that called a model. ``usage``: the assessor's own Usage, which
    knows its reasoning tokens and whether the cost is known (an unpriced model: "price unknown")."""
    from checklist_eval.endpoint.prices import format_cost
    from checklist_eval.models import Usage

    u = result.usage
    full = usage if usage is not None else Usage(calls=u.calls, cost_usd=u.cost_usd)
    reasoning = f", {full.reasoning_tokens} of them reasoning" if full.reasoning_tokens else ""
    return (f"Usage: {u.calls} calls, {u.prompt_tokens} prompt + {u.completion_tokens} completion tokens "
            f"({u.cached_tokens} cached{reasoning}), {format_cost(full)}")


def _footer(out_dir: str | None, verbose: bool) -> list[tuple[str, str]]:
    from checklist_eval.challenge.results.layout import CHECK_JSON, REPORT_HTML

    if out_dir:  # the report's own path, to open or mail, on a line of its own (no wrapping)
        return [("footer", f"Wrote {out_dir}/{CHECK_JSON}; the report: {out_dir}/{REPORT_HTML}")]
    hint = "" if verbose else "; every answer: --verbose"
    return [("footer", f"Full report: --out DIR (report.html, check.json){hint}")]


# ------------------------------------------------------------------------------------------ score


def score_line(score: SubmissionScore) -> str:
    """The one line ``score --quiet`` prints."""
    return (f"{score.submission_id} ({score.case}): S = {score.S:.4f} (C_G {score.C_G:.3f}, C_A {score.C_A:.3f}, "
            f"C_T {score.C_T:.3f}, R {score.R:.3f})")


def print_score_summary(console: Console, score: SubmissionScore, records: Sequence[Record],
                        out_dir: str | None, *, verbose: bool, usage=None) -> None:
    """A submission in one screen: S and its factors (and which is 0), each paper's answers per state,
    then the lists a participant acts on, then where the report is."""
    width = min(console.width, 100)
    lines: list[tuple[str, str]] = [
        ("bold", f"Submission {score.submission_id} ({score.case}): S = {score.S:.4f}"),
        ("", f"S = C_G {score.C_G:.3f} \u00d7 C_A {score.C_A:.3f} \u00d7 (1 \u2212 R {score.R:.3f}) \u00d7 "
             f"C_T {score.C_T:.3f}"),
    ]
    zero = zero_factors(score)
    if zero:
        lines.append(("wrap", zero))
    for role in ("G", "A", "T"):
        mine = [r for r in records if r.role == role]
        if mine:
            n = state_counts_of(mine)
            lines.append(("", f"{role}: {n['contradicted']} contradicted, {n['unverified']} unverified, "
                              f"{n['supported']} supported, of {len(mine)} answers"))
    if usage is not None and usage.calls:
        from checklist_eval.endpoint.prices import format_cost

        lines.append(("", f"calls {usage.calls}, tokens {usage.prompt_tokens + usage.completion_tokens}, "
                          f"cost {format_cost(usage)}"))
    footer = [("footer", f"Wrote {out_dir}/result.json, report.html, records.csv" if out_dir else
               "Full report: --out DIR (report.html, result.json)" + ("" if verbose else "; per question: --verbose"))]
    used = sum(1 + len(text) // max(1, width) for _, text in lines)
    lines += _group_lines(submission_groups(records), width, UNCUT if verbose else SCREEN_LINES - used - len(footer))
    _print_lines(console, lines + footer, width)


# ------------------------------------------------------------------------------------------ batch

TOP_ROWS = 10  # the best submissions shown; the leaderboard has them all


def print_batch_summary(console: Console, outcome, root: str, out: str, *, verbose: bool, quiet: bool) -> None:
    """The batch's counts, its best rows (all of them with ``verbose``, none with ``quiet``), every failure
    in one line and where the results are, each line within the screen's width."""
    from checklist_eval.challenge.results.layout import ResultsLayout
    from checklist_eval.endpoint.prices import format_cost

    width = min(console.width, 100)
    u = outcome.usage
    counts = outcome.counts()
    lines: list[tuple[str, str]] = [
        ("bold", f"{counts.submissions} submissions: {outcome.scored} scored, {outcome.resumed} already done, "
                 f"{len(outcome.failures)} failed ({outcome.wall_s:.1f} s)"),
        ("", f"calls {u.calls}, tokens {u.prompt_tokens + u.completion_tokens}, cost {format_cost(u)}"),
    ]
    names = _given_names(root)
    scores = sorted((r.score for r in outcome.results), key=lambda s: -s.S)
    if scores and not quiet:
        shown = scores if verbose else scores[:TOP_ROWS]
        lines.append(("bold", "Best by S:" if len(shown) < len(scores) else "By S:"))
        for rank, s in enumerate(shown, 1):
            head = f"{rank:>3}. "
            tail = f" {s.case:<3}  S {s.S:.4f}" + (f"  C_G {s.C_G:.3f} C_A {s.C_A:.3f} C_T {s.C_T:.3f} R {s.R:.3f}"
                                                  if verbose else "")
            room = max(8, width - len(head) - len(tail))
            lines.append(("", head + _cut(names.get(s.submission_id, s.submission_id), room).ljust(room) + tail))
        if len(shown) < len(scores):
            lines.append(("", f"  (+{len(scores) - len(shown)} more: checklist-eval leaderboard {out})"))
    from checklist_eval.challenge.results.leaderboard import public_reason

    for f in outcome.failures:  # the reason's paths relative to ROOT, so the reason fits the line
        lines.append(("red", f"failed {names.get(f.submission_id, f.submission_id)}: {_one_line(public_reason(f))}"))
    lines.append(("footer", f"results in {out} (failures in {ResultsLayout(out).failures_jsonl})"))
    _print_lines(console, lines, width)


def _given_names(root: str) -> dict[str, str]:
    """Submission id -> "Équipe Zoé (Equipe_Zoe)" for the submissions under ``root`` whose name as given
    is not their id."""
    from checklist_eval.challenge.batch import result_ids
    from checklist_eval.challenge.submissions import find_submissions, given_name_of

    try:
        ids = result_ids(find_submissions(root))
    except Exception:  # noqa: BLE001 - names are a courtesy: the ids alone still say everything
        return {}
    return {sid: f"{given_name_of(p)} ({sid})" for p, sid in ids.items() if given_name_of(p) != sid}
