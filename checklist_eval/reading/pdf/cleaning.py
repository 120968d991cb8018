"""Cleaning a PDF's extracted text: what typesetting added to the words is taken back out.

Per page: margin line numbers of review versions, page numbers, running headers and footers; then
ligatures spelled out and words broken across lines joined again. :func:`clean_text` does the part
that applies to a fragment (a title) rather than a whole page.
"""

from __future__ import annotations

import re

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
        run = _run_continued_by(open_runs, value)
        if run is None:
            run = []
            runs.append(run)
        run.append((idx, value))
        open_runs[value] = run
    return runs


def _run_continued_by(open_runs: dict[int, Run], value: int) -> Run | None:
    """The open run that ``value`` continues (its last number is at most _MAX_SKIP + 1 below), taken
    out of ``open_runs``; the nearest wins."""
    for prev in range(value - 1, value - 2 - _MAX_SKIP, -1):
        if prev in open_runs:
            return open_runs.pop(prev)
    return None


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
