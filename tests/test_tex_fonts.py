"""Fonts TeX does not have (issue 42, the reported 42-paper batch stopped by ``timeout`` at 23/42): no font is
made during a compile. Where a font has no Type 1 file, kpathsea used to run METAFONT for every size of every
such font (every T1 font on a machine without cm-super) inside each paper's TeX budget; now the pass stops
at once, the paper is read from the source and one line names the font and the package that has it. Where
cm-super is missing, Latin Modern stands in for the T1 Computer Modern fonts, so such papers stay TeX's.

The fonts here are the project's own (a METAFONT source and its metrics beside main.tex): the same shape as
a T1 font on a machine without cm-super, on any machine, and a participant's program METAFONT never runs."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from checklist_eval.testing import tex_hostile
from test_tex_reader import cli, need_tex

# A METAFONT font of one glyph: what kpathsea would have made a bitmap of (mktexpk), had it been allowed to
CEMARK_MF = r"""mode_setup;
em#:=10pt#; cap#:=7pt#;
define_pixels(em,cap);
beginchar("A",em#,cap#,0); pickup pencircle scaled 0.4pt; draw (0,0)--(w/2,h)--(w,0); endchar;
end
"""


def _shape_with_own_font() -> tex_hostile.Shape:
    return tex_hostile.Shape("own-font", "a font with no Type 1 file", r"\answerYes{}", "Yes",
                             preamble=r"\font\cemark=cemark", body=r"Marked: {\cemark A}.",
                             files={"cemark.mf": CEMARK_MF})


def _made_fonts(folder) -> list[str]:
    return sorted(p.name for p in folder.rglob("cemark*") if p.suffix != ".mf")


def test_a_font_with_no_type1_file_stops_tex_at_once_and_names_the_font(tmp_path):
    """Metrics present, no Type 1 file (a T1 font without cm-super): pdfTeX stops; no bitmap is made; the
    paper is read from the source, and the one line says which font and that bitmaps are not made."""
    need_tex()
    tfm = subprocess.run(["kpsewhich", "cmr10.tfm"], capture_output=True, text=True).stdout.strip()
    path = _shape_with_own_font().write(tmp_path / "paper")
    shutil.copyfile(tfm, path.parent / "cemark.tfm")  # metrics TeX finds; glyphs only METAFONT could draw
    run = cli("parse", str(path), "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-800:]
    doc = json.loads(run.stdout)
    assert doc["reader"] == "source" and doc["items"][0]["answer"] == "Yes"
    assert ("TeX: font cemark not found as a Type 1 file; bitmap fonts are not made (METAFONT is not run); "
            "answers read from the source") in doc["warnings"], doc["warnings"]
    assert _made_fonts(tmp_path) == ["cemark.tfm"]  # the project's own metrics; no .600pk anywhere
    always = cli("parse", str(path), "--tex", "always", cwd=tmp_path)
    assert always.returncode == 2 and "Traceback" not in always.stderr
    assert always.stderr.strip().splitlines()[-1].endswith(
        "TeX did not read this paper: font cemark not found as a Type 1 file; bitmap fonts are not made "
        "(METAFONT is not run) (--tex always)")


def test_a_font_with_no_metrics_is_not_made_from_the_projects_metafont(tmp_path):
    """Only a METAFONT source: TeX sets the text without that font and says so; METAFONT never runs the
    project's program, so no metrics and no bitmap are written anywhere."""
    need_tex()
    path = _shape_with_own_font().write(tmp_path / "paper")
    run = cli("parse", str(path), "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-800:]
    doc = json.loads(run.stdout)
    assert doc["reader"] == "tex" and doc["items"][0]["answer"] == "Yes"
    assert any(w.startswith("font cemark not found") for w in doc["warnings"]), doc["warnings"]
    assert _made_fonts(tmp_path) == []


@pytest.mark.parametrize("has_cm_super", [False, True])
def test_without_cm_super_latin_modern_prints_the_t1_text_and_says_so(tmp_path, monkeypatch, has_cm_super):
    """TeX's tree as a machine with only texlive-latex-base and -recommended has it (no cm-super, lmodern
    present): the T1 paper is still TeX's, in Latin Modern, said in one line; with cm-super, nothing changes."""
    need_tex()
    from checklist_eval.reading.tex import engine, project
    from checklist_eval.reading.tex.read import read_with_tex

    if not all(engine.tex_tree_has("t1lmr.fd", "sfrm1000.pfb")):
        pytest.skip("lmodern or cm-super is not installed here: the two cases are not both to be had")
    monkeypatch.setenv("CHECKLIST_EVAL_TEX_CACHE", str(tmp_path / "cache"))
    real = engine.tex_tree_has
    monkeypatch.setattr(engine, "tex_tree_has",
                        lambda *names: tuple(has_cm_super if n == "sfrm1000.pfb" else real(n)[0] for n in names))
    shape = tex_hostile.Shape("t1", "T1 fonts", r"\answerNo{}", "No", preamble=r"\usepackage[T1]{fontenc}",
                              body=r"Degrees: 20\textdegree{} and \textbf{bold} \texttt{mono} \textsf{sans}.")
    path = shape.write(tmp_path / "paper")
    reading = read_with_tex(project.from_path(path), "main.tex", None, "paper", 90)
    assert reading.paper.checklist.items[0].answer == "No"
    note = "cm-super is not installed: TeX printed the T1 Computer Modern text in Latin Modern (lmodern)"
    pdf = next((tmp_path / "cache").glob("*/paper.pdf"))
    fonts = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True, check=True).stdout  # poppler-utils
    if has_cm_super:
        assert note not in reading.notes and "LMRoman" not in fonts and "SFRM" in fonts, fonts
    else:
        assert note in reading.notes and "LMRoman10-Regular" in fonts and "SFRM" not in fonts, fonts


def test_a_compile_that_never_ends_leaves_the_source_reading_within_the_budget(tmp_path):
    """No paper holds a batch past its budget, and a long compile never costs the paper its reading: the
    source evaluator reads first, TeX is stopped inside the budget, the source's reading is the paper's."""
    need_tex()
    shape = tex_hostile.Shape("spin", "a compile that never ends", r"\answerNo{}", "No",
                              body=r"\def\spin{\spin}\spin")
    path = shape.write(tmp_path / "paper")
    run = cli("parse", str(path), "--json", "--parse-timeout", "20", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-800:]
    doc = json.loads(run.stdout)
    assert doc["reader"] == "source" and doc["items"][0]["answer"] == "No"
    assert any(w.startswith("TeX: pdflatex did not finish within ") and w.endswith("; answers read from the source")
               for w in doc["warnings"]), doc["warnings"]
    assert not list((tmp_path / "tex-cache").glob("*/paper.pdf"))  # a stopped compile is not kept
