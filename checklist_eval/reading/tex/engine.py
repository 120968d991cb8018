"""Which TeX engine a project needs, whether the machine has it, and what its log says went wrong.

The engine is the one the authors chose, read the way their editors and latexmk read it: a ``% !TEX
program = ...`` magic comment in the root file, then a ``latexmkrc`` of the project, then the packages
that only run on a Unicode engine (``fontspec``, ``unicode-math``: XeLaTeX, or LuaLaTeX where the
document calls Lua), else pdfLaTeX.

A file TeX did not find is named with the Debian package that ships it, from a table of the packages
papers load (checked with ``dpkg -S`` on Debian 12's TeX Live 2022), so the line a user reads says
what to install.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass

ENGINES = ("pdflatex", "xelatex", "lualatex")

_MAGIC = re.compile(r"^%\s*!\s*tex\s+(?:ts-)?program\s*=\s*([a-z]+)", re.IGNORECASE | re.MULTILINE)
_UNICODE_ONLY = re.compile(r"\\(?:usepackage|RequirePackage)\s*(?:\[[^\]]{0,500}\])?\s*\{[^}]{0,500}"
                           r"\b(?:fontspec|unicode-math|polyglossia|luacode|luatextra)\b")
_LUA = re.compile(r"\\directlua|\\(?:usepackage|RequirePackage)\s*(?:\[[^\]]{0,500}\])?\s*\{[^}]{0,500}"
                  r"\b(?:luacode|luatextra|luaotfload|lua-ul)\b")
# latexmk: $pdf_mode = 4 (lualatex) or 5 (xelatex), or the pdflatex command replaced by another engine
_LATEXMK_MODE = re.compile(r"\$pdf_mode\s*=\s*([0-9])")
_LATEXMK_COMMAND = re.compile(r"\$(?:pdflatex|lualatex|xelatex)\s*=\s*['\"]\s*(pdflatex|lualatex|xelatex)")

# .sty/.cls -> the Debian package that has it (what papers load and the base install lacks).
DEBIAN_PACKAGES = {
    **dict.fromkeys(("comment", "enumitem", "nicefrac", "cleveref", "multirow", "wrapfig", "tcolorbox",
                     "thmtools", "thm-restate", "todonotes", "makecell", "lipsum", "appendix", "adjustbox",
                     "minted", "units", "xargs", "pdfcomment", "titlesec", "sidecap", "placeins", "tabulary",
                     "environ", "trimspaces", "pbox", "bbding", "changepage", "marginnote", "forloop",
                     "framed", "mdframed", "needspace", "arydshln", "cancel", "threeparttable", "diagbox",
                     "footmisc", "csquotes", "xstring", "fontawesome", "outlines", "paralist", "acronym",
                     "etoc", "titletoc", "tocloft", "ulem", "zref", "bigstrut", "hhline", "everypage",
                     "subfigure", "sttools", "stfloats", "cuted", "fancyhdr", "crop", "mwe", "multibib"),
                    "texlive-latex-extra"),
    **dict.fromkeys(("booktabs", "xcolor", "microtype", "caption", "subcaption", "etoolbox", "listings",
                     "float", "mathtools", "fontspec", "unicode-math", "newfloat", "fancyvrb", "pdfpages",
                     "eso-pic", "setspace", "ragged2e", "xfrac", "l3keys2e", "xparse", "upquote", "sourcecodepro",
                     "inconsolata", "mdwlist", "geometry", "eurosym", "hologo", "filehook", "koma-script"),
                    "texlive-latex-recommended"),
    **dict.fromkeys(("algorithm", "algorithmic", "algorithmicx", "algpseudocode", "algorithm2e", "siunitx",
                     "physics", "braket", "mhchem", "nccmath", "chemfig", "qcircuit", "complexity",
                     "clrscode", "clrscode3e"), "texlive-science"),
    **dict.fromkeys(("tikz", "pgf", "pgfplots", "pgfplotstable", "circuitikz", "tikz-cd", "forest", "bclogo",
                     "tkz-euclide", "xypic", "smartdiagram"), "texlive-pictures"),
    **dict.fromkeys(("bbm", "dsfont", "fontawesome5", "bbold", "mathabx", "stix", "stix2", "newtxmath",
                     "newtxtext", "libertine", "mathrsfs", "bm-fonts", "academicons", "fourier", "cabin",
                     "roboto", "sourcesanspro", "sourceserifpro", "opensans", "lato", "dutchcal", "MnSymbol",
                     "mathdesign", "txfonts", "pxfonts", "marvosym", "wasysym", "orcidlink"),
                    "texlive-fonts-extra"),
    **dict.fromkeys(("mathptmx", "times", "helvet", "courier", "amsthm", "amsmath", "bm", "hyperref", "natbib",
                     "graphicx", "tabularx", "xspace", "pifont", "colortbl", "ifthen", "verbatim", "url",
                     "article", "report", "book"), "texlive-latex-base"),
    **dict.fromkeys(("soul", "ulem-plain", "xkeyval"), "texlive-plain-generic"),
    **dict.fromkeys(("babel",), "texlive-lang-english"),
    **dict.fromkeys(("biblatex",), "texlive-bibtex-extra"),
    **dict.fromkeys(("lmodern", "cm-super"), "lmodern / cm-super"),
}


def engine_for(root_text: str, latexmkrc: str | None = None) -> tuple[str, str]:
    """The engine the project asks for and why (``("pdflatex", "default")``, ``("xelatex", "fontspec")``)."""
    magic = _MAGIC.search(root_text[:20000])
    if magic and magic.group(1).lower() in ENGINES:
        return magic.group(1).lower(), "% !TEX program"
    if latexmkrc:
        mode = _LATEXMK_MODE.search(latexmkrc)
        if mode and mode.group(1) in ("4", "5"):
            return ("lualatex" if mode.group(1) == "4" else "xelatex"), "latexmkrc"
        command = _LATEXMK_COMMAND.search(latexmkrc)
        if command:
            return command.group(1), "latexmkrc"
    preamble = root_text.split("\\begin{document}", 1)[0]
    if _LUA.search(preamble):
        return "lualatex", "Lua code in the preamble"
    if _UNICODE_ONLY.search(preamble):
        return "xelatex", "fontspec/unicode-math"
    return "pdflatex", "default"


@functools.lru_cache(maxsize=None)
def engine_version(engine: str) -> str | None:
    """The first line of ``engine --version`` ("pdfTeX 3.141592653-2.6-1.40.24 (TeX Live 2022/Debian)"),
    or None when the engine is not on the machine (or does not answer)."""
    binary = shutil.which(engine)
    if binary is None:
        return None
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    first = out.strip().splitlines()[:1]
    return first[0] if first else None


def debian_package(filename: str) -> str | None:
    """The Debian package that ships a TeX file (``comment.sty`` -> ``texlive-latex-extra``), if known."""
    stem = re.sub(r"\.(sty|cls|tex|def|cfg|clo)$", "", filename)
    return DEBIAN_PACKAGES.get(stem)


def missing_file_line(filename: str) -> str:
    """``comment.sty not found (texlive-latex-extra)``: what a user installs to get it."""
    package = debian_package(filename)
    if package:
        return f"{filename} not found ({package})"
    if "/" in filename or filename.endswith(".tex"):  # one of the project's own files
        return f"{filename} not found (not in the project)"
    return f"{filename} not found (in no Debian TeX package this tool knows)"


# Fonts TeX only has as METAFONT sources unless a package brings their Type 1 files: the T1/TS1 Computer
# Modern fonts (ecrm1000, tcrm1000...) come as Type 1 in cm-super, which texlive-latex-base does not pull in.
_FONT_PACKAGES = ((re.compile(r"^(?:ec|tc)[a-z]{2}\d{4}$"), "cm-super"),
                  (re.compile(r"^(?:bbm|bbmss|bbmtt)[a-z]*\d+$"), "texlive-fonts-extra, as METAFONT only"))


def missing_font_line(font: str) -> str:
    """``font ecrm1000 not found (cm-super); bitmap fonts are not made``: the one line of a compile that
    stopped on a font with no Type 1 file."""
    package = next((pkg for pattern, pkg in _FONT_PACKAGES if pattern.match(font)), None)
    where = f" ({package})" if package else ""
    return f"font {font} not found as a Type 1 file{where}; bitmap fonts are not made (METAFONT is not run)"


@functools.lru_cache(maxsize=None)
def tex_tree_has(*names: str) -> tuple[bool, ...]:
    """Whether TeX's tree has each file (``kpsewhich``, asked once per process)."""
    try:
        found = subprocess.run(["kpsewhich", *names], capture_output=True, text=True, timeout=30,
                               stdin=subprocess.DEVNULL, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return tuple(False for _ in names)
    return tuple(f"/{n}" in found for n in names)


# --- the log ---------------------------------------------------------------------------------------

_MISSING_FILE = re.compile(r"^! (?:LaTeX Error: File `([^'\n]{1,200})' not found\."
                           r"|I can't find file `([^'\n]{1,200})')", re.MULTILINE)
_MISSING_CLASS = re.compile(r"^! LaTeX Error: (?:File|Class) `([^'\n]{1,200}\.cls)' not found", re.MULTILINE)
_FONT_MISSING = re.compile(r"^! (?:Font \\\S+=(\S+) not loadable: Metric \(TFM\) file not found"
                           r"|Package fontspec Error: The font \"([^\"\n]{1,200})\" cannot be found)",
                           re.MULTILINE)
# pdfTeX found a font's metrics but neither a Type 1 file nor a bitmap for it (bitmaps are not made: see
# compile._environment): "!pdfTeX error: pdflatex (file ecrm1000): Font ecrm1000 at 600 not found"
_GLYPHS_MISSING = re.compile(r"^!\s?pdfTeX error: [^\n]{0,300}?Font (\S{1,100}) at \d+ not found", re.MULTILINE)
_FATAL = re.compile(r"^(?:! TeX capacity exceeded[^\n]*|!\s?pdfTeX error[^\n]*|\(That makes 100 errors[^\n]*"
                    r"|! Emergency stop\.|!  ==> Fatal error occurred[^\n]*)", re.MULTILINE)
_RERUN = re.compile(r"Rerun to get|There were undefined references|Label\(s\) may have changed")




@dataclass(frozen=True)
class LogFindings:
    """What a TeX log says about a run."""

    missing: tuple[str, ...]  # .sty/.cls/other input files TeX did not find (graphics aside)
    fonts: tuple[str, ...]  # fonts TeX did not find
    fatal: str | None  # the line of a run TeX gave up on
    rerun: bool  # labels changed: another pass would print other numbers


_GRAPHICS = (".pdf", ".png", ".jpg", ".jpeg", ".eps", ".pgf", ".ps", ".svg", ".gif", ".tif", ".tiff", ".bmp")


def _a_figure(name: str) -> bool:
    """A file \\includegraphics asked for: a graphics extension, or none (LaTeX names a missing input
    with its .tex, .sty or .cls; graphicx names a figure as written)."""
    base = name.rsplit("/", 1)[-1]
    return name.lower().endswith(_GRAPHICS) or "." not in base


def read_log(log: str) -> LogFindings:
    """The log's missing files (a figure is not one: graphicx's draft mode stands in for it), missing
    fonts, fatal stop and rerun request."""
    missing = [a or b for a, b in _MISSING_FILE.findall(log) if not _a_figure(a or b)]
    missing += [m for m in _MISSING_CLASS.findall(log) if m not in missing]
    fonts = [a or b for a, b in _FONT_MISSING.findall(log)] + _GLYPHS_MISSING.findall(log)
    fatal = _FATAL.search(log)
    return LogFindings(tuple(dict.fromkeys(missing)), tuple(dict.fromkeys(fonts)),
                       fatal.group(0).lstrip("! ").strip() if fatal else None, bool(_RERUN.search(log)))


# --- conference styles ---------------------------------------------------------------------------------

# A venue's style file (neurips_2025.sty, icml2024.sty...): projects often leave it out (the shared papers
# carry none). Only the page layout and, in some years, the answer macros come from it.
_VENUE_STYLE = re.compile(r"^(?:neurips|nips|icml|iclr|aaai|acl|emnlp|naacl|colm|tmlr|corl|aistats|uai|jmlr|cvpr"
                          r"|iccv|eccv|wacv|kdd|collas|colt|midl|mlsys|rlc|l4dc)[A-Za-z0-9_-]{0,40}$", re.IGNORECASE)
_USED_PACKAGES = re.compile(r"\\usepackage\s*(?:\[[^\]]{0,2000}\])?\s*\{([^{}]{1,2000})\}")

STAND_IN = r"""\ProvidesPackage{%(name)s}[2000/01/01 stand-in: the venue's style is not in the project]
\newif\ifstandin@natbib\standin@natbibtrue
\DeclareOption{nonatbib}{\standin@natbibfalse}
\DeclareOption*{}\ProcessOptions\relax
%% natbib, as the venues' styles load it (unless nonatbib), and xcolor for the answer macros
\ifstandin@natbib\RequirePackage{natbib}\fi
\RequirePackage{xcolor}
%% The author block's separators the venues' styles define (\author{A \And B})
\providecommand{\And}{\quad}\providecommand{\AND}{\quad}
%% The checklist's answer macros as the venues' styles print them, only where the document defines none.
\AtBeginDocument{%%
  \providecommand{\answerYes}[1][]{\textcolor{blue}{[Yes] #1}}%%
  \providecommand{\answerNo}[1][]{\textcolor{orange}{[No] #1}}%%
  \providecommand{\answerNA}[1][]{\textcolor{gray}{[NA] #1}}%%
  \providecommand{\answerTODO}[1][]{\textcolor{red}{\bfseries [TODO]}}%%
  \providecommand{\justificationTODO}[1][]{\textcolor{red}{\bfseries [TODO]}}}
"""


# Where cm-super is not installed, the T1/TS1 Computer Modern shapes are declared onto Latin Modern's
# (lmodern, which texlive-latex-base depends on): the same text in Type 1 look-alikes with nearly the same
# metrics, instead of no PDF. Declared before the document's first line (the format preloads these
# families, so a font definition file beside the root would not be read).
_CM_FAMILIES = (("T1", "cmr", "lmr"), ("T1", "cmss", "lmss"), ("T1", "cmtt", "lmtt"), ("TS1", "cmr", "lmr"),
                ("TS1", "cmss", "lmss"), ("TS1", "cmtt", "lmtt"))
_CM_SHAPES = "".join(f"\\DeclareFontShape{{#1}}{{#2}}{{{series}}}{{{shape}}}{{<->ssub*#3/{series}/{shape}}}{{}}"
                     for series in ("m", "b", "bx") for shape in ("n", "it", "sl", "sc"))


def cm_super_stand_in() -> str:
    """TeX code that puts Latin Modern where cm-super's Type 1 fonts are missing, or "" (cm-super is
    installed, or there is no Latin Modern to stand in with)."""
    has_cm_super, has_lm = tex_tree_has("sfrm1000.pfb", "t1lmr.fd")
    if has_cm_super or not has_lm:
        return ""
    calls = "".join(f"\\checklistevalcm{{{enc}}}{{{family}}}{{{lm}}}" for enc, family, lm in _CM_FAMILIES)
    return f"\\def\\checklistevalcm#1#2#3{{\\DeclareFontFamily{{#1}}{{#2}}{{}}{_CM_SHAPES}}}{calls}" \
           "\\let\\checklistevalcm\\undefined"


def missing_venue_styles(preamble: str, present: set[str]) -> list[str]:
    """The venue styles the preamble loads that neither the project (``present``: its file names) nor
    TeX's tree has."""
    wanted = [n.strip() for m in _USED_PACKAGES.finditer(preamble) for n in m.group(1).split(",")]
    candidates = [n for n in dict.fromkeys(wanted) if _VENUE_STYLE.match(n) and f"{n}.sty" not in present]
    if not candidates:
        return []
    try:
        found = subprocess.run(["kpsewhich", *(f"{n}.sty" for n in candidates)], capture_output=True, text=True,
                               timeout=30, stdin=subprocess.DEVNULL, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [n for n in candidates if f"/{n}.sty" not in found]
