"""`checklist-eval attack` end to end: plants land where plants.json says, the output is a valid GAT
submission, and `assessor-eval --attack-runs` reports the adversary figures on it."""

from __future__ import annotations

import json

from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.adversary.attack import STRATEGIES, attack
from checklist_eval.reading.parsing import load_paper


def cli(*args: str) -> CliRun:
    return run_cli(*args)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, fixtures_dir):
    out = tmp_path_factory.mktemp("attack") / "run"
    res = cli("attack", fixtures_dir / "papers" / "genuine", "--out", out, "--plants", "5", "--seed", "3", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == json.loads((out / "plants.json").read_text("utf-8"))
    return out


def test_plants_land_exactly_where_plants_json_says(run_dir):
    plants = json.loads((run_dir / "plants.json").read_text("utf-8"))
    files = plants["files"]
    assert sorted(p.name for p in run_dir.iterdir()) == sorted([*files.values(), "plants.json"])
    a = load_paper(run_dir / files["A"])
    t = load_paper(run_dir / files["T"])
    g = load_paper(run_dir / files["G"])
    assert len(plants["plants"]) == 5 and not plants["dropped"]
    by_id = {p["question_id"]: p for p in plants["plants"]}
    for ai, ti, gi in zip(a.checklist.items, t.checklist.items, g.checklist.items):
        assert (ti.answer, ti.justification) == (gi.answer, gi.justification)  # T is G's honest checklist
        if ai.id in by_id:
            p = by_id[ai.id]
            assert p["strategy"] in STRATEGIES
            assert (p["original_answer"], p["original_justification"]) == (ti.answer.value, ti.justification)
            assert ai.answer.value == p["planted_answer"] != p["original_answer"]
            assert " ".join(p["planted_justification"].split()) in " ".join(ai.justification_latex.split())
        else:
            assert (ai.answer, ai.justification) == (ti.answer, ti.justification)
    assert a.body == t.body  # the paper body is not touched


def test_output_validates_as_a_gat_submission(run_dir):
    res = cli("validate", run_dir, "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["case"] == "GAT"


def test_assessor_eval_reports_the_adversary_figures(run_dir):
    res = cli("score", run_dir, "--out", run_dir.parent / f"{run_dir.name}-results", "--json")
    assert res.returncode == 0, res.stderr
    res = cli("assessor-eval", "--attack-runs", run_dir.parent, "--json", "--bootstrap", "50")
    assert res.returncode == 0, res.stderr
    s = json.loads(res.stdout)
    n_plants = len(json.loads((run_dir / "plants.json").read_text("utf-8"))["plants"])
    assert (s["runs"], s["plants"]) == (1, n_plants)
    assert s["R_accept_everything"] == pytest.approx((s["items"] - n_plants) / s["items"])
    assert s["R_reject_everything"] == pytest.approx(n_plants / s["items"])
    assert s["detection"]["n"] == n_plants and s["false_flags"]["n"] == s["items"] - n_plants
    # R follows from detection and false flags: honest kept + plants caught, over all answers.
    kept = s["false_flags"]["n"] - s["false_flags"]["k"]
    assert s["R"] == pytest.approx((kept + s["detection"]["k"]) / s["items"])
    assert set(s["per_strategy"]) == {p["strategy"] for p in
                                      json.loads((run_dir / "plants.json").read_text("utf-8"))["plants"]}
    assert 0.0 <= s["auc"]["auc"] <= 1.0 and s["auc"]["ci95"][0] <= s["auc"]["auc"] <= s["auc"]["ci95"][1]
    text = cli("assessor-eval", "--attack-runs", run_dir, "--bootstrap", "0")
    assert text.returncode == 0 and "accept everything" in text.stdout and "per strategy" in text.stdout


def test_bad_input_is_one_line_and_exit_2(tmp_path, fixtures_dir):
    res = cli("attack", tmp_path / "missing.tex", "--out", tmp_path / "o")
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "missing.tex" in res.stderr
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "genuine_other.tex").write_text("x")
    res = cli("attack", fixtures_dir / "papers" / "genuine", "--out", tmp_path / "busy")
    assert res.returncode == 2 and "genuine_other.tex" in res.stderr
    res = cli("assessor-eval", "--attack-runs", tmp_path / "busy")
    assert res.returncode == 2 and "plants.json" in res.stderr
    res = cli("attack", fixtures_dir / "papers" / "genuine", "--out", tmp_path / "o", "--strategies", "nonsense")
    assert res.returncode == 2


def test_each_strategy_plants_what_it_says(tmp_path, fixtures_dir):
    """Same seed, same plants; a strategy only touches answers it applies to."""
    a = attack(fixtures_dir / "papers" / "genuine", tmp_path / "a", n_plants=3, seed=7)
    b = attack(fixtures_dir / "papers" / "genuine", tmp_path / "b", n_plants=3, seed=7)
    assert [p.question_id for p in a.plants] == [p.question_id for p in b.plants]
    only = attack(fixtures_dir / "papers" / "genuine", tmp_path / "c", n_plants=8, strategies=["evasive_na"])
    assert only.plants and all(p.original_answer == "Yes" and p.planted_answer == "NA" for p in only.plants)


def test_attacks_land_on_every_whole_real_paper(tmp_path, shared_dir):
    from checklist_eval.adversary.corpus_split import DEVELOPMENT, HELD_OUT, split

    papers = sorted(p for p in (shared_dir / "corpus" / "papers-latex").iterdir() if p.is_dir())
    # the fixed split covers the corpus exactly, half and half
    assert {p.name for p in papers} == set(split())
    assert sorted(split().values()).count(DEVELOPMENT) == sorted(split().values()).count(HELD_OUT)
    from checklist_eval.assessors.evidence.topics import topic_of

    landed = 0
    used: set[str] = set()
    applicable: set[str] = set()
    for i, paper in enumerate(papers):
        result = attack(paper, tmp_path / str(i), n_plants=4, seed=0)
        a = load_paper(tmp_path / str(i) / result.files["A"], checklist=result.checklist)
        got = {it.id: it.answer.value for it in a.checklist.items if it.answer}
        assert all(got[p.question_id] == p.planted_answer for p in result.plants), paper.name
        assert len(result.plants) >= 2, paper.name  # every paper has questions some strategy applies to
        landed += len(result.plants)
        used |= {p.strategy for p in result.plants}
        t = load_paper(tmp_path / str(i) / result.files["T"], checklist=result.checklist)
        applicable |= {s.name for s in STRATEGIES.values() for it in t.checklist.items if s.applies(it, topic_of(it))}
    assert landed >= 3 * len(papers)
    assert applicable == set(STRATEGIES)  # every strategy finds questions in the corpus
    assert len(used) >= len(STRATEGIES) - 2  # and one seed already uses nearly all of them


def test_every_strategy_draws_from_several_phrasings(tmp_path, fixtures_dir):
    from checklist_eval.adversary.phrasings import Context, reword
    from checklist_eval.models import Answer, ChecklistItem
    import random

    ctx = Context("Q", "17", "3", "A")
    it = ChecklistItem(id="1", title="t", question="q", answer=Answer.NO, justification="We do not.",
                       justification_latex="We do not.")
    for s in STRATEGIES.values():
        assert len(set(s.phrasings(it, ctx))) >= 6, s.name
    texts = {p.planted_justification for seed in range(6) for p in
             attack(fixtures_dir / "papers" / "genuine", tmp_path / str(seed), n_plants=1, seed=seed,
                    strategies=["phantom_pointer"]).plants}
    assert len(texts) >= 3  # seeds pick different phrasings
    base = "The code will be released upon acceptance; details are described in the paper."
    assert reword(base, random.Random(1)) == reword(base, random.Random(1)) != base


def test_white_box_rounds_against_the_heuristic(tmp_path, shared_dir):
    """`attack --against heuristic --rounds N`: each caught plant is rewritten until the offline assessor
    accepts it or the rounds run out; plants.json records what each round caught."""
    paper = shared_dir / "corpus" / "papers-latex" / "MatanAvitan__acc_int_paper"
    out = tmp_path / "wb"
    res = cli("attack", paper, "--out", out, "--plants", "6", "--seed", "1", "--against", "heuristic",
              "--rounds", "3", "--json")
    assert res.returncode == 0, res.stderr
    plants = json.loads((out / "plants.json").read_text("utf-8"))
    rounds = plants["rounds"]
    assert 1 <= len(rounds) <= 3 and all(r["against"] == "heuristic" for r in rounds)
    ids = {p["question_id"] for p in plants["plants"]}
    assert all(set(r["caught"]) <= ids for r in rounds)
    assert any(p["variant"] > 0 for p in plants["plants"] if p["question_id"] in rounds[0]["caught"])
    a = load_paper(out / plants["files"]["A"])
    got = {it.id: it for it in a.checklist.items}
    for p in plants["plants"]:  # answers never change; the rewritten justification is what A holds
        assert got[p["question_id"]].answer.value == p["planted_answer"]
        assert " ".join(p["planted_justification"].split())[:40] in " ".join(got[p["question_id"]].justification_latex.split())
    bad = cli("attack", paper, "--out", tmp_path / "x", "--rounds", "21", "--against", "heuristic")
    assert bad.returncode == 2 and "--rounds" in bad.stderr


def test_llm_rounds_rewrite_caught_plants_against_the_reviews(tmp_path, fixtures_dir):
    from checklist_eval.testing import MockServer

    out = tmp_path / "llm"
    with MockServer() as server:
        res = run_cli("attack", fixtures_dir / "papers" / "genuine", "--out", out, "--plants", "4", "--seed", "1",
                      "--strategies", "phantom_pointer", "fabricated_irb", "--rounds", "2", "--assessor", "llm",
                      "--model", "gpt-4o-mini", "--base-url", server.base_url, "--api-key-env", "CE_ATTACK_KEY",
                      "--no-cache", "--json", env_extra={"CE_ATTACK_KEY": "sk-x"})
        assert res.returncode == 0, res.stderr
        assert server.stats.chat_requests > 0
    plants = json.loads((out / "plants.json").read_text("utf-8"))
    assert plants["llm_rounds"] and plants["llm_rounds"][0]["round"] == 1
    rewritten = [p for p in plants["plants"] if p["strategy"].endswith("+llm")]
    assert rewritten  # the mock judge catches pointers to places that do not exist
    a = load_paper(out / plants["files"]["A"])
    got = {it.id: it for it in a.checklist.items}
    for p in plants["plants"]:
        assert got[p["question_id"]].answer.value == p["planted_answer"]
    for p in rewritten:
        assert "Section 2" in got[p["question_id"]].justification  # the rewrite landed in A


def test_llm_rounds_need_an_llm(tmp_path, fixtures_dir):
    res = cli("attack", fixtures_dir / "papers" / "genuine", "--out", tmp_path / "o", "--rounds", "1")
    assert res.returncode == 2 and "--assessor llm" in res.stderr


def test_a_broken_plants_file_is_one_line_exit_2(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "plants.json").write_text("{not json")
    res = cli("assessor-eval", "--attack-runs", run)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "plants.json" in res.stderr
    (run / "plants.json").write_text(json.dumps({"plants": [{"question_id": "1"}]}))
    res = cli("assessor-eval", "--attack-runs", run)
    assert res.returncode == 2 and "strategy" in res.stderr
