"""Checklist definitions as data: loading, matching by meaning, version detection."""

from __future__ import annotations

import json

import pytest

from checklist_eval.reading import checklists
from checklist_eval.errors import InputError


def test_bundled_versions_have_the_official_question_counts():
    assert checklists.available() == ["neurips-2021", "neurips-2024", "neurips-2025", "neurips-2026"]
    counts = {v: len(checklists.load(v).questions) for v in checklists.available()}
    assert counts == {"neurips-2021": 18, "neurips-2024": 15, "neurips-2025": 16, "neurips-2026": 16}
    assert checklists.load("neurips-2021").ids[:4] == ["1a", "1b", "1c", "1d"]
    assert checklists.load("neurips-2021").ids[-1] == "5c"
    assert checklists.load("neurips-2025").ids == [str(i) for i in range(1, 17)]
    assert checklists.load("neurips-2025").question("16").title == "Declaration of LLM usage"
    assert all(q.guidelines for q in checklists.load("neurips-2026").questions)


def test_unknown_id_names_it():
    with pytest.raises(InputError, match="neurips-1999"):
        checklists.load("neurips-1999")


def test_load_file_validates(tmp_path):
    good = tmp_path / "q.json"
    good.write_text(json.dumps({"id": "mine", "name": "Mine", "questions": [
        {"id": "a", "title": "Data", "question": "Is the data public?"}]}))
    assert checklists.load_file(good).ids == ["a"]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="bad.json: not valid JSON"):
        checklists.load_file(bad)
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps({"id": "x", "name": "x", "questions": [
        {"id": "a", "title": "t", "question": "q"}, {"id": "a", "title": "u", "question": "r"}]}))
    with pytest.raises(InputError, match="repeats question ids a"):
        checklists.load_file(dup)
    with pytest.raises(InputError, match="not found"):
        checklists.load_file(tmp_path / "absent.json")


@pytest.mark.parametrize("version", ["neurips-2021", "neurips-2024", "neurips-2025", "neurips-2026"])
def test_every_question_matches_its_own_title_and_text(version):
    spec = checklists.load(version)
    for q in spec.questions:
        assert checklists.match_question(spec, q.title + " " + q.question) == q.id
        assert checklists.match_question(spec, q.question) == q.id


@pytest.mark.parametrize(
    "text,qid",
    [
        ("IRB approvals", "15"),
        ("Experimental setting / details", "6"),
        ("Do the main claims made in the abstract and introduction accurately reflect the paper\u2019s contributions and scope?", "1"),
        ("Does the paper fully disclose all the information needed to reproduce the main experimental results?", "4"),
        ("Declaration of LLM usage", "16"),
        ("Licenses", "12"),
        ("Theory", "3"),
    ],
)
def test_match_is_tolerant_of_short_titles_curly_quotes_and_shortened_questions(text, qid):
    assert checklists.match_question(checklists.load("neurips-2025"), text) == qid


def test_unrelated_text_matches_nothing():
    spec = checklists.load("neurips-2025")
    assert checklists.match_question(spec, "Did you make sure all plots are legible in 20 point font?") is None
    assert checklists.match_question(spec, "") is None


def test_reordered_old_style_questions_match_by_meaning():
    spec = checklists.load("neurips-2021")
    assert checklists.match_question(spec, "Did you mention the license of the assets?") == "4b"
    assert checklists.match_question(spec, "Did you report error bars (e.g., with respect to the random seed)?") == "3c"


def test_detect_versions_from_latex_and_pdf_like_text():
    q = {v: checklists.load(v) for v in checklists.available()}
    old = "\n".join(x.question for x in q["neurips-2021"].questions)
    assert checklists.detect(old) == "neurips-2021"
    new15 = "\n".join(f"{x.title}\n{x.question}" for x in q["neurips-2024"].questions)
    assert checklists.detect(new15) == "neurips-2024"
    v25 = "\n".join(f"{x.title}\n{x.question}" for x in q["neurips-2025"].questions)
    assert checklists.detect(v25) == "neurips-2025"
    v26 = "\n".join(f"{x.title}\n{x.question}" for x in q["neurips-2026"].questions)
    assert checklists.detect(v26) == "neurips-2026"
    # text as a PDF renders 2026 guidelines: answer macros become "[N/A]"
    llm = "Declaration of LLM usage\nDoes the paper describe the usage of LLMs"
    assert checklists.detect(llm + "\nThe answer [N/A] means that the paper") == "neurips-2026"
    assert checklists.detect(llm + "\nThe answer NA means that the paper") == "neurips-2025"
