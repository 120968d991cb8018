"""Reading a paper and its checklist out of LaTeX source.

Modules by concern: ``project`` (root file and ``\\input`` resolution over a file tree), ``dead``
(comments, ``\\iffalse``, ``\\endinput``), ``lexer`` (brace groups and arguments), ``macros`` (the
document's ``\\newcommand``/``\\def``), ``render`` (the body as reading text, with ``vocabulary`` and
``numbering``), ``hidden`` (text the PDF would not show), ``checklist`` (the checklist region and its
answers), ``readable`` (short pieces through pylatexenc) and ``paper`` (the pipeline).
"""

from checklist_eval.reading.latex.checklist import Region, extract_checklist, find_region
from checklist_eval.reading.latex.dead import strip_dead
from checklist_eval.reading.latex.hidden import find_hidden_runs, find_hidden_text
from checklist_eval.reading.latex.macros import Macros, collect_macros
from checklist_eval.reading.latex.numbering import Target, theorem_kinds
from checklist_eval.reading.latex.paper import clear_scan_caches, parse_latex
from checklist_eval.reading.latex.project import LatexSource, latex_from_members, load_latex
from checklist_eval.reading.latex.render import Converted, convert_body

__all__ = [
    "Converted",
    "LatexSource",
    "Macros",
    "Region",
    "Target",
    "clear_scan_caches",
    "collect_macros",
    "convert_body",
    "extract_checklist",
    "find_hidden_runs",
    "find_hidden_text",
    "find_region",
    "latex_from_members",
    "load_latex",
    "parse_latex",
    "strip_dead",
    "theorem_kinds",
]
