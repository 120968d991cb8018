"""Read a paper and its filled-in checklist out of a PDF (text layer via pypdfium2, BSD/Apache).

The pipeline is: extract each page's text once -> clean it (line numbers, running headers and page
numbers, hyphenation, ligatures) -> find the checklist region -> split it into question blocks and
read answer and justification from each -> everything outside the region is the body an
assessor sees.

Two checklist layouts are understood:

* 2024+ ("NeurIPS Paper Checklist"): numbered questions "1. Claims / Question: ... / Answer: [Yes] /
  Justification: ... / Guidelines: ...".
* 2021/22 ("Checklist"): groups "1. For all authors..." with items "(a) question? [Yes] text".

Questions are attached to the checklist version by meaning (:func:`checklists.match_question`),
never by their position, so a reordered or partly deleted checklist still lands on the right ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from checklist_eval import checklists, pdf_hidden
from checklist_eval.errors import InputError, NoChecklistError
from checklist_eval.models import (
    Answer,
    Checklist,
    ChecklistSpec,
    Paper,
    ParseWarning,
    Section,
    normalize_answer,
)

# --- text extraction ------------------------------------------------------------------------------

# Fewer visible characters than this per page on average means the pages are images: a scan, or a
# PDF whose fonts carry no Unicode mapping.
_MIN_CHARS_PER_PAGE = 20


@dataclass
class _Extracted:
    pages: list[str]  # what a reader sees: hidden runs are cut out
    title: str | None
    hidden: list[pdf_hidden.HiddenRun]


# Conference papers with appendices run to tens of pages; these stop files built to tie up a batch.
MAX_PDF_BYTES = 100 * 1024 * 1024
MAX_PDF_PAGES = 1000


def extract_pages(path: Path, data: bytes | None = None) -> _Extracted:
    """Each page's raw text (extracted exactly once) and the first page's largest-font text; from
    ``data`` when given (a PDF held in memory), else from the file, read under the size limit."""
    if data is None:
        from checklist_eval.sources import read_regular

        data = read_regular(path, MAX_PDF_BYTES, "PDF")
    if len(data) > MAX_PDF_BYTES:
        raise InputError(path, f"PDF larger than {MAX_PDF_BYTES // 2**20} MB")
    try:
        doc = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as err:
        raise InputError(path, _pdfium_problem(str(err))) from None
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read PDF: {err}") from None
    try:
        if len(doc) > MAX_PDF_PAGES:
            raise InputError(path, f"PDF has {len(doc)} pages, more than {MAX_PDF_PAGES}")
        pages: list[str] = []
        cutter = pdf_hidden.Cutter()
        title = None
        for i in range(len(doc)):
            page = doc[i]
            textpage = page.get_textpage()
            pages.append(cutter.visible_text(page, textpage, i + 1))
            if i == 0:
                title = _largest_font_text(textpage)
            textpage.close()
            page.close()
    except pdfium.PdfiumError as err:
        raise InputError(path, f"corrupt PDF: {err}") from None
    finally:
        doc.close()
    if not pages:
        raise InputError(path, "PDF has no pages")
    visible = sum(len(p) - p.count(" ") - p.count("\n") - p.count("\r") for p in pages)
    if visible < _MIN_CHARS_PER_PAGE * len(pages):
        raise InputError(path, "no text layer (scanned PDF?)")
    return _Extracted(pages, cutter.visible_title(title), cutter.runs)


def _pdfium_problem(message: str) -> str:
    low = message.lower()
    if "password" in low or "security" in low:
        return "encrypted PDF (password required); decrypt it first"
    if "format" in low or "file" in low:
        return f"not a readable PDF (corrupt or not a PDF): {message}"
    return f"cannot open PDF: {message}"


_TITLE_SCAN_CHARS = 600


def _largest_font_text(textpage: pdfium.PdfTextPage) -> str | None:
    """The first run of the largest font among a page's opening characters: the paper's title.

    Layout heuristics on lines confuse titles with author lists and dates; font size does not. An
    arXiv margin stamp ("arXiv:2305.18290v2 [cs.LG]") can be bigger still, so it is passed over.
    """
    n = min(textpage.count_chars(), _TITLE_SCAN_CHARS)
    chars = [chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, i)) for i in range(n)]
    sizes = [pdfium_c.FPDFText_GetFontSize(textpage.raw, i) for i in range(n)]
    # pdfium's own line breaks and spaces carry size 1 or whitespace: they never end a run
    generated = [size <= 1.0 or ch.isspace() for ch, size in zip(chars, sizes, strict=True)]
    candidates = sorted({round(s, 1) for s, g in zip(sizes, generated, strict=True) if not g}, reverse=True)
    for biggest in candidates[:3]:
        title = _font_run(chars, sizes, generated, biggest)
        if title and not title.lower().startswith("arxiv"):
            return title
    return None


def _font_run(chars: list[str], sizes: list[float], generated: list[bool], size: float) -> str:
    out: list[str] = []
    for ch, sz, gen in zip(chars, sizes, generated, strict=True):
        if not gen and abs(sz - size) <= 0.5:
            out.append(ch)
        elif gen and out:
            out.append(" ")
        elif out and not gen and ch.isalnum():
            break  # smaller letters: the run ended (smaller marks such as "*" are skipped)
    title = clean_text("".join(out)).replace("\n", " ")
    return re.sub(r"\s+", " ", title).strip(" ∗*")


# --- cleanup --------------------------------------------------------------------------------------

_LIGATURES = (
    {
        "\ufb00": "ff",
        "\ufb01": "fi",
        "\ufb02": "fl",
        "\ufb03": "ffi",
        "\ufb04": "ffl",
        "\ufb05": "st",
        "\ufb06": "st",
        "\u00a0": " ",
        "\u2002": " ",
        "\u2003": " ",
        "\u2009": " ",
        "\u200b": "",
        "\ufeff": "",
        "\x00": "",
    }
)
# A regex finds the rare characters; str.translate with a dict costs a Python call per character.
_LIGATURE_CHARS = re.compile("[" + "".join(_LIGATURES) + "]")


def fix_ligatures(text: str) -> str:
    """Spell out typographic ligatures (ﬁ -> fi) and drop zero-width characters."""
    return _LIGATURE_CHARS.sub(lambda m: _LIGATURES[m.group(0)], text)


# pdfium marks a hyphen it recognised as a line-end word break with U+FFFE and joins the two lines;
# U+00AD is the soft hyphen other producers use for the same thing.
_SOFT_HYPHEN = re.compile(r"[\ufffe\u00ad][ \t]*\n?[ \t]*")
# A plain "-" at a line end between lower-case letters is a word break too, unless the word before
# is already hyphenated ("state-of-the-\nart"), where the hyphen is part of the compound.
# The pattern starts with the literal "-" so the regex engine only stops at hyphens (speed).
_LINE_END_HYPHEN = re.compile(r"-(?<=[a-z]-)[ \t]*\n[ \t]*(?=[a-z])")
_WORD_BEFORE = re.compile(r"[\w-]*$")


def _join_hyphen(m: re.Match[str]) -> str:
    word = _WORD_BEFORE.search(m.string, max(0, m.start() - 40), m.start())
    return "-" if word and "-" in word.group(0) else ""


def dehyphenate(text: str) -> str:
    """Join words broken across lines: "evalua-\\ntion" -> "evaluation"."""
    if "\ufffe" in text or "\u00ad" in text:
        text = _SOFT_HYPHEN.sub("", text)
    if "-\n" in text or "- \n" in text:
        text = _LINE_END_HYPHEN.sub(_join_hyphen, text)
    return text


_LINE_NUMBER = re.compile(r"^[ \t]*(\d{1,4})(?=[ \t]|$)[ \t]*")
_MIN_LINE_NUMBER_RUN = 5
# A run may skip a few numbers: lineno puts some numbers mid-line beside display math.
_MAX_SKIP = 3
# When the previous page's numbering ended at n, this page's numbering starts soon after n.
_CONTINUATION_WINDOW = 40

Run = list[tuple[int, int]]  # (line index, number) in reading order


def _number_runs(lines: list[str]) -> list[Run]:
    """Chains of lines whose leading integers count up (allowing a few skipped numbers)."""
    open_runs: dict[int, Run] = {}  # last number of a run -> the run
    runs: list[Run] = []
    for idx, line in enumerate(lines):
        if not line[:1].isdigit() and not line[:1].isspace():
            continue  # cheap pre-check: most lines start with a letter
        m = _LINE_NUMBER.match(line)
        if not m:
            continue
        value = int(m.group(1))
        run = None
        for prev in range(value - 1, value - 2 - _MAX_SKIP, -1):
            if prev in open_runs:
                run = open_runs.pop(prev)
                break
        if run is None:
            run = []
            runs.append(run)
        run.append((idx, value))
        open_runs[value] = run
    return runs


# A page is "numbered" when a run this long counts up its lines; a document is a numbered review
# version when at least this share of its pages are. Camera-ready papers have tables whose rows
# count 0, 1, 2...; they never number a third of their pages.
_STRONG_RUN = 8
_NUMBERED_PAGE_SHARE = 0.3


def _pick_run(runs: list[Run], expect: int | None) -> Run | None:
    """The page's numbering: the run continuing the previous page's numbers, else a long run."""
    if not runs:
        return None
    if expect is not None:
        following = [r for r in runs if expect < r[0][1] <= expect + _CONTINUATION_WINDOW]
        if following:
            return max(following, key=len)
    best = max(runs, key=len)
    return best if len(best) >= _MIN_LINE_NUMBER_RUN else None


def has_line_numbers(pages_lines: list[list[str]]) -> bool:
    """Whether a document carries margin line numbers (a review version) at all."""
    return _numbered_document([_number_runs(lines) for lines in pages_lines])


def _numbered_document(page_runs: list[list[Run]]) -> bool:
    strong = sum(1 for runs in page_runs if max(map(len, runs), default=0) >= _STRONG_RUN)
    return strong >= max(1, _NUMBERED_PAGE_SHARE * len(page_runs))


def strip_line_numbers(lines: list[str], expect: int | None = None) -> tuple[list[str], int | None]:
    """Remove margin line numbers (review versions) from a page's lines.

    The numbering is the run of lines starting with integers that count up n, n+1, ... that
    continues the previous page's numbering (``expect``, the last number seen there), else the
    longest such run if it has at least five lines. Numbers the run skipped, found inside a
    neighbouring line (lineno puts them beside display math), go too. Returns the lines and the
    page's last line number.
    Call it only on documents that :func:`has_line_numbers`: table rows count up too.
    """
    return _strip_run(lines, _pick_run(_number_runs(lines), expect), expect)


def _strip_run(
    lines: list[str], run: Run | None, expect: int | None
) -> tuple[list[str], int | None]:
    if run is None:
        return lines, expect
    numbered = {idx for idx, _ in run}
    lines = list(lines)
    for (a, va), (b, vb) in zip(run, run[1:], strict=False):
        for missing in range(va + 1, vb):
            _drop_inline_number(lines, a, b, missing)
    out = []
    for idx, line in enumerate(lines):
        if idx in numbered:
            line = line[_LINE_NUMBER.match(line).end():]  # type: ignore[union-attr]
            if not line.strip():
                continue
        out.append(line)
    return out, run[-1][1]


def _drop_inline_number(lines: list[str], lo: int, hi: int, number: int) -> None:
    token = re.compile(rf"(?<![\w.,]){number}(?![\w.,])[ \t]?")
    for i in range(lo + 1, hi):
        if token.search(lines[i]):
            lines[i] = token.sub("", lines[i], count=1)
            return


_PAGE_NUMBER = re.compile(r"^\s*(?:page\s+)?(\d{1,4}|[ivxlcdm]{1,7})(\s+of\s+\d+)?\s*$", re.I)


def _page_lines(raw: str) -> list[str]:
    """A page's lines with pdfium's hyphen joins split back apart, so that a margin line number
    glued behind a joined hyphen ("ad\\ufffe1410 dressing") sits at a line start and can be seen."""
    text = fix_ligatures(raw.replace("\r\n", "\n").replace("\r", "\n"))
    text = text.replace("\ufffe", "\ufffe\n")
    return text.split("\n")


def clean_pages(raw_pages: list[str]) -> list[str]:
    """Per page: line numbers, page numbers and running headers/footers removed, words re-joined."""
    pages = [_page_lines(raw) for raw in raw_pages]
    page_runs = [_number_runs(lines) for lines in pages]
    if _numbered_document(page_runs):
        last_number: int | None = None
        for i, (lines, runs) in enumerate(zip(pages, page_runs, strict=True)):
            pages[i], last_number = _strip_run(lines, _pick_run(runs, last_number), last_number)
    pages = [_strip_page_number(lines) for lines in pages]
    repeated = _running_lines(pages)
    cleaned = []
    for lines in pages:
        lines = _drop_running(lines, repeated)
        cleaned.append(dehyphenate("\n".join(lines)).strip("\n"))
    return cleaned


def _strip_page_number(lines: list[str]) -> list[str]:
    lines = [ln.rstrip() for ln in lines]
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    if lines and _PAGE_NUMBER.match(lines[-1]):
        lines.pop()
    elif lines and _PAGE_NUMBER.match(lines[0]):
        lines.pop(0)
    return lines


_EDGE = 2  # how many lines at a page's top and bottom can be a running header or footer


def _edge_key(line: str) -> str:
    return re.sub(r"\d+", "#", line.strip().lower())


def _running_lines(pages: list[list[str]]) -> set[str]:
    """Lines (digits folded) found at the top or bottom of at least half the pages (and of 3)."""
    if len(pages) < 3:
        return set()
    counts: dict[str, int] = {}
    for lines in pages:
        if len(lines) <= 2 * _EDGE:  # a near-empty page has no body to tell edges from
            continue
        edge = {_edge_key(ln) for ln in lines[:_EDGE] + lines[-_EDGE:] if len(ln.strip()) > 1}
        for key in edge:
            counts[key] = counts.get(key, 0) + 1
    need = max(3, len(pages) // 2)
    return {key for key, c in counts.items() if c >= need}


def _drop_running(lines: list[str], repeated: set[str]) -> list[str]:
    if not repeated:
        return lines
    n = len(lines)
    return [
        ln
        for i, ln in enumerate(lines)
        if not ((i < _EDGE or i >= n - _EDGE) and _edge_key(ln) in repeated)
    ]


def clean_text(text: str) -> str:
    """Cleanup for a text fragment that is not a whole page: ligatures and hyphenation."""
    return dehyphenate(fix_ligatures(text.replace("\r\n", "\n").replace("\r", "\n")))


def squash(text: str) -> str:
    """Whitespace folded to single spaces: how a justification reads once its lines are joined."""
    return " ".join(text.split())


# --- finding the checklist ------------------------------------------------------------------------

_NEW_HEADING = re.compile(
    r"^[ \t]*(?:\d{1,2}\.?[ \t]+)?(?:NeurIPS[ \t]+)?Paper[ \t]+Checklist\b.*$", re.I | re.M
)
_OLD_HEADING = re.compile(
    r"^[ \t]*(?:\d{1,2}\.?[ \t]+)?(?:NeurIPS[ \t]+)?Checklist[ \t]*$", re.I | re.M
)
# A numbered question heading ("4. Experimental Result Reproducibility"); confirmed as a question by
# the "Question:" / "Answer:" label that follows it.
_Q_HEADING = re.compile(r"^[ \t]*(\d{1,2})\.[ \t]+(\S.*)$", re.M)
_LABEL = re.compile(r"^[ \t]*(Question|Answer)[ \t]*:", re.M)
# The answer slot: one or more bracketed answers ("[Yes]", "[TODO] [Yes]" when the template's
# default was left beside the real answer) or a bare word ("Yes", "Not applicable").
_ANSWER = re.compile(
    r"^[ \t]*Answer[ \t]*:[ \t]*\n?[ \t]*"
    r"((?:\[[^\]\n]{1,20}\][ \t]*)+|[A-Za-z/.]+(?:[ \t]+applicable)?)",
    re.M | re.I,
)
_GUIDELINES = re.compile(r"^[ \t]*Guidelines[ \t]*:", re.M)
_JUSTIFICATION = re.compile(r"^\W*Justification[ \t]*:[ \t]*", re.I)
_QUESTION_LABEL = re.compile(r"^[ \t]*Question[ \t]*:", re.M)
# The region after the last question ends at the first heading of what follows (an appendix).
_AFTER_HEADING = re.compile(
    r"^[ \t]*(?:Appendix|Appendices|Supplementary Material|Technical Appendices|References"
    r"|(?:Appendix[ \t]+)?[A-Z](?:\.\d+)*\.?[ \t]+[A-Z][A-Za-z-]+(?:[ \t]+\S+){0,8})[ \t]*$"
)


@dataclass
class _Block:
    number: str  # as printed ("4", "2b")
    heading: str
    question: str
    answer_raw: str | None
    justification: str


@dataclass
class _Region:
    start: int  # offset of the checklist heading (or of its first question)
    end: int  # offset just past the last question's block
    blocks: list[_Block]
    style: str  # "new" or "old"


def find_checklist(text: str) -> _Region | None:
    """The checklist region of a paper's cleaned text, with its question blocks, or None."""
    region = _find_new_style(text)
    if region is None:
        region = _find_old_style(text)
    return region


