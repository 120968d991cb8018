"""Every verdict with its evidence: each answer is contradicted, supported or unverified, with the passage
of the paper it rests on (file:line of a LaTeX source, page of a PDF), said the same way by the CLI table,
``check --json``, the records files and the HTML report; the report read in a real headless browser at
375 and 1280 px. And the two blind spots the offline assessor now blocks: a Yes whose justification
denies its own subject, a No the body plainly refutes."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import re
import shutil
from pathlib import Path

from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor
from checklist_eval.challenge.records import records_from_assessments
from checklist_eval.challenge.results.ledger import Ledger, write_records
from checklist_eval.models import Answer, Checklist, ChecklistItem, Paper, State
from checklist_eval.reading import checklists
from checklist_eval.reading.parsing import load_paper

ROOT = Path(__file__).resolve().parents[1]
PAPER = Path("corpus/papers-latex/k-mundinger__ramsey-fw-neurips")  # development half of the corpus split
PDF = Path("corpus/anchor-sample/papers/1_adversarial_MetaAlbum/adversarial_MetaAlbum.pdf")
CHECKLIST_ONLY = Path("corpus/latex/AIQ-Kitware__neurips-2025-MAGNET__paper-checklist.tex")
CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).is_file()), None)
ARTIFACTS = Path(os.environ.get("CHECKLIST_EVAL_ARTIFACTS", ROOT / "test-artifacts")) / "evidence"
SPEC = checklists.load("neurips-2024")


def cli(*args: str) -> CliRun:
    return run_cli(*args, cwd=ROOT)


def judged(path: Path):
    paper = load_paper(path)
    return paper, asyncio.run(HeuristicAssessor().assess_paper(paper))


# -- the states and their passages on real papers ----------------------------------------------------


def test_a_latex_papers_verdicts_rest_on_passages_at_file_and_line(shared_dir):
    paper, out = judged(shared_dir / PAPER)
    states = {a.state for a in out}
    assert states == {State.CONTRADICTED, State.SUPPORTED, State.UNVERIFIED}
    for a in out:
        assert (a.state is State.CONTRADICTED) == (not a.correct)  # c_i unchanged: unverified counts as correct
        if a.state is State.SUPPORTED:
            assert a.verdict == "correct" and a.passages
        for p in a.passages:
            assert re.fullmatch(r"[\w/.-]+\.tex:\d+", p.where), p.where
            file, line = p.where.rsplit(":", 1)
            source = (shared_dir / PAPER / file).read_text(encoding="utf-8", errors="replace").splitlines()
            # the place is where the passage's paragraph starts: its words are in the lines around it
            words = re.findall(r"(?<![A-Za-z0-9])[a-z]{5,}(?![A-Za-z0-9])", p.quote)[:3]
            near = " ".join(source[max(0, int(line) - 4):int(line) + 60])  # a heading may open it
            assert all(w in near for w in words), (p.where, p.quote[:60])


def test_a_pdfs_passages_are_located_by_page(shared_dir):
    _, out = judged(shared_dir / PDF)
    located = [p for a in out for p in a.passages]
    assert located and all(re.fullmatch(r"page \d+", p.where) for p in located)


def test_checklist_only_check_says_how_many_answers_could_not_be_checked(shared_dir):
    run = cli("check", str(shared_dir / CHECKLIST_ONLY))
    assert run.returncode == 0, run.stderr
    text = " ".join(run.stdout.split())
    n = re.search(r"(\d+) of (\d+) answers could not be checked: only the checklist was read", text)
    assert n, text[-600:]
    doc = json.loads(cli("check", str(shared_dir / CHECKLIST_ONLY), "--json").stdout)
    # every answer not contradicted by the checklist itself is unverified: nothing could support it
    assert doc["states"]["unverified"] == int(n.group(1)) == int(n.group(2)) - doc["states"]["contradicted"]
    assert doc["states"]["supported"] == 0 and f"{n.group(1)} unverified" in text
    assert sum(doc["states"].values()) == len(doc["items"])
    assert all(i["state"] in ("unverified", "contradicted") and i["passages"] == [] for i in doc["items"])
    assert all(i["location"].startswith("AIQ-Kitware") for i in doc["items"] if i["answer"])


def test_check_json_and_table_say_the_state_of_every_answer(shared_dir):
    doc = json.loads(cli("check", str(shared_dir / PAPER), "--json").stdout)
    assert {i["state"] for i in doc["items"]} == {"contradicted", "supported", "unverified"}
    assert doc["states"] == {s: sum(i["state"] == s for i in doc["items"])
                             for s in ("contradicted", "supported", "unverified")}
    supported = next(i for i in doc["items"] if i["state"] == "supported")
    assert supported["passages"][0]["quote"] and supported["passages"][0]["where"]
    assert supported["justification"] and supported["location"]
    table = " ".join(cli("check", str(shared_dir / PAPER)).stdout.split())
    assert f"{doc['states']['unverified']} unverified" in table and "supported" in table


# -- records: the columns at the end, read back, and older files still read -------------------------------


def test_records_keep_state_and_passages_and_older_files_derive_the_state(shared_dir, tmp_path):
    paper, out = judged(shared_dir / PAPER)
    rows = records_from_assessments("s1", "G", paper, out, case="G", scored_at="")
    write_records(rows, tmp_path / "records.csv", tmp_path / "records.jsonl")
    header = (tmp_path / "records.csv").read_text().splitlines()[0].split(",")
    assert header[-5:] == ["state", "passages", "context_share", "reader", "appeal"]  # reader: 42, appeal: 44
    for name in ("records.csv", "records.jsonl"):
        back = [r for group in Ledger(tmp_path / name).submissions() for r in group]
        assert [(r.state, r.passages) for r in back] == [(r.state, r.passages) for r in rows]
    # a records file written before the columns existed: the state is derived, nothing refused
    with (tmp_path / "records.csv").open() as fh:
        old = [{k: v for k, v in row.items() if k not in ("state", "passages")} for row in csv.DictReader(fh)]
    with (tmp_path / "old.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(old[0]))
        writer.writeheader()
        writer.writerows(old)
    back = [r for group in Ledger(tmp_path / "old.csv").submissions() for r in group]
    for r in back:
        assert r.passages == []
        assert r.state is (State.CONTRADICTED if not r.c else State.UNVERIFIED)


# -- the two blind spots -----------------------------------------------------------------------------------

BODY = ("1 Introduction\n\nWe study calibration.\n\n2 Experiments\n\nAll models are trained on 8 NVIDIA A100 GPUs"
        " for 12 hours in total.\n\nWe report the mean and standard deviation over 5 seeds; error bars show"
        " the standard error. Table 1: Accuracy (± std).\n\n3 Theory\n\nTheorem 1. The estimator is"
        " consistent. Proof. By the law of large numbers.\n")


def judge(qid: str, answer: Answer, justification: str, body: str = BODY):
    it = ChecklistItem.for_question(SPEC.question(qid), answer, justification)
    paper = Paper(source="p.tex", format="latex", body=body, checklist=Checklist(id=SPEC.id, items=[it]),
                  places=[(0, "p.tex:10"), (body.find("All models"), "p.tex:20")])
    return asyncio.run(HeuristicAssessor().assess_item(paper, it))


@pytest.mark.parametrize("body", [BODY, ""])
def test_a_yes_denying_its_subject_is_contradicted_whatever_follows(body):
    for qid, just in [("7", "The paper does not report error bars, but the gains are consistent across tasks."),
                      ("12", "The current paper does not use any existing assets, but we cite the papers we build on."),
                      ("3", "There are no theoretical results; the analysis in Section 2 is empirical.")]:
        res = judge(qid, Answer.YES, just, body)
        assert not res.correct and res.state is State.CONTRADICTED and "says the opposite" in res.must_fix[0], just
    # a denial restricted to a part of the subject is a partial gap: the Yes stands
    for qid, just in [("7", "We do not report error bars for the ablation; Section 2 gives standard deviations."),
                      ("12", "The raw datasets do not have licenses while the python packages do (Appendix A).")]:
        assert judge(qid, Answer.YES, just, body).correct, just


# A denial of a kind of the subject (its qualifier) is not a denial of the subject: the compute it qualifies
# is presupposed. The subject itself denied, however worded, still contradicts the Yes.
HONEST_COMPUTE = [
    "No multi-GPU or cluster compute was used.",
    "Training took about 5 hours on one RTX 3090; no multi-GPU or cluster compute was used.",
    "We did not use distributed or cloud compute: every run finished within an hour on a laptop CPU.",
    "We did not use cluster or multi-GPU compute.",
    "There is no GPU compute involved; everything runs on a CPU in minutes (Section 4).",
    "We did not use multiple GPUs; each model trains in 2 hours on a single V100 (Appendix B).",
    "No compute was needed beyond a single workstation.",
    "No compute other than one desktop machine was used (Section 5).",
]
DENYING_COMPUTE = [
    "The paper does not report compute resources.",
    "No compute resources are reported, but the method is cheap.",
    "We do not describe the computational resources; the method is cheap anyway.",
    "We do not report how much compute was used.",
    "The paper reports no run times or hardware.",
]


@pytest.mark.parametrize("body", [BODY, ""])
def test_a_yes_denying_a_kind_of_compute_is_not_contradicted_but_one_denying_compute_is(body):
    for just in HONEST_COMPUTE:
        res = judge("8", Answer.YES, just, body)
        assert res.state is not State.CONTRADICTED and not any("opposite" in m for m in res.must_fix), just
    for just in DENYING_COMPUTE:
        res = judge("8", Answer.YES, just, body)
        assert res.state is State.CONTRADICTED and "says the opposite" in res.must_fix[0], just


@pytest.mark.parametrize("body", [BODY, ""])
def test_a_denial_of_the_experiments_denies_what_only_experiments_have(body):
    # settings, error bars, compute and what reproduces the results exist only with experiments
    for qid, just in [("4", "The work has no experiments, but the framework is documented in Section 3."),
                      ("4", "We do not give the details needed to reproduce our numbers."),
                      ("8", "This paper is a theoretical study, and does not include experiments."),
                      ("6", "Our work proposes a taxonomy and has no experiments; the categories are in Table 1.")]:
        res = judge(qid, Answer.YES, just, body)
        assert res.state is State.CONTRADICTED and "says the opposite" in res.must_fix[0], (qid, just)
    # code and data are artefacts a paper can release without experiments: the Yes rests on the repository
    for just in ["There is no experimental evaluation, but the full implementation is at https://github.com/x/y.",
                 "The paper runs no experiments; our simulator and its data are released in the supplement."]:
        res = judge("5", Answer.YES, just, body)
        assert res.state is not State.CONTRADICTED and not any("opposite" in m for m in res.must_fix), just
    # the code itself denied still is
    res = judge("5", Answer.YES, "We do not release our code, but the method is simple to implement.", body)
    assert res.state is State.CONTRADICTED and "says the opposite" in res.must_fix[0]


def _checklist_with_compute_answer(tmp_path: Path, shared_dir: Path, answer: str, justification: str) -> Path:
    """The shared checklist-only file with its compute question answered as given."""
    text = (shared_dir / CHECKLIST_ONLY).read_text()
    start = text.index("{\\bf Experiments compute resources}")
    end = text.index("\\item[] Guidelines:", start)
    item = re.sub(r"\\answer\w+\{\}", lambda _: f"\\answer{answer}{{}}", text[start:end], count=1)
    item = re.sub(r"(Justification:).*", lambda m: f"{m.group(1)} {justification}\n", item, count=1, flags=re.S)
    out = tmp_path / "checklist.tex"
    out.write_text(text[:start] + item + text[end:])
    return out


@pytest.mark.parametrize(("justification", "contradicted"), [
    (HONEST_COMPUTE[0], False), (HONEST_COMPUTE[2], False), (HONEST_COMPUTE[6], False),
    (DENYING_COMPUTE[0], True), (DENYING_COMPUTE[3], True),
])
def test_check_on_a_real_checklist_reads_a_denied_qualifier_apart_from_a_denied_subject(
        shared_dir, tmp_path, justification, contradicted):
    path = _checklist_with_compute_answer(tmp_path, shared_dir, "Yes", justification)
    run = cli("check", str(path), "--json")
    assert run.returncode == 0, run.stderr
    item = next(i for i in json.loads(run.stdout)["items"] if "compute" in i["justification"].lower()
                and i["answer"] == "Yes")
    assert item["justification"].strip() == justification
    assert (item["state"] == "contradicted") is contradicted, item["review"]
    assert ("says the opposite" in item["review"]) is contradicted


def test_a_no_the_body_plainly_refutes_is_contradicted_with_its_passage():
    res = judge("8", Answer.NO, "We do not report the compute resources.")
    assert not res.correct and res.state is State.CONTRADICTED and "plainly" not in res.review
    assert "hardware and the run time" in res.must_fix[0]
    assert res.passages[0].where == "p.tex:20" and "A100" in res.passages[0].quote
    # naming the part that is missing is an honest partial gap: a question to the author, not a verdict
    partial = judge("8", Answer.NO, "The GPU type is given, but not the total compute of the project.")
    assert partial.correct
    # without the body's evidence nothing refutes the No
    assert judge("8", Answer.NO, "We do not report the compute resources.", body="1 Intro\n\nWe study it.\n").correct


def test_a_no_whose_justification_says_the_paper_does_it_is_contradicted():
    res = judge("8", Answer.NO, "The paper does mention the compute resources used in Section 2.")
    assert not res.correct and "justification says the paper provides it" in res.must_fix[0]
    assert judge("8", Answer.NO, "The paper mentions the GPU type but not the run time.").correct


# -- the report in a browser ---------------------------------------------------------------------------------


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")
def test_report_shows_the_three_states_and_passages_at_phone_and_desktop_width(shared_dir, tmp_path):
    from playwright.sync_api import sync_playwright

    out = tmp_path / "out"
    run = cli("check", str(shared_dir / PAPER), "--out", str(out))
    assert run.returncode == 0, run.stderr
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
            viewport={"width": 1280, "height": 900})
        try:
            page = context.new_page()
            page.goto((out / "report.html").resolve().as_uri())
            badges = page.locator("article.card [data-state]")
            assert badges.count() == page.locator("article.card").count() >= 15
            shown = set(badges.evaluate_all("els => els.map(e => e.dataset.state)"))
            assert shown == {"contradicted", "supported", "unverified"}
            # each card wears its state: its class and its border say the state its badge says, and an
            # unverified card is neutral grey, never the green of a supported one
            assert page.locator("article.card.contradicted [data-state=contradicted]").count() >= 1
            border = {s: page.locator(f"article.card.{s}").first.evaluate(
                "e => getComputedStyle(e).borderLeftColor") for s in ("contradicted", "supported", "unverified")}
            assert border == {"contradicted": "rgb(179, 38, 30)", "supported": "rgb(26, 127, 55)",
                              "unverified": "rgb(140, 149, 159)"}
            assert page.locator("article.card.unverified .state-meaning").first.inner_text() == \
                "not checked: read it yourself"
            assert page.locator(".chip.correct").count() == 0
            supported = page.locator("article.card:has([data-state=supported])").first
            assert re.fullmatch(r"[\w/.-]+\.tex:\d+", supported.locator(".passage .where").first.inner_text())
            assert supported.locator(".passage q").first.inner_text().strip()
            summary = page.inner_text(".summary")
            assert re.search(r"\d+ unverified", summary) and "offline checks read words, not meaning" in summary
            # the headline names the answers to fix and to read, with file:line, before the score
            assert summary.index("To fix (") < summary.index("To read yourself (") < summary.index("Correctness C")
            assert re.search(r"To read yourself \(\d+ unverified[^\n]*\n[^\n]*checklist\.tex:\d+", summary)
            for width in (375, 1280):
                page.set_viewport_size({"width": width, "height": 900})
                page.screenshot(path=str(ARTIFACTS / f"report-states-{width}.png"), full_page=True)
                assert page.evaluate("document.documentElement.scrollWidth") <= width
                assert supported.locator(".passage").first.is_visible()
                box = supported.locator(".passage").first.bounding_box()
                assert box and box["x"] >= 0 and box["x"] + box["width"] <= width
        finally:
            context.close()


def test_an_appeal_keeps_the_state_in_step_with_c(shared_dir, tmp_path):
    from checklist_eval.challenge.results.appeals import AppliedOverride, with_decisions

    paper, out = judged(shared_dir / PAPER)
    rows = records_from_assessments("s1", "G", paper, out, case="G", scored_at="")
    wrong = next(r for r in rows if r.state is State.CONTRADICTED)
    right = next(r for r in rows if r.state is State.SUPPORTED)
    assert wrong.with_correct(True).state is State.UNVERIFIED  # the appeal, not a passage, settled it
    assert right.with_correct(False).state is State.CONTRADICTED
    assert right.with_correct(True).state is State.SUPPORTED

    # a decision from before answers were digested (no decided_on): applied as it stands
    decision = AppliedOverride(submission_id=wrong.submission_id, role=wrong.role, question_id=wrong.question_id,
                               was_correct=False, correct=True, file="appeal.csv")
    decided = with_decisions(rows, {wrong.key: decision})
    assert next(r for r in decided if r.key == wrong.key).state is State.UNVERIFIED
