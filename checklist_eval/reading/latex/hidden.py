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
# A colour no reader tells from the page: every channel within 3% of white, in each xcolor model
# (rgb and gray 0-1, RGB 0-255, HTML hex, cmyk and cmy 0-1 where 0 is white, Gray 0-15, HSB/hsb
# brightness with no saturation). ``X!0`` is 0% of X, that is white.
_NEAR = 0.97


def _channels(model: str, spec: str) -> list[float] | None:
    """The colour as 0-1 lightness per channel (1 is white), or None when it cannot be read."""
    parts = [p.strip() for p in spec.split(",")]
    try:
        if model == "HTML":
            value = spec.strip()
            return [int(value[i : i + 2], 16) / 255 for i in (0, 2, 4)] if len(value) == 6 else None
        numbers = [float(p) for p in parts]
    except ValueError:
        return None
    scales = {"rgb": (3, 1, False), "RGB": (3, 255, False), "gray": (1, 1, False), "Gray": (1, 15, False),
              "cmyk": (4, 1, True), "cmy": (3, 1, True)}
    if model in ("hsb", "Hsb", "HSB"):
        top = {"hsb": 1, "Hsb": 1, "HSB": 240}[model]
        return [1 - numbers[1] / top, numbers[2] / top] if len(numbers) == 3 else None
    if model not in scales or len(numbers) != scales[model][0]:
        return None
    _, top, inverted = scales[model]
    return [1 - n / top if inverted else n / top for n in numbers]


def _is_white(model: str, spec: str) -> bool:
    model, spec = model.strip(), spec.strip()
    if model == "named":
        return _is_white_name(spec, frozenset(_WHITE_NAMES))
    channels = _channels(model, spec)
    return channels is not None and all(c >= _NEAR for c in channels)


_ZERO_PERCENT = re.compile(r"^[A-Za-z][\w.-]*\s*!\s*0*(?:\.0*)?$")


def _is_white_name(name: str, white: frozenset[str] | set[str]) -> bool:
    name = name.strip()
    return name in white or bool(_ZERO_PERCENT.match(name))


def white_color_names(latex: str) -> set[str]:
    """Colour names that render white in this document: the standard ones plus any the author
    defined as white (``\\definecolor{bg}{rgb}{1,1,1}``, ``\\colorlet{x}{white}``), so renaming
    white does not hide text from the check."""
    names = set(_WHITE_NAMES)
    for name, model, spec in _DEFINE_COLOR.findall(latex):
        if "," in model:  # \definecolor{x}{rgb,cmyk}{...}: several models, the first one's values
            model, spec = model.split(",")[0], spec.split("/")[0]
        if _is_white(model, spec):
            names.add(name.strip())
    for name, base in _COLORLET.findall(latex):
        if _is_white_name(base, names):
            names.add(name.strip())
    return names


# \textcolor[model]{spec}{text}, \color[model]{spec}, \textcolor{name}{text}, \color{name}: the colour
# is read by _is_white (not by the pattern), so each model and spelling is one rule.
_COLOR_SPEC = r"\s*(?:\[\s*(?P<model>[^\]{}]*)\]\s*)?\{(?P<spec>[^{}]*)\}"
_COLOR_COMMANDS = (re.compile(r"\\textcolor" + _COLOR_SPEC + r"\s*\{"),
                   re.compile(r"\\color(?![a-zA-Z@])" + _COLOR_SPEC))


def _white_color(m: re.Match[str], white: set[str]) -> bool:
    if m.group("model") is not None:
        return _is_white(m.group("model"), m.group("spec"))
    return _is_white_name(m.group("spec"), white)


# Lengths a reader cannot see text in: under 2 pt, or under a tenth of the line or page.
_LENGTH = re.compile(r"^\s*(-?\d*\.?\d+)\s*(pt|bp|dd|mm|cm|in|pc|sp|em|ex|px|\\[A-Za-z@]+)?\s*$")
_PT_PER = {"pt": 1, "bp": 1.00375, "dd": 1.07, "mm": 2.845, "cm": 28.45, "in": 72.27, "pc": 12, "sp": 1 / 65536,
           "em": 10, "ex": 4.3, "px": 1}
_TINY_PT = 2.0
_TINY_FACTOR = 0.1


