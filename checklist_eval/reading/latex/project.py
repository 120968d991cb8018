"""A LaTeX project as one live string: the root file chosen among a file tree's files, and every
``\\input``, ``\\include`` and ``\\subfile`` inlined (dead code removed first, per file, so a
commented-out ``% \\input{checklist}`` stays out).

The files come from :mod:`checklist_eval.reading.sources` (a folder, an archive, a lone file or a submission's
members, all read in memory); what a root file is, and which one holds the checklist, is decided here.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from checklist_eval.errors import InputError
from checklist_eval.models import ParseWarning, WarningKind
from checklist_eval.reading import sources
from checklist_eval.reading.latex.checklist import find_region
from checklist_eval.reading.latex.dead import LiveText, live_file_mapped
from checklist_eval.reading.latex.printed import faithful_answer_definitions
from checklist_eval.reading.sources import FileTree

MAX_INPUT_DEPTH = 32
# Parsing holds about 20 times the LaTeX it reads; a long main.tex is under 1 MB, so this only stops
# documents built from one file \input many times over.
MAX_SOURCE_CHARS = 16 * 1024 * 1024  # the whole document once every \input is resolved
MAX_LISTED_ROOTS = 10  # candidates named when a folder holds several papers


@dataclass
class LatexSource:
    """A LaTeX document flattened into one live string."""

    source: str  # what the user named, for messages and Paper.source
    root: str  # the root file inside the project ("main.tex")
    text: str  # live LaTeX: dead code removed, inputs inlined
    warnings: list[ParseWarning] = field(default_factory=list)
    # file and 1-based line, in the project as written, of a position in ``text``
    locate: Callable[[int], tuple[str, int]] | None = None

    @property
    def is_fragment(self) -> bool:
        """True for a standalone snippet (a checklist.tex on its own) rather than a whole document."""
        return "\\begin{document}" not in self.text


_LATEX_HINT = re.compile(r"\\[a-zA-Z]{2,}")


def require_latex(text: str, name: str) -> None:
    if not _LATEX_HINT.search(text):
        raise InputError(name, "not LaTeX (no LaTeX commands) and not a PDF")


# --- \input resolution ----------------------------------------------------------------------------

# Bounded repeats: an unclosed "[" in each of many \\documentclass lines must not rescan the file.
_DOCCLASS = re.compile(r"\\documentclass\s*(?:\[[^\]]{0,4000}\])?\s*\{([^}]{0,500})\}")
_BEGIN_DOC = "\\begin{document}"
_END_DOC = "\\end{document}"
_INPUT = re.compile(
    r"\\(?P<cmd>input|include|subfile|import|subimport|subfileinclude)\*?(?![a-zA-Z@])\s*"
    r"(?:\{(?P<dir>[^{}]*)\}\s*\{(?P<file2>[^{}]*)\}|\{(?P<file>[^{}]*)\}|(?P<bare>[^\s{}\\%]+))"
)


def _candidates(name: str, base_dirs: list[str]) -> list[str]:
    """Project paths an \\input argument may refer to, nearest first, never outside the project."""
    out = []
    for base in base_dirs:
        joined = posixpath.normpath(posixpath.join(base, name)) if base else posixpath.normpath(name)
        if joined.startswith("../") or joined == ".." or joined.startswith("/"):
            continue
        out.append(joined)
        if not joined.lower().endswith(".tex"):
            out.append(joined + ".tex")
    return out


# A macro that stands for a conditional's opening or closing: \newcommand{\hide}{\iffalse}, \let\hide\iffalse
# (a \newif-style name, \ifsomething, is a switch and is modelled).
_HIDING = re.compile(
    r"\\(?:[gex]?def|(?:re|provide)?newcommand\*?)\s*\{?\s*\\([a-zA-Z@]{1,200})\s*\}?\s*(?:\[[^\]\n]{0,200}\])*\s*"
    r"\{\s*\\(?:iffalse|iftrue|fi|else)(?![a-zA-Z@])"
    r"|\\let\s*\\((?!if)[a-zA-Z@]{1,200})\s*=?\s*\\(?:iffalse|iftrue|fi|else)(?![a-zA-Z@])")
_COMMENTED = re.compile(r"(?<!\\)%")


def _conditional_macros(name: str, text: str) -> list[ParseWarning]:
    found = []
    for m in _HIDING.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if _COMMENTED.search(text, line_start, m.start()):
            continue
        line = text.count("\n", 0, m.start()) + 1
        macro = m.group(1) or m.group(2)
        found.append(ParseWarning(
            kind=WarningKind.UNDECIDED, location=f"\\{macro} at {name}:{line}",
            message=f"\\{macro} at {name}:{line} stands for a conditional (\\iffalse...): the source does not "
                    "follow it; every answer is read as written (undecided), the PDF may show others"))
    return found


class _LiveFiles:
    """Each file of a tree as TeX reads it, stripped of dead code once however often root choice and
    \\input resolution ask for it."""

    def __init__(self, tree: FileTree):
        self.tree = tree
        self._live: dict[str, LiveText] = {}
        # macros standing for \iffalse & co. in the files read: dead-code removal cannot see through them
        self.hiding: list[tuple[str, ParseWarning]] = []

    def hiding_in(self, flattener: _Flattener) -> list[ParseWarning]:
        """The hiding macros of the files this document reads (root choice reads others too)."""
        used = {name for _, name, _ in flattener.pieces}
        return [w for name, w in self.hiding if name in used]

    def __call__(self, name: str) -> str:
        if name not in self._live:
            text = self.tree.text(name)
            self._live[name] = live_file_mapped(text)
            self.hiding += [(name, w) for w in _conditional_macros(name, text)]
        return self._live[name].text

    def line_of(self, name: str, live_pos: int) -> int:
        """The 1-based line of the file as written that holds its live text's character ``live_pos``."""
        return self.tree.text(name).count("\n", 0, self._live[name].original_offset(live_pos)) + 1