def _question_starts(text: str, lo: int) -> list[re.Match[str]]:
    """Numbered headings after ``lo`` that a "Question:"/"Answer:" label follows within 4 lines,
    before the next numbered heading; instruction-block prose and guideline bullets have none."""
    heads = [m for m in _Q_HEADING.finditer(text, lo)]
    out = []
    for i, m in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        window = text[m.end(): stop]
        label = _LABEL.search(window)
        if label and window.count("\n", 0, label.start()) <= 4:
            out.append(m)
    return out


def _find_new_style(text: str) -> _Region | None:
    headings = list(_NEW_HEADING.finditer(text))
    # A table of contents or the body can mention "Paper Checklist"; the real heading is the last
    # one with questions after it.
    for heading in reversed(headings):
        starts = _question_starts(text, heading.end())
        if starts:
            return _new_region(text, heading.start(), starts)
    starts = _question_starts(text, 0)
    # No heading (deleted or renamed): accept a run of labelled questions on its own.
    if len(starts) >= 3:
        return _new_region(text, starts[0].start(), starts)
    return None


def _new_region(text: str, start: int, starts: list[re.Match[str]]) -> _Region:
    end = _region_end(text, starts[-1].end())
    blocks = []
    for i, m in enumerate(starts):
        stop = starts[i + 1].start() if i + 1 < len(starts) else end
        blocks.append(_new_block(m, text[m.end(): stop]))
    return _Region(start, end, blocks, "new")


