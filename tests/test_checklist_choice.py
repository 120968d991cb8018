# ruff: noqa: F811  (the cli fixture is imported from test_hostile_parsing and named by each test)
"""The NeurIPS checklist is found by its questions (issue 32, item 3): a paper that also holds another
venue's reproducibility checklist or a datasheet with answer marks, before or after the NeurIPS one, is
read against the NeurIPS checklist, and each other list is left aside with an ``other_checklist`` note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_hostile_parsing import cli  # noqa: F401 (fixture)

from checklist_eval.reading.parsing import load_paper

PAPER_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "submissions" / "team-alpha" / "genuine_sga.tex"
PAPER = PAPER_PATH.read_text("utf-8")
NEURIPS = "\\section*{NeurIPS Paper Checklist}"
REPRODUCIBILITY = r"""\section*{Reproducibility Checklist}
This paper:
\begin{itemize}
\item Includes a conceptual outline and/or pseudocode description of AI methods introduced. [No]
\item Clearly delineates statements that are opinions, hypothesis, and speculation from objective facts. [No]
\item Does this paper make theoretical contributions? [No]
\item Does this paper rely on one or more datasets? [Yes]
\item All novel datasets introduced in this paper are included in a data appendix. [No]
\item Does this paper include computational experiments? [Yes]
\end{itemize}
"""
DATASHEET = r"""\section*{Datasheet checklist}
\begin{enumerate}
\item For what purpose was the dataset created? \answerNo{} To study.
\item Who created the dataset? \answerNo{}
\item Does the dataset contain data that might be considered confidential? \answerNo{}
\end{enumerate}
"""


def _answers(path: Path) -> str:
    paper = load_paper(path)
    return "".join(it.answer.value[0] if it.answer else "-" for it in paper.checklist.items)


@pytest.mark.parametrize("where", ["before", "after"])
def test_other_checklists_are_left_aside_with_a_note(cli, tmp_path, where):
    expected = _answers(PAPER_PATH)
    others = REPRODUCIBILITY + DATASHEET
    if where == "before":
        text = PAPER.replace(NEURIPS, others + NEURIPS, 1)
    else:
        text = PAPER.replace("\\end{document}", others + "\\end{document}", 1)
    path = tmp_path / "paper.tex"
    path.write_text(text, "utf-8")
    assert _answers(path) == expected
    run = cli("check", str(path), "--json")
    assert run.code == 0, run
    notes = [w for w in json.loads(run.out)["warnings"] if w["kind"] == "other_checklist"]
    assert sorted(w["location"] for w in notes) == ["Datasheet checklist", "Reproducibility Checklist"], notes
    assert all(set(w) == {"kind", "message", "location"} for w in notes)


def test_a_lone_checklist_gets_no_note(tmp_path):
    paper = load_paper(PAPER_PATH)
    assert not [w for w in paper.warnings if w.kind.value == "other_checklist"]