class _Flattener:
    def __init__(self, live: _LiveFiles, root: str, warnings: list[ParseWarning]):
        self.live = live
        self.tree = live.tree
        self.root_dir = posixpath.dirname(root)
        self.warnings = warnings
        self.label = f"{self.tree.label}/{root}"
        self.inlined = 0  # characters pulled in by \input so far: a file included 1000 times counts 1000 times
        # (start in the flattened text, file, start in that file's live text) of each stretch, in order
        self.pieces: list[tuple[int, str, int]] = []

    def flatten(self, name: str, stack: tuple[str, ...] = (), at: int = 0) -> str:
        """The file with its inputs inlined; ``at``: where it starts in the whole flattened text."""
        text = self.live(name)
        start = 0
        if stack and _BEGIN_DOC in text and _DOCCLASS.search(text):
            # A \subfile'd file is a document of its own; only its body belongs to the parent.
            start = text.index(_BEGIN_DOC) + len(_BEGIN_DOC)
            end = text.find(_END_DOC, start)
            text = text[start : end if end >= 0 else len(text)]
        elif _END_DOC in text:
            text = text[: text.index(_END_DOC) + len(_END_DOC)]
        stack = stack + (name,)
        parts = []
        pos = 0
        self.pieces.append((at, name, start))
        for m in _INPUT.finditer(text):
            parts.append(text[pos : m.start()])
            at += m.start() - pos
            parts.append(self._inline(m, name, stack, at))
            at += len(parts[-1])
            pos = m.end()
            self.pieces.append((at, name, start + pos))
        parts.append(text[pos:])
        return "".join(parts)

    def locate(self, pos: int) -> tuple[str, int]:
        """File and line, as written, of the flattened text's character ``pos``."""
        i = max(bisect.bisect_right(self.pieces, (pos, "\uffff", 0)) - 1, 0)
        at, name, live_start = self.pieces[i]
        return name, self.live.line_of(name, live_start + pos - at)

    def _inline(self, match: re.Match, current: str, stack: tuple[str, ...], at: int) -> str:
        cmd = match["cmd"]
        target = (match["file"] or match["file2"] or match["bare"] or "").strip()
        if not target:
            return match.group(0)
        if cmd in ("import", "subimport"):
            directory = (match["dir"] or "").strip()
            base = posixpath.dirname(current) if cmd == "subimport" else self.root_dir
            target = posixpath.join(base, directory, target)
            bases = [""]
        else:
            bases = [self.root_dir, posixpath.dirname(current)]
        found = self._resolve(cmd, target, current, bases, stack)
        if found is None:
            return ""
        wrapped = cmd in ("include", "subfile")
        body = self.flatten(found, stack, at + wrapped)
        self.inlined += len(body)
        if self.inlined > MAX_SOURCE_CHARS:
            raise InputError(self.label, f"document larger than {MAX_SOURCE_CHARS // 2**20} MB once its "
                             "\\input files are resolved")
        return f"\n{body}\n" if wrapped else body

    def _resolve(self, cmd: str, target: str, current: str, bases: list[str], stack: tuple[str, ...]) -> str | None:
        """The file an input names, or None (with a warning saying why it is skipped)."""
        if sources.is_absolute(target):
            self._skip(current, f"{current}: \\{cmd}{{{target}}} points outside the project; skipped")
            return None
        found = next((c for c in _candidates(target, bases) if self.tree.exists(c)), None)
        if found is None:
            if any(posixpath.normpath(posixpath.join(b, target)).startswith("..") for b in bases):
                self._skip(current, f"{current}: \\{cmd}{{{target}}} points outside the project; skipped")
            elif not target.lower().endswith((".bbl", ".sty", ".cls", ".pdf", ".png", ".pgf")):
                self._skip(current, f"{current}: \\{cmd}{{{target}}}: file not found; skipped")
            return None
        if found in stack:
            self._skip(current, f"{current}: \\{cmd}{{{target}}} includes itself (cycle); skipped")
            return None
        if len(stack) >= MAX_INPUT_DEPTH:
            self._skip(current, f"{current}: inputs nested deeper than {MAX_INPUT_DEPTH}; skipped")
            return None
        return found

    def _skip(self, current: str, message: str) -> None:
        self.warnings.append(ParseWarning(kind=WarningKind.INPUT_SKIPPED, message=message, location=current))