def _tiny_length(spec: str) -> bool:
    m = _LENGTH.match(spec)
    if m is None:
        return False
    value, unit = abs(float(m.group(1))), m.group(2)
    if unit is None:
        return value < _TINY_FACTOR  # a bare factor (\scalebox)
    if unit.startswith("\\"):
        return value < _TINY_FACTOR  # 0.01\textwidth
    return value * _PT_PER[unit] < _TINY_PT


_SIZE_COMMANDS = [
    ("phantom text", re.compile(r"\\[hv]?phantom\s*\{"), None),
    ("microscopic font", re.compile(r"\\fontsize\s*\{(?P<a>[^{}]*)\}\s*\{[^{}]*\}\s*\\selectfont"),
     lambda m: _tiny_length(m.group("a")) or _tiny_length(m.group("a") + "pt")),
    ("scaled-away text", re.compile(r"\\scalebox\s*\{(?P<a>[^{}]*)\}\s*(?:\[(?P<b>[^\]{}]*)\]\s*)?\{"),
     lambda m: _tiny_length(m.group("a")) or (m.group("b") is not None and _tiny_length(m.group("b")))),
    ("scaled-away text", re.compile(r"\\resizebox\*?\s*\{(?P<a>[^{}]*)\}\s*\{(?P<b>[^{}]*)\}\s*\{"),
     lambda m: _tiny_length(m.group("a")) or _tiny_length(m.group("b"))),
]


def _hiding_commands(latex: str) -> list[tuple[str, re.Match[str]]]:
    """Every command that hides what it applies to, in the order of the rules."""
    white = white_color_names(latex)
    found = [("white text", m) for rx in _COLOR_COMMANDS for m in rx.finditer(latex) if _white_color(m, white)]
    for what, pattern, hides in _SIZE_COMMANDS:
        found += [(what, m) for m in pattern.finditer(latex) if hides is None or hides(m)]
    return found


_PHANTOM_PROSE_WORDS = 4
# A run is reported by its first words: only the start of what a command hides is read, so thousands of
# hiding commands whose group never closes do not each convert the rest of the document.
_SNIPPET_CHARS = 1000
# Hiding commands read per document: a real paper has a few (a \phantom in a table, a sentence in
# white); thousands are an attack on the reader's time, flagged by one run counting the rest.
MAX_RUNS_READ = 200


def find_hidden_text(latex: str, macros: Macros) -> list[ParseWarning]:
    """Warnings for text present in the source but invisible in the PDF (a prompt-injection trick)."""
    return [hidden_warning(run) for run in find_hidden_runs(latex, macros)]


def hidden_warning(run: HiddenRun) -> ParseWarning:
    quote = run.text if len(run.text) <= 80 else run.text[:77] + "..."
    return ParseWarning(kind=WarningKind.HIDDEN_TEXT, location=run.technique,
                        message=f'hidden text ({run.technique}, invisible when compiled): "{quote}"')


def find_hidden_runs(latex: str, macros: Macros) -> list[HiddenRun]:
    """Text present in the source but invisible in the PDF, one run per hiding command (the first
    MAX_RUNS_READ commands that could hide prose are read; past them one run counts the rest)."""
    runs: list[HiddenRun] = []
    read = unread = 0
    for what, m in _hiding_commands(latex):
        snippet = _hidden_source(latex, m)
        if what == "phantom text" and len(snippet.split()) < _PHANTOM_PROSE_WORDS:
            continue  # \phantom{00.0} aligns table columns: ordinary typesetting, not hidden prose
        read += 1
        if read > MAX_RUNS_READ:
            unread += 1
            continue
        shown = squash(PLACEHOLDER.sub("", Converter(macros, {}).convert(snippet)))
        if not shown or (what == "phantom text" and len(shown.split()) < _PHANTOM_PROSE_WORDS):
            continue
        runs.append(HiddenRun(technique=what, text=shown[:200]))
    if unread:
        runs.append(HiddenRun(technique="more hidden text", text=f"{unread} more commands hiding text, not read"))
    return runs


def _hidden_source(latex: str, m: re.Match[str]) -> str:
    """The start of what the command matched by ``m`` hides: its group, or for a declaration
    (``\\color{white}``, ``\\selectfont``) the text up to the close of the enclosing group."""
    start = m.end() - 1 if latex[m.end() - 1] == "{" else m.end()
    if latex[start : start + 1] == "{":
        return latex[start + 1 : min(group_end(latex, start) - 1, start + 1 + _SNIPPET_CHARS)]
    return latex[m.end() : declaration_end(latex, m.start(), limit=m.end() + _SNIPPET_CHARS)]
