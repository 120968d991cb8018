"""Hidden text: words in the source that the compiled PDF does not show (white or microscopic text,
phantoms, boxes scaled to nothing), the usual carrier of a prompt injection."""

from __future__ import annotations

import re

from checklist_eval.models import HiddenRun, ParseWarning, WarningKind
from checklist_eval.reading.latex.lexer import declaration_end, group_end, squash
from checklist_eval.reading.latex.macros import Macros
from checklist_eval.reading.latex.render import PLACEHOLDER, Converter

_WHITE_NAMES = frozenset({"white", "White", "WHITE", "white!100", "bg", "background"})
_DEFINE_COLOR = re.compile(r"\\(?:definecolor|providecolor)\s*\{([^{}]+)\}\s*\{([^{}]+)\}\s*\{([^{}]+)\}")
_COLORLET = re.compile(r"\\colorlet\s*\{([^{}]+)\}\s*\{([^{}]+)\}")
_WHITE_SPECS = {"rgb": ["1"] * 3, "RGB": ["255"] * 3, "HTML": ["FFFFFF"], "gray": ["1"], "cmyk": ["0"] * 4,
                "named": ["white"]}


def _is_white(model: str, spec: str) -> bool:
    parts = [p.strip() for p in spec.split(",")]
    want = _WHITE_SPECS.get(model.strip())
    if want is None or len(parts) != len(want):
        return False
    try:
        return all(float(p) == float(w) for p, w in zip(parts, want, strict=True))
    except ValueError:
        return [p.upper() for p in parts] == [w.upper() for w in want]


def white_color_names(latex: str) -> set[str]:
    """Colour names that render white in this document: the standard ones plus any the author
    defined as white (``\\definecolor{bg}{rgb}{1,1,1}``, ``\\colorlet{x}{white}``), so renaming
    white does not hide text from the check."""
    names = set(_WHITE_NAMES)
    for name, model, spec in _DEFINE_COLOR.findall(latex):
        if _is_white(model, spec):
            names.add(name.strip())
    for name, base in _COLORLET.findall(latex):
        if base.strip() in names:
            names.add(name.strip())
    return names


def _color_patterns(latex: str) -> list[tuple[str, re.Pattern[str]]]:
    white = "(?:" + "|".join(map(re.escape, sorted(white_color_names(latex), key=len, reverse=True))) + ")"
    return [
        ("white text", re.compile(r"\\textcolor\s*\{\s*" + white + r"\s*\}\s*\{")),
        ("white text", re.compile(r"\\color\s*\{\s*" + white + r"\s*\}")),
    ]


_HIDDEN_PATTERNS = [
    ("white text", re.compile(r"\\textcolor\s*\[\s*(?:rgb|RGB|gray)\s*\]\s*"
                              r"\{\s*(?:1\s*,\s*1\s*,\s*1|255\s*,\s*255\s*,\s*255|1)\s*\}\s*\{")),
    ("phantom text", re.compile(r"\\phantom\s*\{")),
    ("microscopic font", re.compile(r"\\fontsize\s*\{\s*(?:0?\.\d+|[01](?:\.\d*)?)\s*(?:pt)?\s*\}"
                                    r"\s*\{[^{}]*\}\s*\\selectfont")),
    ("scaled-away text", re.compile(r"\\scalebox\s*\{\s*0?\.0\d*\s*\}\s*\{")),
    ("scaled-away text", re.compile(r"\\resizebox\s*\{\s*0?\.0\d*\\[a-z]+\s*\}\s*\{[^{}]*\}\s*\{")),
]


_PHANTOM_PROSE_WORDS = 4


def find_hidden_text(latex: str, macros: Macros) -> list[ParseWarning]:
    """Warnings for text present in the source but invisible in the PDF (a prompt-injection trick)."""
    return [hidden_warning(run) for run in find_hidden_runs(latex, macros)]


def hidden_warning(run: HiddenRun) -> ParseWarning:
    quote = run.text if len(run.text) <= 80 else run.text[:77] + "..."
    return ParseWarning(kind=WarningKind.HIDDEN_TEXT, location=run.technique,
                        message=f'hidden text ({run.technique}, invisible when compiled): "{quote}"')


def find_hidden_runs(latex: str, macros: Macros) -> list[HiddenRun]:
    """Text present in the source but invisible in the PDF, one run per hiding command."""
    runs = []
    for what, pattern in _color_patterns(latex) + _HIDDEN_PATTERNS:
        for m in pattern.finditer(latex):
            start = m.end() - 1 if latex[m.end() - 1] == "{" else m.end()
            if latex[start : start + 1] == "{":
                snippet = latex[start + 1 : group_end(latex, start) - 1]
            else:
                # \color{white} / \selectfont act until the enclosing group closes
                close = declaration_end(latex, m.start())
                snippet = latex[m.end() : close]
            conv = Converter(macros, {})
            shown = squash(PLACEHOLDER.sub("", conv.convert(snippet)))
            if not shown or (what == "phantom text" and len(shown.split()) < _PHANTOM_PROSE_WORDS):
                continue  # \phantom{00.0} aligns table columns: ordinary typesetting, not hidden prose
            runs.append(HiddenRun(technique=what, text=shown[:200]))
    return runs