def _new_block(head: re.Match[str], rest: str) -> _Block:
    label = _QUESTION_LABEL.search(rest)
    answer = _ANSWER.search(rest)
    title_end = min(x.start() for x in (label, answer) if x) if (label or answer) else len(rest)
    heading = squash(head.group(2) + " " + rest[:title_end])
    question = ""
    if label:
        q_end = answer.start() if answer and answer.start() > label.end() else len(rest)
        guide = _GUIDELINES.search(rest, label.end())
        if guide and guide.start() < q_end:
            q_end = guide.start()
        question = squash(rest[label.end(): q_end])
    justification = ""
    if answer:
        guide = _GUIDELINES.search(rest, answer.end())
        body = rest[answer.end(): guide.start() if guide else len(rest)]
        justification = _JUSTIFICATION.sub("", body.strip(), count=1)
    return _Block(head.group(1), heading, question, answer.group(1) if answer else None,
                  squash(justification))


_LINE = re.compile(r"^.*$", re.M)


def _heading_after(text: str, pos: int, unfinished: tuple[str, ...], finished: tuple[str, ...]) -> int:
    """The first heading-like line from ``pos`` on that does not itself end like a sentence
    (``unfinished``) and follows a blank line or a finished sentence (``finished``); else the end."""
    prev = ""
    for m in _LINE.finditer(text, pos):
        line = m.group(0)
        if (
            _AFTER_HEADING.match(line)
            and len(line) < 90
            and not line.rstrip().endswith(unfinished)
            and (not prev.strip() or prev.rstrip().endswith(finished))
        ):
            return m.start()
        if line.strip():
            prev = line
    return len(text)


