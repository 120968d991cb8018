"""Short pieces of LaTeX as a reader sees them (justifications, question titles): references resolved,
the document's macros expanded, and what is left converted by pylatexenc, which is exact but too slow
for a whole paper."""

from __future__ import annotations

import re

from checklist_eval.reading.latex.lexer import squash
from checklist_eval.reading.latex.macros import Macros, expand_ref_wrappers, expand_text_macros
from checklist_eval.reading.latex.numbering import REF_MACROS, Target, is_custom_ref, render_ref

_L2T = None


def _latex2text():
    """pylatexenc's converter, built once, taught the macros checklists use."""
    global _L2T
    if _L2T is None:
        from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

        db = get_default_latex_context_db()
        db.add_context_category(
            "checklist-eval",
            prepend=True,
            macros=[
                MacroTextSpec("answerYes", simplify_repl="[Yes]"),
                MacroTextSpec("answerNo", simplify_repl="[No]"),
                MacroTextSpec("answerNA", simplify_repl="[N/A]"),
                MacroTextSpec("answerTODO", simplify_repl="[TODO]"),
                MacroTextSpec("justificationTODO", simplify_repl=""),
                MacroTextSpec("footnote", simplify_repl=" (%(1)s)"),
                MacroTextSpec("textcolor", simplify_repl="%(3)s"),
                MacroTextSpec("xspace", simplify_repl=""),
                MacroTextSpec("label", simplify_repl=""),
                MacroTextSpec("slash", simplify_repl="/"),
            ],
        )
        from pylatexenc.latexwalker import get_default_latex_context_db as walker_db

        _L2T = (LatexNodes2Text(latex_context=db, math_mode="text", strict_latex_spaces=False), walker_db())
    return _L2T


_FORMATTING = re.compile(r"\\(?:textbf|textit|emph|texttt|textsc|textrm|textsf|underline|mbox|text)\s*\{([^{}\\$]*)\}")
_NEEDS_LATEX = re.compile(r"[\\{}$%&^_#]")


def _simple_markup(text: str) -> str:
    """Unwrap plain formatting macros and ties with regexes; pylatexenc only sees what is left."""
    text = text.replace("~", " ")
    for _ in range(3):
        new = _FORMATTING.sub(r"\1", text)
        if new == text:
            break
        text = new
    return text


def _pylatexenc_text(text: str) -> str:
    l2t, walker_db = _latex2text()
    try:
        from pylatexenc.latexwalker import LatexWalker

        nodes, _, _ = LatexWalker(text, latex_context=walker_db, tolerant_parsing=True).get_latex_nodes()
        return l2t.nodelist_to_text(nodes)
    except Exception:  # pylatexenc gives up on some malformed input; the raw text is still readable
        return text


_URL_ANY = re.compile(r"\\href\s*\{([^{}]*)\}\s*\{((?:[^{}]|\{[^{}]*\})*)\}|\\url\s*\{([^{}]*)\}")
_REF_ANY = re.compile(r"\\([a-zA-Z]+)\*?(?![a-zA-Z@])\s*\{([^{}]*)\}(?:\s*\{([^{}]*)\})?")
_CITE_ANY = re.compile(
    r"\\(?:[cC]ite[a-zA-Z]*|[pP]arencite|[tT]extcite|autocite)\*?\s*(?:\[[^\]]*\]\s*){0,2}\{([^{}]*)\}")


def readable(latex: str, macros: Macros, targets: dict[str, Target]) -> str:
    """A justification or title as a reader sees it: references resolved, macros rendered."""
    text = expand_ref_wrappers(latex, macros)

    def ref(m: re.Match) -> str:
        name = m.group(1)
        if name in REF_MACROS or name in macros.refs or is_custom_ref(name):
            if name in ("crefrange", "Crefrange"):
                return render_ref("crefrange", [m.group(2).strip(), (m.group(3) or "").strip()], targets)
            labels = [x.strip() for x in m.group(2).split(",") if x.strip()]
            shown = render_ref(name, labels, targets)
            return shown + (f" {{{m.group(3)}}}" if m.group(3) is not None else "")
        return m.group(0)

    text = _REF_ANY.sub(ref, text)
    text = _CITE_ANY.sub(lambda m: "[" + ", ".join(k.strip() for k in m.group(1).split(",")) + "]", text)
    text = expand_text_macros(text, macros)
    # URLs hold characters LaTeX treats specially (% _ #); they are set aside and put back verbatim.
    urls: list[str] = []

    def keep_url(m: re.Match) -> str:
        url, label = m.group(1) or m.group(3), m.group(2)
        if label is not None:
            label = squash(_pylatexenc_text(label))
        shown = url if not label or label == url.strip() else f"{label} ({url})"
        urls.append(shown)
        return f"\x01{len(urls) - 1}\x01"

    text = _URL_ANY.sub(keep_url, text)
    text = _simple_markup(text)
    if _NEEDS_LATEX.search(text):
        out = _pylatexenc_text(text)
    else:  # plain prose after the substitutions: walking it with pylatexenc would change nothing
        out = text
    out = re.sub("\x01(\\d+)\x01", lambda m: urls[int(m.group(1))], out)
    return squash(out.replace("\u00a0", " "))
