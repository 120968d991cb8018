"""Is this file a paper? The one answer, and the one message, that every command (``parse``,
``check``, ``validate``, ``score``, ``batch``) and ``serve`` give about the same file.

A paper is a PDF, a ``.tex`` file, a LaTeX project folder, or a ``.zip``/``.tar.gz`` of one. A file
this module knows is something else (a Word document, an image, a spreadsheet...) is refused with
"not a paper: a Word document (.docx); a paper is ...", by its name and, for a renamed one, by its
first bytes. Where a paper must be named as one (a submission's entries, an upload), any other name
is refused with the same words.
"""

from __future__ import annotations

from pathlib import Path

PAPER_SUFFIXES = (".pdf", ".tex", ".zip", ".tar.gz", ".tgz", ".tar")
PAPER_FORMS = "a paper is a PDF, a .tex file, a LaTeX project folder, or a .zip/.tar.gz of one"

# Kinds people send instead of a paper, by name.
_KINDS_BY_SUFFIX = {
    ".docx": "a Word document", ".doc": "a Word document", ".odt": "an OpenDocument text",
    ".rtf": "a rich-text document", ".pages": "a Pages document", ".md": "a Markdown file",
    ".html": "a web page", ".htm": "a web page", ".png": "an image", ".jpg": "an image", ".jpeg": "an image",
    ".gif": "an image", ".svg": "an image", ".pptx": "a slide deck", ".ppt": "a slide deck",
    ".key": "a slide deck", ".xlsx": "a spreadsheet", ".xls": "a spreadsheet", ".csv": "a spreadsheet",
    ".bib": "a bibliography (the paper's .tex is needed)", ".ipynb": "a notebook", ".docm": "a Word document",
    ".epub": "an e-book", ".ps": "a PostScript file (send the PDF)", ".dvi": "a DVI file (send the PDF)",
}
# Kinds recognised by their first bytes whatever their name (a Word document renamed paper.tex).
_KINDS_BY_MAGIC = (
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "a Word or other Office document (OLE)"),
    (b"\x89PNG\r\n\x1a\n", "an image (PNG)"),
    (b"\xff\xd8\xff", "an image (JPEG)"),
    (b"GIF8", "an image (GIF)"),
    (b"{\\rtf", "a rich-text document (RTF)"),
)


def not_a_paper(what: str) -> str:
    """The message, the same everywhere: ``not a paper: <what>; a paper is ...``."""
    return f"not a paper: {what}; {PAPER_FORMS}"


def kind_by_name(name: str) -> str | None:
    """What a file of this name is when it is known not to be a paper (``"a Word document (.docx)"``),
    else None."""
    low = name.lower()
    suffix = next((s for s in _KINDS_BY_SUFFIX if low.endswith(s)), None)
    return f"{_KINDS_BY_SUFFIX[suffix]} ({suffix})" if suffix else None


def kind_by_content(head: bytes) -> str | None:
    """What a file starting with ``head`` is when its first bytes say it is not a paper, else None.
    An Office or OpenDocument file is a zip whose first member (its name at byte 30 of the local
    header) says what it is."""
    if head.startswith(b"PK\x03\x04"):
        if head[30:49] == b"[Content_Types].xml":
            return "an Office document (Word, Excel or PowerPoint)"
        if head[30:38] == b"mimetype" and head[38:72] == b"application/vnd.oasis.opendocument":
            return "an OpenDocument file"
    return next((what for magic, what in _KINDS_BY_MAGIC if head.startswith(magic)), None)


def is_paper_name(name: str) -> bool:
    """A name a paper may have where it must say so (a submission's entry, an upload)."""
    return name.lower().endswith(PAPER_SUFFIXES)


def name_problem(name: str) -> str | None:
    """Why an entry named ``name`` cannot be a paper (the message), or None when its name may be one."""
    if is_paper_name(name):
        return None
    suffix = "".join(Path(name).suffixes[-1:])
    return not_a_paper(kind_by_name(name) or (f"a {suffix} file" if suffix else "a file with no suffix"))