def _region_end(text: str, last_start: int) -> int:
    """Where the last question's block ends: at a following section heading (an appendix after
    the checklist) that comes after a finished sentence, else at the end of the text."""
    guide = _GUIDELINES.search(text, last_start)
    pos = guide.end() if guide else last_start
    return _heading_after(text, pos, (".", ",", ";"), (".", "?", "!", ")", ":"))


# 2021/22: "Checklist" then an instruction block with example bullets, then "1. For all authors..."
_OLD_GROUP = re.compile(r"^[ \t]*(\d)\.[ \t]+(\S.*)$", re.M)
_OLD_ITEM = re.compile(r"^[ \t]*\(([a-h])\)[ \t]*", re.M)
_BRACKET_ANSWER = re.compile(r"\[\s*(Yes|No|N/?A|TODO)\s*\]", re.I)


def _find_old_style(text: str) -> _Region | None:
    for heading in reversed(list(_OLD_HEADING.finditer(text))):
        blocks, end = _old_blocks(text, heading.end())
        if len(blocks) >= 3:
            return _Region(heading.start(), end, blocks, "old")
    return None


def _old_blocks(text: str, lo: int) -> tuple[list[_Block], int]:
    groups = [m for m in _OLD_GROUP.finditer(text, lo)]
    # Items live between their group heading and the next; the first group must be "1." so that the
    # instruction block's example answers (bullets before it) are never read as answers.
    first = next((i for i, g in enumerate(groups) if g.group(1) == "1"), None)
    if first is None:
        return [], lo
    groups = groups[first:]
    seen: list[re.Match[str]] = []
    for g in groups:  # the group numbers count up 1, 2, 3...; anything else ends the checklist
        if int(g.group(1)) != len(seen) + 1:
            break
        seen.append(g)
    region_end = _old_region_end(text, seen[-1].end())
    blocks: list[_Block] = []
    for gi, g in enumerate(seen):
        g_end = seen[gi + 1].start() if gi + 1 < len(seen) else region_end
        items = list(_OLD_ITEM.finditer(text, g.end(), g_end))
        for ii, it in enumerate(items):
            i_end = items[ii + 1].start() if ii + 1 < len(items) else g_end
            blocks.append(_old_block(g.group(1) + it.group(1), text[it.end(): i_end]))
    return blocks, region_end


