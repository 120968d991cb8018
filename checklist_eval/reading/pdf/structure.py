"""The body's structure: numbered sections and appendices, reference anchors, the abstract.

Headings are believed only as a sequence that advances the way headings do, so that numbered list
items, table rows and wrapped lines starting with a number drop out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from checklist_eval.models import Section
from checklist_eval.reading.pdf.cleaning import squash

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
    sections = _numbered_sections(body)
    return sections + _appendix_sections(body, _appendix_start(body, sections))


def _numbered_sections(body: str) -> list[Section]:
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
    return [Section(number=n, title=t, level=len(p)) for p, n, t, _ in chain]


def _appendix_sections(body: str, start: int) -> list[Section]:
    appendix = []
    for m in _APPENDIX.finditer(body, start):
        title = m.group(2).strip()
        if _looks_like_title(title):
            head, *rest = m.group(1).split(".")
            parts = (ord(head) - ord("A") + 1, *(int(p) for p in rest))
            appendix.append((parts, m.group(1), title, False))
    return [Section(number=n, title=t, level=len(p)) for p, n, t, _ in _longest_heading_chain(appendix)]


Candidate = tuple[tuple[int, ...], str, str, bool]  # number parts, number, title, dotted


def _longest_heading_chain(cands: list[Candidate]) -> list[Candidate]:
    """Longest subsequence where each heading number follows the previous one (see _ChainEnds), in
    linear time: the best chain ending at a number is kept per exact number and per number prefix
    (a chain ending at 3.3.12 can be continued by 4, so it counts under the prefix 3)."""
    ends = _ChainEnds()
    back: dict[int, int] = {}
    best: tuple[int, int] = (0, -1)
    for i, (parts, *_rest) in enumerate(cands):
        options = ends.continued_by(parts)
        if not options:
            continue
        length, j = max(options)
        back[i] = j
        ends.record(parts, length, i)
        if length >= best[0]:
            best = (length, i)
    chain = []
    i = best[1]
    while i >= 0:
        chain.append(cands[i])
        i = back[i]
    return chain[::-1]


@dataclass
class _ChainEnds:
    """The best chain (length, index of its last heading) ending at each heading number."""

    exact: dict[tuple[int, ...], tuple[int, int]] = field(default_factory=dict)
    by_prefix: dict[tuple[int, ...], tuple[int, int]] = field(default_factory=dict)

    def continued_by(self, parts: tuple[int, ...]) -> list[tuple[int, int]]:
        """(length, predecessor) of each chain a heading numbered ``parts`` can extend or start
        (predecessor -1): 1 starts one, x.1 follows x, x.n follows anything under x.(n-1)."""
        options = []
        if parts == (1,):
            options.append((1, -1))
        if parts[-1] == 1 and len(parts) > 1 and parts[:-1] in self.exact:
            length, j = self.exact[parts[:-1]]
            options.append((length + 1, j))
        if parts[-1] > 1:
            sibling = parts[:-1] + (parts[-1] - 1,)
            if sibling in self.by_prefix:
                length, j = self.by_prefix[sibling]
                options.append((length + 1, j))
        return options

    def record(self, parts: tuple[int, ...], length: int, i: int) -> None:
        self.exact[parts] = (length, i)
        for k in range(1, len(parts) + 1):
            prefix = parts[:k]
            if prefix not in self.by_prefix or self.by_prefix[prefix][0] < length:
                self.by_prefix[prefix] = (length, i)


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

