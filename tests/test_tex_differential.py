"""The conditional reader against Debian's TeX (issue 32): 600 shapes drawn by Hypothesis from a fixed
seed (switches set every way, \\let and \\csname, groups, \\unless, \\if/\\ifx over macros, etoolbox and
ifthen conditionals, verbatim text holding conditional tokens, nesting) are compiled by pdflatex and
read back from the PDF; the parser must read the answer the PDF shows for each, or warn ``undecided``.
Never another answer in silence. ``scripts/tex_differential.py`` runs larger draws."""

from __future__ import annotations

import os
import shutil

import pytest

from checklist_eval.reading.isolation import ParseLimits, ParserPool
from checklist_eval.testing import tex_differential

SHAPES = 600
SEED = 32


def test_the_parser_reads_what_tex_prints_or_warns(tmp_path):
    if not (shutil.which("pdflatex") and shutil.which("pdftotext")):
        missing = "pdflatex/pdftotext absent (texlive-latex-base, texlive-latex-recommended, poppler-utils)"
        if os.environ.get("CI"):
            pytest.fail(f"{missing}: .ci/run installs them")
        pytest.skip(missing)
    drawn = tex_differential.draw(SHAPES, SEED)
    assert len(drawn) == SHAPES
    with ParserPool(1, ParseLimits(timeout_s=30, tex="never")) as pool:
        outcome = tex_differential.compare(drawn, pool.load_paper, batches=2, workdir=tmp_path)
    print(outcome.table())
    assert outcome.counts["lost"] == 0, outcome.table()  # every shape printed: the batches compiled whole
    shown = "\n".join(f"{s!r}\n  TeX prints {tex}, parser reads {read}" for s, tex, read in outcome.silent[:5])
    assert outcome.silent == [], f"{outcome.table()}\n{shown}"
    # the draw reaches both sides: answers the parser decides, and answers it only warns about
    assert outcome.counts["agree"] > SHAPES // 4 and outcome.counts["differ_warned"] > SHAPES // 10