def _old_block(number: str, body: str) -> _Block:
    m = _BRACKET_ANSWER.search(body)
    if not m:
        return _Block(number, "", squash(body), None, "")
    return _Block(number, "", squash(body[: m.start()]), m.group(0), squash(body[m.end():]))


def _old_region_end(text: str, pos: int) -> int:
    # The old checklist's last item (5c) is short; the first heading-like line after it ends it.
    return _heading_after(text, pos, (".", ","), (".", "?", "!", ")", "]"))


# --- answers into the spec ------------------------------------------------------------------------


def _answer_of(raw: str | None) -> tuple[Answer | None, str | None]:
    """The answer in an answer slot, and a warning when the slot holds more than one.

    "[TODO] [Yes]" means the author added an answer but did not delete the template's placeholder:
    the committed answer wins. Two different real answers are ambiguous, so the first one is kept.
    """
    if raw is None:
        return None, None
    parts = re.findall(r"\[([^\]]*)\]", raw) or [raw]
    answers = [a for a in (normalize_answer(p) for p in parts) if a is not None]
    if not answers:
        return None, None
    real = [a for a in answers if a.is_real]
    chosen = real[0] if real else answers[0]
    warning = None
    if len(answers) > 1:
        shown = " ".join(f"[{a.value}]" for a in answers)
        warning = f"answer slot holds {shown}; read as {chosen.value}"
    return chosen, warning


