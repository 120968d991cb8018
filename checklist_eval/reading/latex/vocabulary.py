"""What the body converter knows about LaTeX's own macros and environments: which carry no reading
text, which wrap it, which print a symbol, and which environments are floats, math or verbatim."""

from __future__ import annotations

import re

# Macros whose arguments carry no reading text; value is the argument spec (see read_args).
DROP = {
    "label": "m", "vspace": "m", "hspace": "m", "vskip": "", "hskip": "", "includegraphics": "om",
    "usepackage": "om", "RequirePackage": "om", "documentclass": "om", "bibliographystyle": "m",
    "setlength": "mm", "addtolength": "mm", "setcounter": "mm", "addtocounter": "mm",
    "definecolor": "mmm", "colorlet": "mm", "newtheorem": "", "declaretheorem": "om", "captionsetup": "om",
    "thispagestyle": "m", "pagestyle": "m", "color": "om", "fontsize": "mm", "newcolumntype": "mom",
    "author": "om", "date": "m", "affiliation": "m", "email": "m", "address": "m", "thanks": "m",
    "pagenumbering": "m", "newlength": "m", "settowidth": "mm", "graphicspath": "m", "hypersetup": "m",
    "crefname": "mmm", "Crefname": "mmm", "bibliography": "m", "nocite": "m", "cline": "m",
    "cmidrule": "om", "addlinespace": "o", "rule": "omm", "raisebox": "mo", "arrayrulecolor": "m",
    "rowcolor": "om", "cellcolor": "om", "setcitestyle": "m", "newenvironment": "", "renewenvironment": "",
    "newcommand": "", "renewcommand": "", "providecommand": "", "DeclareRobustCommand": "", "def": "",
    "DeclareMathOperator": "mm", "newif": "", "input": "m", "include": "m", "resizebox": "mm",
    "scalebox": "om", "stepcounter": "m", "refstepcounter": "m", "linenumbers": "", "pgfplotsset": "m",
    "tikzset": "m", "usetikzlibrary": "m", "setuptodonotes": "m", "floatname": "mm", "ifthenelse": "",
}
KEEP = {
    "textbf", "textit", "emph", "underline", "texttt", "textsc", "textrm", "textsf", "textup", "textmd",
    "mbox", "text", "uline", "makebox", "fbox", "framebox", "hbox", "textnormal", "mathrm", "mathbf",
    "mathit", "enquote", "textsuperscript", "textsubscript", "centerline", "boldsymbol", "bm", "mathcal",
    "makecell", "multicolumn", "multirow", "shortstack", "parbox", "subfloat", "sout", "xspace",
    "smash", "vphantom", "hphantom", "phantom", "colorbox", "highlight", "hl", "ul", "todo",
}
SYMBOLS = {
    "%": "%", "&": "&", "_": "_", "#": "#", "$": "$", "{": "{", "}": "}", " ": " ", ",": " ", ";": " ",
    "!": "", ":": " ", "\\": "\n", "/": "", "-": "",
}
WORD_MACROS = {
    "ldots": "…", "dots": "…", "LaTeX": "LaTeX", "TeX": "TeX", "S": "§", "textbackslash": "\\",
    "textasciitilde": "~", "textendash": "–", "textemdash": "—", "textregistered": "®", "copyright": "©",
    "textdegree": "°", "pm": "±", "times": "×", "etal": "et al.", "eg": "e.g.", "ie": "i.e.", "wrt": "w.r.t.",
    "newline": "\n", "linebreak": "\n", "par": "\n\n", "quad": " ", "qquad": " ", "checkmark": "✓",
    "textquotesingle": "'", "slash": "/", "degree": "°", "euro": "€", "dag": "†", "ddag": "‡",
}
ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
            ".": "\u0307", "c": "\u0327", "v": "\u030c", "u": "\u0306", "H": "\u030b", "k": "\u0328"}
FLOATS = {"figure": "Figure", "table": "Table", "algorithm": "Algorithm", "wrapfigure": "Figure",
           "wraptable": "Table", "listing": "Listing"}
SUBFLOATS = {"subfigure", "subtable", "minipage"}
MATH_ENVS = {"equation", "align", "gather", "multline", "eqnarray", "flalign", "alignat", "displaymath",
              "math"}
VERBATIM_ENVS = {"verbatim", "lstlisting", "minted", "Verbatim"}
SKIP_ENVS = {"tikzpicture", "pgfpicture", "comment", "thebibliography_", "axis"}
TOKEN = re.compile(
    r"\\(?P<name>[a-zA-Z@]+\*?|.)|(?P<brace>[{}])|(?P<math>\$\$?)|(?P<tilde>~)|(?P<amp>&)"
    r"|(?P<quote>``|'')|(?P<par>\n[ \t]*\n\s*)"
)
CITE = re.compile(r"^(?:[cC]ite[a-zA-Z]*|[pP]arencite|[tT]extcite|footcite|autocite)$")
# Declarations and layout commands that show nothing and take no argument.
NO_OP = frozenset({"hline", "toprule", "midrule", "bottomrule", "centering", "noindent", "small",
    "footnotesize", "scriptsize", "tiny", "large", "Large", "LARGE", "huge", "normalsize",
    "selectfont", "bfseries", "itshape", "ttfamily", "rmfamily", "sffamily", "scshape",
    "normalfont", "newpage", "clearpage", "cleardoublepage", "pagebreak", "medskip",
    "smallskip", "bigskip", "vfill", "hfill", "indent", "raggedright", "raggedleft",
    "protect", "relax", "makeatletter", "makeatother", "tableofcontents", "listoffigures",
    "printbibliography", "frenchspacing", "sloppy", "fussy", "onecolumn", "twocolumn",
    "nonumber", "notag", "displaystyle", "em", "bf", "it", "tt", "sc", "rm", "sf", "bottomline"})
