"""Two readings of one LaTeX paper, the source evaluator's and TeX's, made into the paper that is judged.

TeX's reading stands: its answers and justifications are what the PDF prints. Where the source reads
another answer, or a justification that is not the one printed, the difference is a finding
(``WarningKind.SOURCE_DIFFERS``, shown in the records' manipulation column and the reports): "the
source reads Yes (main.tex:120); TeX prints No (checklist.tex:45)". That gap is what an adversarial
paper would use to show an assessor answers a reader of the PDF never sees.

Where the two agree, the source's richer item is kept (its justification with references resolved and
its LaTeX, its answer's file:line); SyncTeX places the answers the source reads otherwise or not at all. The body is
the source's (sections, anchors and ``file:line`` places) unless the source reads far less body than
TeX prints (text hidden behind a macro's ``\\iffalse``), then TeX's.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher

from checklist_eval.models import ChecklistItem, Paper, ParseWarning, WarningKind

# Justifications are the same when no run of this many words is in one and not the other: the PDF's
# text differs from the source's rendering by a word here and there (math, reference numbers, a
# hyphenated word), a clause the PDF does not print is a run of words.
CLAUSE_WORDS = 4
_MAX_WORDS = 400
# The source's body is taken unless it holds less than this share of the characters TeX printed.
THIN_SOURCE_BODY = 0.25
_WORD = re.compile(r"[a-z0-9]+")
_QUOTE = 60


# Citations print differently in the two readings ("[zhou2021informer]" from the source, "Zhou et al. [36]"
# or "(Zhou et al., 2021)" in the PDF): brackets of keys or numbers (no blank inside a key: a bracketed
# sentence is compared), a short parenthesis ending in a year and "et al." are left out of the comparison.
_CITATION = re.compile(r"\[\s*[\w:./+-]{1,80}(?:\s*[,;]\s*[\w:./+-]{1,80}){0,30}\s*\]"
                       r"|\([^()]{0,60}\b(?:1[89]|20)\d\d[a-z]?\)|\bet al\b\.?")


def _words(text: str | None) -> list[str]:
    plain = _CITATION.sub(" ", unicodedata.normalize("NFKC", text or "").lower())
    return _WORD.findall(plain)[:_MAX_WORDS]


def same_justification(a: str | None, b: str | None) -> bool:
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return not wa and not wb
    blocks = SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes()
    return all(max(i2 - i1, j2 - j1) < CLAUSE_WORDS for tag, i1, i2, j1, j2 in blocks if tag != "equal")


def reads_unprinted_words(read: str | None, printed: str | None) -> bool:
    """Whether the source's justification holds a run of words TeX does not print (what an assessor
    reading the source would be shown and a reader of the PDF not). Words TeX prints and the source
    reader drops (a ``\\texttt`` path it does not render) are the source's loss, not a finding."""
    wa, wb = _words(read), _words(printed)
    if not wa:
        return False
    if not wb:
        return True
    blocks = SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes()
    return any(i2 - i1 >= CLAUSE_WORDS for tag, i1, i2, _j1, _j2 in blocks if tag in ("replace", "delete"))


def _quote(text: str | None) -> str:
    text = " ".join((text or "").split())
    return f'"{text if len(text) <= _QUOTE else text[: _QUOTE - 1] + "…"}"' if text else "nothing"


def _answer(item: ChecklistItem | None) -> str:
    return item.answer.value if item is not None and item.answer is not None else "no answer"


def _where(item: ChecklistItem | None) -> str:
    return f" ({item.location})" if item is not None and item.location else ""


def differences(source: Paper, tex: Paper) -> list[ParseWarning]:
    """One finding per question whose answer or justification the source reads otherwise than TeX prints."""
    theirs = {it.id: it for it in source.checklist.items}
    found = []
    for printed in tex.checklist.items:
        read = theirs.get(printed.id)
        if _answer(read) != _answer(printed):
            message = (f"question {printed.id}: the source reads {_answer(read)}{_where(read)}; "
                       f"TeX prints {_answer(printed)}{_where(printed)}")
        elif read is not None and reads_unprinted_words(read.justification, printed.justification):
            message = (f"question {printed.id}: the source reads the justification "
                       f"{_quote(read.justification if read else None)}{_where(read)}; "
                       f"TeX prints {_quote(printed.justification)}{_where(printed)}")
        else:
            continue
        found.append(ParseWarning(kind=WarningKind.SOURCE_DIFFERS, message=message,
                                  location=f"question {printed.id}"))
    return found