def build_checklist(region: _Region, spec: ChecklistSpec) -> tuple[Checklist, list[ParseWarning]]:
    """Attach each block to the spec question it is about (by meaning); every spec question gets
    an item, in template order, with answer None where the paper has none."""
    from checklist_eval.checklists.assembly import Finding, assemble

    def finding(block: _Block) -> Finding:
        answer, note = _answer_of(block.answer_raw)
        shown = block.heading or block.question[:60]
        return Finding(_match_block(spec, block), answer, block.justification or None,
                       location=f"checklist question {block.number}",
                       place=lambda: f"checklist question {block.number} ({shown!r})", note=note)

    return assemble(spec, (finding(block) for block in region.blocks))


def _match_block(spec: ChecklistSpec, block: _Block) -> str | None:
    # Heading and question together carry the most meaning; either alone rescues a block whose
    # other half is garbled or deleted.
    for text in (f"{block.heading} {block.question}", block.question, block.heading):
        if text.strip():
            qid = checklists.match_question(spec, text)
            if qid is not None:
                return qid
    return None


# --- body: title, abstract, sections, anchors -----------------------------------------------------

_SECTION = re.compile(r"^[ \t]*(\d{1,2}(?:\.\d{1,2}){0,3})\.?[ \t]+([A-Z][^\n]{0,100})$", re.M)
_APPENDIX = re.compile(
    r"^[ \t]*(?:Appendix[ \t]+)?([A-Z](?:\.\d{1,2}){0,2})\.?[ \t]*[:.]?[ \t]+([A-Z][^\n]{0,100})$",
    re.M,
)
_CAPTION = re.compile(
    r"^[ \t]*(Table|Figure|Fig\.|Algorithm)[ \t]+([A-Z]?\.?\d{1,3}(?:\.\d{1,2})?)[ \t]*[:.|]", re.M
)
_STATEMENT = re.compile(
    r"^[ \t]*(Theorem|Lemma|Proposition|Corollary|Definition|Assumption)[ \t]+"
    r"([A-Z]?\.?\d{1,3}(?:\.\d{1,2})?)\b[ \t]*[.:(]", re.M
)