_PACKAGE_USE = re.compile(r"\\(?:usepackage|RequirePackage|documentclass)\s*(?:\[[^\]]{0,2000}\])?\s*"
                          r"\{([^{}]{1,2000})\}")
_ANSWER_NAMED = re.compile(r"answer(?:Yes|No|NA|TODO)(?![a-zA-Z@])")


def answer_macros_in_project_styles(tree: FileTree, text: str, root_dir: str) -> list[ParseWarning]:
    """An ``undecided`` warning for each of the project's own .sty/.cls files the document loads that
    names an answer macro other than to define it as the venues do (``\\answerYes`` printing "[Yes]"):
    the source reader does not read styles, TeX does."""
    warnings = []
    for m in _PACKAGE_USE.finditer(text):
        for name in (n.strip() for n in m.group(1).split(",")):
            for ext in (".sty", ".cls"):
                path = posixpath.normpath(posixpath.join(root_dir, name + ext)) if name else ""
                if not path or path.startswith("..") or not tree.exists(path):
                    continue
                try:
                    style = tree.text(path)
                except InputError:
                    continue
                named = _ANSWER_NAMED.search(style)
                if named and not faithful_answer_definitions(style):
                    warnings.append(ParseWarning(
                        kind=WarningKind.UNDECIDED, location=f"\\{named.group(0)} in {path}",
                        message=f"{path} names \\{named.group(0)} and the source reader does not read styles: "
                                "every answer is read as written (undecided), the PDF may show others"))
    return warnings


# --- root choice ----------------------------------------------------------------------------------


def _is_root(live: str) -> bool:
    return bool(_DOCCLASS.search(live)) and _BEGIN_DOC in live


def _has_checklist(live: str) -> bool:
    # The parser's own notion of a live checklist, so root choice and parsing can never disagree.
    return find_region(live) is not None