def _merged_item(read: ChecklistItem | None, printed: ChecklistItem) -> ChecklistItem:
    """The item judged. A LaTeX answer's place is its file:line (the page of TeX's PDF, which the user
    does not have, only where SyncTeX gave no line). Where the PDF reader found no answer and the source
    found one, the source's is kept (and the difference is a finding): the PDF reader can lose a
    question at a page break, so no answer read from the PDF is not proof that TeX printed none."""
    if read is not None and printed.answer is None and read.answer is not None:
        return read
    if read is None or _answer(read) != _answer(printed) or not same_justification(read.justification,
                                                                                   printed.justification):
        return printed.model_copy(update={"page": None}) if printed.file else printed
    # Same answer: the source reader found its macro, exactly; SyncTeX's place (answers matched to the
    # "Answer:" labels of the PDF, in order) is only needed where the source has none.
    if read.file or not printed.file:
        return read
    return read.model_copy(update={"file": printed.file, "line": printed.line})


def tex_over_source(source: Paper, tex: Paper, notes: list[str]) -> Paper:
    """The paper judged when both readings exist: TeX's checklist, the source's body (see the module)."""
    theirs = {it.id: it for it in source.checklist.items}
    items = [_merged_item(theirs.get(it.id), it) for it in tex.checklist.items]
    # the source's undecided answers are decided now: TeX printed them (a difference is a finding below)
    warnings = [w for w in source.warnings if w.kind is not WarningKind.UNDECIDED]
    warnings += differences(source, tex) + [ParseWarning(kind=WarningKind.TEX, message=n) for n in notes]
    update: dict[str, object] = {"checklist": tex.checklist.model_copy(update={"items": items}),
                                 "warnings": warnings, "reader": "tex"}
    if len(source.body) < THIN_SOURCE_BODY * len(tex.body):
        update.update(title=source.title or tex.title, abstract=tex.abstract, body=tex.body, sections=tex.sections,
                      anchors=tex.anchors, places=tex.places, hidden_text=source.hidden_text + tex.hidden_text)
        warnings.append(ParseWarning(
            kind=WarningKind.SOURCE_DIFFERS, location="body",
            message=f"body: the source reads {len(source.body)} characters; TeX prints {len(tex.body)}: "
                    "the body is read from what TeX prints"))
    return source.model_copy(update=update)


def tex_alone(tex: Paper, why: str, notes: list[str]) -> Paper:
    """TeX's reading where the source reader gave none (it failed or ran out of time): said in one line."""
    warnings = tex.warnings + [ParseWarning(kind=WarningKind.TEX, message=f"{why}; read from what TeX prints")]
    warnings += [ParseWarning(kind=WarningKind.TEX, message=n) for n in notes]
    return tex.model_copy(update={"format": "latex", "warnings": warnings, "reader": "tex"})


def source_alone(source: Paper, why: str | None) -> Paper:
    """The source's reading where TeX gave none; ``why`` (one line) is said unless TeX was not asked."""
    warnings = list(source.warnings)
    if why:
        warnings.append(ParseWarning(kind=WarningKind.TEX, message=f"{why}; answers read from the source"))
    return source.model_copy(update={"warnings": warnings, "reader": "source"})


def unprinted_checklist(source: Paper) -> Paper:
    """The source's checklist where the PDF TeX prints shows none: the authors' answers are read, and
    that no reader of the PDF sees them is a finding."""
    first = next((it for it in source.checklist.items if it.location), None)
    where = f" ({first.location})" if first is not None else ""
    finding = ParseWarning(kind=WarningKind.SOURCE_DIFFERS, location="checklist",
                           message=f"the checklist: the source reads one{where}; the PDF TeX prints shows none "
                                   "(\\includeonly or a switch leaves it out): read from the source")
    return source.model_copy(update={"warnings": [*source.warnings, finding], "reader": "source"})