def _looks_like_title(words: str) -> bool:
    """A heading title: short, no sentence end, not a wrapped line of running text."""
    text = words.strip()
    if not text or len(text) > 90 or text.endswith((".", ",", ";", ":")) or len(text.split()) > 12:
        return False
    letters = sum(ch.isalpha() for ch in text)
    return letters >= 0.6 * len(text.replace(" ", ""))


def find_sections(body: str) -> list[Section]:
    """Numbered headings in reading order: the longest sequence whose numbers advance the way
    headings do (1, 2, 2.1, 2.2, 3 ... then A, A.1, B). Wrapped lines that start with a number
    ("2 GPUs were used"), list items and table rows rarely continue such a sequence, so they drop
    out.
    """
    numbered = []
    for m in _SECTION.finditer(body):
        title = m.group(2).strip()
        if _looks_like_title(title):
            dotted = body[m.end(1): m.end(1) + 1] == "."
            parts = tuple(int(p) for p in m.group(1).split("."))
            numbered.append((parts, m.group(1), title, dotted))
    # "1 Introduction" and "1. Introduction" are both house styles, but one paper uses one of them;
    # the other is usually an enumerated list ("1. Identifying errors: ...").
    plain = _longest_heading_chain([c for c in numbered if not (len(c[0]) == 1 and c[3])])
    dotted_chain = _longest_heading_chain([c for c in numbered if not (len(c[0]) == 1 and not c[3])])
    chain = plain if len(plain) >= len(dotted_chain) else dotted_chain
    sections = [Section(number=n, title=t, level=len(p)) for p, n, t, _ in chain]
    appendix = []
    for m in _APPENDIX.finditer(body, _appendix_start(body, sections)):
        title = m.group(2).strip()
        if _looks_like_title(title):
            head, *rest = m.group(1).split(".")
            parts = (ord(head) - ord("A") + 1, *(int(p) for p in rest))
            appendix.append((parts, m.group(1), title, False))
    sections += [Section(number=n, title=t, level=len(p)) for p, n, t, _ in
                 _longest_heading_chain(appendix)]
    return sections


Candidate = tuple[tuple[int, ...], str, str, bool]  # number parts, number, title, dotted


def _longest_heading_chain(cands: list[Candidate]) -> list[Candidate]:
    """Longest subsequence where each heading number follows the previous one (see _follows), in
    linear time: the best chain ending at a number is kept per exact number and per number prefix
    (a chain ending at 3.3.12 can be continued by 4, so it counts under the prefix 3)."""
    exact: dict[tuple[int, ...], tuple[int, int]] = {}  # parts -> (length, index)
    by_prefix: dict[tuple[int, ...], tuple[int, int]] = {}
    back: dict[int, int] = {}
    best: tuple[int, int] = (0, -1)
    for i, (parts, *_rest) in enumerate(cands):
        options = []
        if parts == (1,):
            options.append((1, -1))
        if parts[-1] == 1 and len(parts) > 1 and parts[:-1] in exact:
            length, j = exact[parts[:-1]]
            options.append((length + 1, j))
        if parts[-1] > 1:
            sibling = parts[:-1] + (parts[-1] - 1,)
            if sibling in by_prefix:
                length, j = by_prefix[sibling]
                options.append((length + 1, j))
        if not options:
            continue
        length, j = max(options)
        back[i] = j
        exact[parts] = (length, i)
        for k in range(1, len(parts) + 1):
            prefix = parts[:k]
            if prefix not in by_prefix or by_prefix[prefix][0] < length:
                by_prefix[prefix] = (length, i)
        if length >= best[0]:
            best = (length, i)
    chain = []
    i = best[1]
    while i >= 0:
        chain.append(cands[i])
        i = back[i]
    return chain[::-1]


