"""Prompt injection aimed at the assessor: dead code never reaches the paper body (``parse --with-body``) nor
the LLM's messages; invisible text is kept but flagged "hidden"; the heuristic assessor flags an injection
in the body or in a justification, and an injection never raises C. Figures: ``scripts/drill_injection.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from checklist_eval.cli import main
from checklist_eval.reading.parsing import load_paper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import drill_injection as drill  # noqa: E402

DEAD = ("% comment", "\\iffalse ... \\fi", "comment environment")
INVISIBLE = ("white text (\\textcolor{white})", "white text (\\color{white})", "\\phantom")


def _answered(paper: str) -> int:
    """Real (Yes/No/NA) answers of the clean fixture paper: the items the heuristic assesses."""
    items = load_paper(drill.TEMPLATE / f"{paper}.tex").checklist.items
    return sum(1 for it in items if it.answer is not None and it.answer.is_answered)


@pytest.fixture(scope="module")
def rows():
    return {(r["paper"], r["placement"]): r for r in drill.drill()}


@pytest.mark.parametrize("placement", DEAD)
def test_dead_code_never_reaches_the_body(tmp_path, capsys, placement):
    text = drill.inject((drill.TEMPLATE / "genuine_sga.tex").read_text("utf-8"), placement)
    assert drill.PAYLOAD in text
    path = tmp_path / "paper.tex"
    path.write_text(text, "utf-8")
    assert main(["parse", str(path), "--json", "--with-body"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["body_chars"] > 1000 and "Sketched" in doc["title"]
    assert drill.PAYLOAD.lower() not in json.dumps(doc).lower()


def test_each_placement_is_removed_or_flagged(rows):
    for paper in ("genuine_sga", "adversarial_sga"):
        answered = _answered(paper)
        assert answered > 0
        base = rows[(paper, "(none)")]
        assert base["heuristic_flag"] == 0 and not base["hidden_warning"]
        for placement in DEAD:
            r = rows[(paper, placement)]
            assert not (r["in_body"] or r["in_justification"] or r["reaches_llm"]), r
            assert r["C"] == base["C"] and r["changed"] == 0, r
        for placement in INVISIBLE:
            r = rows[(paper, placement)]
            # Kept (the assessor should know the paper tries this) but flagged, by parser and heuristic.
            assert r["in_body"] and r["reaches_llm"] and r["hidden_warning"], r
            assert r["heuristic_flag"] == answered, r
        visible = rows[(paper, "visible text")]
        assert visible["in_body"] and visible["reaches_llm"] and not visible["hidden_warning"]
        assert visible["heuristic_flag"] == answered, visible
        just = rows[(paper, "justification")]
        assert just["in_justification"] and just["reaches_llm"] and not just["in_body"]
        assert just["heuristic_flag"] == answered, just


def test_injection_never_raises_the_heuristic_score(rows):
    for (paper, placement), r in rows.items():
        assert r["C"] <= r["C_without"], (paper, placement, r)
        assert r["mean_dp"] <= 0, (paper, placement, r)