def choose_root(live: _LiveFiles, warnings: list[ParseWarning]) -> str:
    """The root file of a project: the one document (``\\documentclass`` + ``\\begin{document}``),
    or of several the one that really pulls the checklist in; without any, the file holding one."""
    tree = live.tree
    tex_names = [n for n in tree.names if n.lower().endswith((".tex", ".ltx"))]
    if not tex_names:
        raise InputError(tree.label, "no .tex file found")
    roots = [n for n in tex_names if _is_root(live(n))]
    if len(roots) == 1:
        return roots[0]
    if roots:
        return _rank_roots(live, roots)
    if len(tex_names) == 1:
        return tex_names[0]
    with_checklist = [n for n in tex_names if _has_checklist(live(n))]
    if with_checklist:
        chosen = min(with_checklist, key=lambda n: (n.count("/"), n))
        warnings.append(ParseWarning(
            kind=WarningKind.ROOT_CHOICE, location=chosen,
            message=f"{tree.label}: no root file (\\documentclass + \\begin{{document}}); reading {chosen}"))
        return chosen
    raise InputError(tree.label, "no root file (\\documentclass + \\begin{document}) found")


def _rank_roots(live: _LiveFiles, roots: list[str]) -> str:
    """Of several documents (main.tex and an old draft, a paper and its supplement), the one whose
    live content really pulls the checklist in, then the conventional name, then the shallowest.
    Several documents that each carry a live checklist are several papers: guessing one would
    silently judge the wrong paper, so the user names it."""
    checked = {n: _has_checklist(_Flattener(live, n, []).flatten(n)) for n in roots}
    _refuse_several_papers(live.tree.label, [n for n in roots if checked[n]])

    def rank(name: str) -> tuple[int, int, int, str]:
        return (
            0 if checked[name] else 1,
            0 if posixpath.basename(name).lower() == "main.tex" else 1,
            name.count("/"),
            name,
        )

    return min(roots, key=rank)


def _refuse_several_papers(label: str, candidates: list[str]) -> None:
    if len(candidates) < 2:
        return
    shown = sorted(candidates)[:MAX_LISTED_ROOTS]
    more = f" and {len(candidates) - len(shown)} more" if len(candidates) > len(shown) else ""
    raise InputError(label, f"holds {len(candidates)} papers with a checklist ({', '.join(shown)}{more}): "
                            "name one with --root FILE, or keep one paper per folder")


# --- loading --------------------------------------------------------------------------------------


def load_project(tree: FileTree, source: str, root: str | None = None) -> LatexSource:
    """A project's document: its root (named, or chosen here) with every input inlined."""
    warnings: list[ParseWarning] = []
    live = _LiveFiles(tree)
    root = sources.pick_root(tree, root, lambda _: choose_root(live, warnings))
    flattener = _Flattener(live, root, warnings)
    text = flattener.flatten(root)
    require_latex(text, f"{tree.label}/{root}")
    warnings += answer_macros_in_project_styles(tree, text, posixpath.dirname(root)) + live.hiding_in(flattener)
    return LatexSource(source=source, root=root, text=text, warnings=tree.warnings + warnings,
                       locate=flattener.locate)


def load_tex_file(path: Path) -> LatexSource:
    """A single .tex file (document or fragment); inputs resolve against its folder's files."""
    tree = sources.open_file_tree(path)
    name = path.name
    require_latex(tree.text(name), str(path))
    warnings: list[ParseWarning] = []
    live = _LiveFiles(tree)
    flattener = _Flattener(live, name, warnings)
    flat = flattener.flatten(name)
    warnings += answer_macros_in_project_styles(tree, flat, "") + live.hiding_in(flattener)
    return LatexSource(source=str(path), root=name, text=flat, warnings=tree.warnings + warnings,
                       locate=flattener.locate)


def load_latex(path: str | Path, root: str | None = None) -> LatexSource:
    """Any LaTeX input (file, folder, zip, tar) as one flattened live string. ``root`` names the main
    .tex file of a project (a folder or archive holding several papers must name one)."""
    path = Path(path)
    kind = sources.input_kind(path)
    if kind == "pdf":
        raise InputError(path, "is a PDF, not LaTeX source")
    if kind == "tex":
        return load_tex_file(path)
    return load_project(sources.open_tree(path, kind), str(path), root)


def latex_from_members(label: str, name: str, is_dir: bool, members: dict[str, bytes]) -> LatexSource:
    """A LaTeX paper held in memory: a folder of members, one .tex member, or a nested .zip/.tar
    member (opened from its bytes, like any project archive)."""
    tree = sources.tree_from_members(label, name, is_dir, members)
    if tree.names == [name]:  # one .tex member: LaTeX before anything is looked for in it
        require_latex(tree.text(name), label)
    return load_project(tree, label)