def _appendix_start(body: str, sections: list[Section]) -> int:
    # Appendix letters are only believed after the references (or the last numbered section):
    # before that "A key idea ..." at a line start is prose.
    refs = list(re.finditer(r"^[ \t]*(?:\d+[ \t]+)?(References|Bibliography)[ \t]*$", body, re.M))
    if refs:
        return refs[-1].end()
    if sections:
        pos = body.rfind(sections[-1].title)
        return max(pos, 0)
    return 0


def find_anchors(body: str, sections: list[Section]) -> list[str]:
    """Reference targets that exist in the text: sections, appendices, captions, numbered
    statements ("Theorem 1")."""
    anchors: list[str] = []
    for s in sections:
        if s.number is None:
            continue
        kind = "Appendix" if s.number[0].isalpha() else "Section"
        anchors.append(f"{kind} {s.number}")
    for m in _CAPTION.finditer(body):
        kind = "Figure" if m.group(1) == "Fig." else m.group(1)
        anchors.append(f"{kind} {m.group(2).rstrip('.')}")
    for m in _STATEMENT.finditer(body):
        anchors.append(f"{m.group(1)} {m.group(2).rstrip('.')}")
    return list(dict.fromkeys(anchors))


_ABSTRACT = re.compile(r"^[ \t]*Abstract[ \t]*[.:—-]?[ \t]*(.*)$", re.M | re.I)


def find_abstract(body: str, sections: list[Section]) -> str | None:
    """Text after an "Abstract" heading up to the first section heading (or 3000 characters)."""
    m = _ABSTRACT.search(body, 0, 5000)
    if not m:
        return None
    start = m.start(1)
    stop = start + 3000
    if sections:
        first = re.search(rf"^[ \t]*{re.escape(sections[0].number or '')}\.?[ \t]+"
                          rf"{re.escape(sections[0].title)}", body[start:], re.M)
        if first:
            stop = start + first.start()
    for kw in ("Keywords", "Keyword", "Index Terms"):
        k = re.search(rf"^[ \t]*{kw}\b", body[start:stop], re.M)
        if k:
            stop = start + k.start()
    abstract = squash(body[start:stop])
    return abstract or None


# --- entry point ----------------------------------------------------------------------------------


def parse_pdf(path: Path, spec: ChecklistSpec | None = None, data: bytes | None = None) -> Paper:
    """Parse a paper PDF: its body for the assessor and its checklist matched to ``spec`` (or to
    the version detected from the checklist text). ``data``: the PDF's bytes, when held in memory."""
    path = Path(path)
    if data is None and not path.is_file():
        raise InputError(path, "file not found")
    extracted = extract_pages(path, data)
    text = "\n".join(clean_pages(extracted.pages))
    region = find_checklist(text)
    if region is None or not region.blocks:
        raise NoChecklistError(path, "no NeurIPS paper checklist found in the PDF text")
    checklist_text = text[region.start: region.end]
    if spec is None:
        spec = checklists.load(checklists.detect(checklist_text))
    checklist, warnings = build_checklist(region, spec)
    if all(it.answer is None for it in checklist.items):
        raise NoChecklistError(path, f"checklist found but no answers matched {spec.id}")
    body = (text[: region.start].rstrip() + "\n\n" + text[region.end:].lstrip()).strip()
    sections = find_sections(body)
    return Paper(
        source=str(path),
        format="pdf",
        title=extracted.title,
        abstract=find_abstract(body, sections),
        body=body,
        sections=sections,
        anchors=find_anchors(body, sections),
        checklist=checklist,
        warnings=warnings + [pdf_hidden.warning(run) for run in extracted.hidden],
        hidden_text=extracted.hidden,
    )
