"""The checklist in LaTeX source: where it is, which answer marks it holds, which question each mark
answers (by meaning, never by position) and the justification written after it."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from checklist_eval.models import Answer, Checklist, ChecklistSpec, ParseWarning, normalize_answer
from checklist_eval.reading import checklists
from checklist_eval.reading.checklists.assembly import Finding, Locate, assemble
from checklist_eval.reading.latex.dead import Kept, input_offset, joined
from checklist_eval.reading.latex.lexer import ENV_TOKEN, bracket_end, env_end, group_close, squash
from checklist_eval.reading.latex.macros import Macros
from checklist_eval.reading.latex.numbering import Target
from checklist_eval.reading.latex.readable import readable

_CHECKLIST_HEADING = re.compile(
    r"\\(?:section|chapter|subsection|paragraph)\*?\s*(?:\[[^\]]*\])?\s*\{[^{}]*?[Cc]hecklist[^{}]*\}"
)
_NEXT_HEADING = re.compile(
    r"\\(?:section|chapter|appendix|bibliography|printbibliography|end\{document\})(?![a-zA-Z@])")
_ANSWER_MACRO = re.compile(r"\\answer(Yes|No|NA|TODO)(?![a-zA-Z@])")
_ANSWER_BRACKET = re.compile(r"\[\s*(Yes|No|NA|N/A|TODO)\s*\]")
_GUIDELINES = re.compile(r"Guidelines\s*:?\s*\}?\s*(?=\\begin\s*\{(?:itemize|enumerate)\})")
_ITEM = re.compile(r"\\item(?![a-zA-Z@])")
_LIST_END = re.compile(r"\\end\s*\{(?:enumerate|itemize|description)\}")
# Sentences of the official instruction blocks that contain answer macros without being answers.
_INSTRUCTION_PHRASES = (
    "you should answer",
    "means either that the question is not applicable",
    "is generally preferable to",
    "change the default",
    "did you include the license to the code and datasets",
    "justification right after your answer",
    "grounds for rejection",
    "proper justification is given",
    "replace by",
    "for each question",
)
_LABEL = re.compile(
    r"^\s*(?:\\(?:textbf|emph|textit|bf|it|underline)\s*)?\{?\s*(?:Justification|Answer|Question)\s*:?\s*\}?\s*:?",
    re.I,
)


@dataclass
class Region:
    start: int
    end: int
    heading_numbered: bool = False
    # the headings of other checklists in the paper (a datasheet, another venue's list), left aside
    left_aside: tuple[str, ...] = ()


# How many answer marks of a candidate checklist are matched to questions when candidates are weighed:
# a NeurIPS checklist shows itself within its first few dozen; a hostile paper may hold thousands.
_MARKS_WEIGHED = 40


def find_region(text: str) -> Region | None:
    """The live NeurIPS checklist: of the headed sections that hold answer marks (a heading naming a
    checklist, up to the next top-level heading), the one whose answers are about the most NeurIPS
    questions, the others being left aside; without such a heading (a fragment), the lists that hold
    the answer marks."""
    candidates = _headed_regions(text)
    if len(candidates) > 1:
        weights = [_questions_answered(text[c.start : c.end]) for c in candidates]
        best = max(range(len(candidates)), key=lambda i: (weights[i], -i))
        others = tuple(_heading_title(text, c.start) for i, c in enumerate(candidates) if i != best)
        chosen = candidates[best]
        return Region(chosen.start, chosen.end, chosen.heading_numbered, others)
    if candidates:
        return candidates[0]
    return _list_region(text)


def _headed_regions(text: str) -> list[Region]:
    """Each section a checklist heading opens that holds an answer mark, in order."""
    ends: list[int] | None = None
    answers: list[int] = []
    found: list[Region] = []
    for m in _CHECKLIST_HEADING.finditer(text):
        if ends is None:  # found once: searching again from each of thousands of headings is quadratic
            ends = [n.start() for n in _NEXT_HEADING.finditer(text)]
            answers = sorted(a.start() for pattern in (_ANSWER_MACRO, _ANSWER_BRACKET) for a in pattern.finditer(text))
        end = _next_at(ends, m.end())
        end = len(text) if end < 0 else end
        if m.end() <= _next_at(answers, m.end()) < end and (not found or m.start() >= found[-1].end):
            numbered = "*" not in text[m.start() : m.start() + 12] and text.startswith("\\section", m.start())
            found.append(Region(m.start(), end, numbered))
            if len(found) > _MARKS_WEIGHED:
                break  # a paper of thousands of checklist headings: the first ones are weighed
    return found


def _heading_title(text: str, start: int) -> str:
    m = _CHECKLIST_HEADING.match(text, start)
    title = m.group(0) if m else text[start : start + 80]
    return squash(title[title.find("{") + 1 :].rstrip("}"))[:80]


def _questions_answered(region: str) -> int:
    """How many distinct questions of the NeurIPS checklist version the region is written against
    its answer marks answer (each read from the text before it, as the answers themselves are)."""
    spec = checklists.load(checklists.detect(region))
    marks = sorted(m.start() for pattern in (_ANSWER_MACRO, _ANSWER_BRACKET) for m in pattern.finditer(region))
    matched = set()
    previous = 0
    for mark in marks[:_MARKS_WEIGHED]:
        qid = _best_match(spec, region[max(previous, mark - 600) : mark])
        if qid is not None:
            matched.add(qid)
        previous = mark
    return len(matched)


def _list_region(text: str) -> Region | None:
    """Without a heading: from the outermost list around the first answer mark of the body to the end
    of the list holding the last."""
    # Answer macros in the preamble are definitions (\newcommand{\answerYes}...), not answers.
    body_start = text.find("\\begin{document}")
    marks = [m.start() for m in _ANSWER_MACRO.finditer(text, max(body_start, 0))]
    if not marks:
        return None
    start = _enclosing_list_start(text, marks[0])
    last = marks[-1]
    end_m = None
    depth = 0
    for tok in ENV_TOKEN.finditer(text, start):
        if tok.group(2) not in ("enumerate", "itemize", "description"):
            continue
        depth += 1 if tok.group(1) == "begin" else -1
        if depth == 0 and tok.end() > last:
            end_m = tok.end()
            break
    return Region(start, end_m or len(text))


def _enclosing_list_start(text: str, pos: int) -> int:
    """Start of the outermost list environment around ``pos`` (or ``pos``'s paragraph)."""
    stack: list[int] = []
    outer = None
    for tok in ENV_TOKEN.finditer(text, 0, pos):
        if tok.group(2) not in ("enumerate", "itemize", "description"):
            continue
        if tok.group(1) == "begin":
            stack.append(tok.start())
        elif stack:
            stack.pop()
    if stack:
        outer = stack[0]
    return outer if outer is not None else max(0, text.rfind("\n\n", 0, pos))


def _remove_guidelines(region: str) -> tuple[str, Kept]:
    """Guideline bullets restate the template (and in 2026 contain answer macros); never answers.
    Also the map from the text left back to ``region``."""
    spans = []
    pos = 0
    for m in _GUIDELINES.finditer(region):
        if m.start() < pos:
            continue
        spans.append((pos, m.start()))
        pos = env_end(region, m.end())
    spans.append((pos, len(region)))
    return joined(region, spans)


@dataclass
class Mark:
    answer: Answer
    start: int
    end: int  # after the macro and its optional [..] argument
    arg: str | None  # the [..] or {..} text right after the macro


def _bracket_mark(m: re.Match[str]) -> Mark:
    """A plain ``[Yes]``; _ANSWER_BRACKET matches only spellings normalize_answer knows."""
    answer = normalize_answer(m.group(1))
    assert answer is not None, m.group(1)
    return Mark(answer, m.start(), m.end(), None)


def _answer_marks(region: str) -> list[Mark]:
    marks = []
    found = list(_ANSWER_MACRO.finditer(region))
    for index, m in enumerate(found):
        end = m.end()
        arg_parts = []
        j = end
        if j < len(region) and region[j] == "[":
            k = bracket_end(region, j)
            arg_parts.append(region[j + 1 : k - 1])
            j = k
        k = _skip_space_inline(region, j)
        if k < len(region) and region[k] == "{":
            e = group_close(region, k)
            if e < 0:  # never closed: it runs to the paragraph's end or the next answer, not the document's
                stops = [_next_at(_Landmarks.of(region).pars, k), len(region)]
                stops += [found[index + 1].start()] if index + 1 < len(found) else []
                e = min(x for x in stops if x >= 0) + 1
            arg_parts.append(region[k + 1 : e - 1])
            j = min(e, len(region))
        arg = " ".join(p for p in arg_parts if p.strip()) or None
        marks.append(Mark(Answer(m.group(1)), m.start(), j, arg))
    if not marks:
        for m in _ANSWER_BRACKET.finditer(region):
            marks.append(_bracket_mark(m))
    else:
        # plain [Yes] after an "Answer:" label counts even when other answers use macros
        for m in _ANSWER_BRACKET.finditer(region):
            if re.search(r"Answer\s*:?\s*\}?\s*:?\s*$", region[max(0, m.start() - 30) : m.start()]):
                marks.append(_bracket_mark(m))
        marks.sort(key=lambda mk: mk.start)
    return marks


def _skip_space_inline(text: str, i: int) -> int:
    # A justification group may sit on the next line, but not after a blank line.
    j = i
    while j < len(text) and text[j] in " \t":
        j += 1
    if j < len(text) and text[j] == "\n":
        j += 1
        while j < len(text) and text[j] in " \t":
            j += 1
    return j


class _Landmarks:
    """Where items, list ends, environments and paragraph breaks start in a region, found once: every
    answer asks for the nearest ones, and scanning the region again per answer is quadratic when
    they are far or missing."""

    _cache: list[tuple[str, _Landmarks]] = []

    def __init__(self, region: str):
        self.items = [m.start() for m in _ITEM.finditer(region)]
        self.list_ends = [m.start() for m in _LIST_END.finditer(region)]
        self.begins = [m.start() for m in re.finditer(r"\\begin\{", region)]
        self.pars = [m.start() for m in re.finditer(r"\n(?=\n)", region)]

    @classmethod
    def of(cls, region: str) -> _Landmarks:
        for cached, marks in cls._cache:
            if cached is region:
                return marks
        marks = cls(region)
        cls._cache.insert(0, (region, marks))
        del cls._cache[2:]
        return marks


def _next_at(starts: list[int], pos: int) -> int:
    """The first start at or after ``pos``, or -1."""
    i = bisect.bisect_left(starts, pos)
    return starts[i] if i < len(starts) else -1


def _last_before(starts: list[int], pos: int) -> int:
    """The last start before ``pos``, or -1."""
    i = bisect.bisect_left(starts, pos)
    return starts[i - 1] if i > 0 else -1


def _unit_bounds(region: str, pos: int) -> tuple[int, int]:
    """The \\item (or paragraph) around ``pos``."""
    marks = _Landmarks.of(region)
    prev_item = max(0, _last_before(marks.items, pos))
    # a paragraph break "\n\n" ending before pos (rfind semantics: it may end at pos + 1)
    prev_par = _last_before(marks.pars, pos - 1)
    start = max(prev_item, prev_par if prev_par >= 0 else 0)
    ends = [x for x in (_next_at(marks.items, pos), _next_at(marks.pars, pos)) if x >= 0]
    return start, min(ends) if ends else len(region)


def _is_instruction(region: str, mark: Mark, seen: dict[tuple[int, int], bool]) -> bool:
    # Marks sharing one item share its verdict (``seen``): reading the item again for each of
    # thousands of marks in it is quadratic.
    bounds = _unit_bounds(region, mark.start)
    if bounds not in seen:
        unit = " ".join(region[bounds[0]:bounds[1]].lower().split())
        seen[bounds] = any(p in unit for p in _INSTRUCTION_PHRASES)
    return seen[bounds]


def _tail(region: str, pos: int) -> tuple[str, int]:
    """Text after an answer up to the next \\item or the end of the list."""
    marks = _Landmarks.of(region)
    ends = [x for x in (_next_at(marks.items, pos), _next_at(marks.list_ends, pos), _next_at(marks.begins, pos))
            if x >= 0]
    end = min(ends) if ends else len(region)
    return region[pos:end], end


def _strip_label(text: str) -> str:
    text = text.strip()
    text = re.sub(r"^(?:\\\\|[\s.,;:])+", "", text)
    text = _LABEL.sub("", text, count=1)
    text = re.sub(r"\\justificationTODO\s*(?:\{\})?", "", text)
    return re.sub(r"(?:\\\\|\s)+$", "", text).strip()


def _is_trivial(text: str) -> bool:
    return not re.sub(r"[\s.,;:\\{}~]+", "", text)


_EMPTY_ITEM_LABEL = re.compile(r"\s*\[\s*\]\s*")
_UNIT_WORD = re.compile(r"(?:\\(?:textbf|emph|textit)\s*)?\{?\s*(\w+)\s*:?")


def _justification_after(region: str, mark: Mark) -> tuple[str | None, int]:
    """Raw LaTeX justification for ``mark`` and the index where the next question's text begins."""
    pieces = [mark.arg] if mark.arg and not _is_trivial(mark.arg) else []
    tail, end = _tail(region, mark.end)
    tail_text = _strip_label(tail)
    if not _is_trivial(tail_text):
        pieces.append(tail_text)
    nxt = _ITEM.match(region, end)
    if nxt:
        m = _EMPTY_ITEM_LABEL.match(region, nxt.end())
        if m:
            body_start = m.end()
            label = _UNIT_WORD.match(region, body_start)
            word = (label.group(1).lower() if label else "")
            if word not in ("question", "answer", "guidelines"):
                unit_text, unit_end = _tail(region, body_start)
                cleaned = _strip_label(unit_text)
                if not _is_trivial(cleaned):
                    pieces.append(cleaned)
                end = unit_end
    joined = "\n".join(p.strip() for p in pieces if p and p.strip())
    return (joined or None), end


# --- putting it together --------------------------------------------------------------------------


def _match_text(segment: str) -> list[str]:
    """Candidate texts naming the question of a segment: its last item, last two, last three,
    so a live instruction block or a group heading in front does not drown the question."""
    units = [u for u in _ITEM.split(segment)]
    cleaned = []
    for u in units:
        u = re.sub(r"^\s*\[[^\]]*\]", "", u)
        u = re.sub(r"\b(?:Question|Answer|Justification)\s*:", " ", u)
        u = _ANSWER_MACRO.sub(" ", u)
        u = re.sub(r"\\(?:begin|end)\s*\{[^{}]*\}", " ", u)
        if u.strip():
            cleaned.append(u)
    return [" ".join(cleaned[-k:]) for k in range(1, min(3, len(cleaned)) + 1)]


def _best_match(spec: ChecklistSpec, segment: str) -> str | None:
    best: tuple[float, str] | None = None
    for candidate in _match_text(segment):
        scores = checklists.match_scores(spec, candidate)
        qid = checklists.best_match(scores)
        if qid is None:
            continue
        score = scores[qid]
        if best is None or score > best[0]:
            best = (score, qid)
    return best[1] if best else None


def extract_checklist(
    text: str, region: Region, spec: ChecklistSpec, macros: Macros, targets: dict[str, Target],
    locate: Locate | None = None,
) -> tuple[Checklist, list[ParseWarning], int]:
    """Every question of ``spec`` with the answer and justification found in the region; also the
    warnings and the number of questions answered. ``locate`` gives the place of a position in ``text``."""
    raw, kept = _remove_guidelines(text[region.start : region.end])
    findings = _findings(raw, spec, macros, targets, lambda pos: region.start + input_offset(kept, pos))
    checklist, warnings = assemble(spec, findings, render=lambda just: readable(just, macros, targets),
                                   locate=locate)
    return checklist, warnings, sum(it.answer is not None for it in checklist.items)


def _findings(raw: str, spec: ChecklistSpec, macros: Macros, targets: dict[str, Target],
              offset: Callable[[int], int]) -> Iterator[Finding]:
    """Each answer mark of the region (instruction blocks left out) with the question the text before
    it names and the justification after it."""
    seg_start = 0
    seen: dict[tuple[int, int], bool] = {}
    marks = [m for m in _answer_marks(raw) if not _is_instruction(raw, m, seen)]
    for number, mark in enumerate(marks, start=1):
        if mark.start < seg_start:
            continue  # an answer mark inside the previous justification
        segment = raw[seg_start : mark.start]
        justification, seg_start = _justification_after(raw, mark)
        yield Finding(_best_match(spec, segment), mark.answer, justification, location=f"answer mark {number}",
                      place=partial(_place, mark, segment, macros, targets), offset=offset(mark.start))


def _place(mark: Mark, segment: str, macros: Macros, targets: dict[str, Target]) -> str:
    shown = squash(readable(segment[-160:], macros, targets))[-80:]
    return f'answer [{mark.answer.value}] (after: "{shown}")'


def clear_landmarks() -> None:
    _Landmarks._cache.clear()
