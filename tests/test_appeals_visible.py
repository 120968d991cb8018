"""Appeals you can see (issue 44, item 5): after ``rescore RESULTS --overrides FILE`` every reader shows
the decision, on the bundled submissions scored by ``batch`` with the default (offline) assessor, through
the CLI as typed.

The appealed record stands with the decision's verdict and state and says "overridden by appeal" (the
records exports, result.json, results.sqlite's ``decided_records``, the report card, which no longer says
"[must fix]"); ``rescore --overrides`` says what each decision did and which S moved; both leaderboards
mark the appealed rows; ``appeals.html`` (and ``serve --results``' ``/results/appeals``) lists every
decision; a decision that changes nothing is recorded and says so. The browser test keeps screenshots
of the appeals page at 375 and 1280 px in ``test-artifacts/serve``.

The questions appealed are picked from what the assessor said (one it judged wrong with a must-fix, one
it judged right), so the tests hold whatever verdicts the offline rules give the fixtures.
"""

from __future__ import annotations

import csv
import json
from html import unescape
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from cli_runner import CliRun, run_cli
import pytest
from helpers import check_html

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str | Path, cwd: Path | None = None) -> CliRun:
    return run_cli(*[str(a) for a in args], cwd=cwd or ROOT)


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("appeals")
    shutil.copytree(ROOT / "fixtures" / "submissions", tmp / "subs")
    run = cli("batch", tmp / "subs", "--out", tmp / "results", "--quiet")
    assert run.returncode == 0, run.stderr
    return tmp


@pytest.fixture
def work(scored, tmp_path) -> Path:
    shutil.copytree(scored, tmp_path, dirs_exist_ok=True)
    return tmp_path


def records(results: Path) -> dict[tuple[str, str, str], dict]:
    rows = (json.loads(line) for line in (results / "records.jsonl").read_text().splitlines())
    return {(r["submission_id"], r["role"], r["question_id"]): r for r in rows}


def targets(results: Path) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
    """(an answered record the assessor judged wrong, with a must-fix; one it judged right), both of
    team-alpha (GAT), so the first moves S."""
    recs = records(results)
    wrong = next(k for k, r in recs.items() if k[0] == "team-alpha" and not r["correct"]
                 and r["answer"] in ("Yes", "No", "NA") and "[must fix]" in r["review"])
    right = next(k for k, r in recs.items() if k[0] == "team-alpha" and r["correct"] and k[1] == "G")
    return wrong, right


def overrides(path: Path, *rows: tuple[tuple[str, str, str], int, str]) -> Path:
    lines = ["submission_id,role,question_id,correct,note"] + [f"{k[0]},{k[1]},{k[2]},{c},{note}" for k, c, note in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def board(results: Path) -> dict[str, float]:
    run = cli("leaderboard", results, "--json")
    assert run.returncode == 0, run.stderr
    return {r["submission_id"]: r["S"] for r in json.loads(run.stdout)}


def key_text(k: tuple[str, str, str]) -> str:
    return "/".join(k)


# ------------------------------------------------------------------------------------ the record's state


def test_an_appealed_record_stands_with_the_decision_in_every_export_and_the_database(work):
    results = work / "results"
    wrong, _ = targets(results)
    appeal = overrides(work / "appeal.csv", (wrong, 1, "granted: Table 2 defines them"))
    assert cli("rescore", results, "--overrides", appeal).returncode == 0

    def check(row: dict) -> None:
        assert str(row["correct"]) in ("1", "True", "true"), row["correct"]
        assert row["state"] == "unverified"  # the decision, not a passage, settled it
        assert row["appeal"].startswith("overridden by appeal: incorrect \u2192 correct (appeal.csv, ")
        assert row["appeal"].endswith(": granted: Table 2 defines them")

    check(records(results)[wrong])
    with (results / "records.csv").open(newline="") as fh:
        check(next(r for r in csv.DictReader(fh) if (r["submission_id"], r["role"], r["question_id"]) == wrong))
    result = json.loads((results / "submissions" / wrong[0] / "result.json").read_text())
    check(next(r for r in result["records"] if (r["submission_id"], r["role"], r["question_id"]) == wrong))
    # the others keep the assessor's verdict and no mark
    assert all(r["appeal"] == "" for k, r in records(results).items() if k != wrong)

    # results.sqlite: the view shows every record as the decisions leave it, as the exports do
    db = sqlite3.connect(results / "results.sqlite")
    try:
        view = db.execute("SELECT submission_id, role, question_id, correct, state, appeal, assessed_correct "
                          "FROM decided_records WHERE run_id = (SELECT max(id) FROM runs)").fetchall()
    finally:
        db.close()
    exported = records(results)
    assert len(view) == len(exported)
    for sid, role, qid, correct, state, appeal_mark, assessed in view:
        r = exported[(sid, role, qid)]
        assert (bool(correct), state) == (r["correct"], r["state"]) and r["appeal"].startswith(appeal_mark)
        if (sid, role, qid) == wrong:
            assert (appeal_mark, assessed) == ("overridden by appeal", 0)


def test_a_folder_imported_from_its_exports_keeps_the_assessor_s_verdict_beside_the_decision(work):
    """results.sqlite lost: the exports (which show the appealed record as it stands) are imported again,
    and the database holds the assessor's verdict with the decision applied on top, as before."""
    results = work / "results"
    wrong, _ = targets(results)
    assessed = records(results)[wrong]
    assert cli("rescore", results, "--overrides", overrides(work / "appeal.csv", (wrong, 1, "granted"))).returncode == 0
    appealed = board(results)
    for name in ("results.sqlite", "results.sqlite-wal", "results.sqlite-shm", "exports.json"):
        (results / name).unlink(missing_ok=True)
    assert board(results) == appealed  # imported, the decision applied
    db = sqlite3.connect(results / "results.sqlite")
    try:
        row = db.execute("SELECT correct, state, appeal, assessed_correct, assessed_state FROM decided_records "
                         "WHERE submission_id = ? AND role = ? AND question_id = ?", wrong).fetchone()
    finally:
        db.close()
    assert row == (1, "unverified", "overridden by appeal", 0, assessed["state"])


def test_the_report_card_of_an_overridden_answer_no_longer_says_must_fix(work):
    results = work / "results"
    wrong, _ = targets(results)
    assert cli("rescore", results, "--overrides", overrides(work / "appeal.csv", (wrong, 1, "granted"))).returncode == 0
    html = (results / "submissions" / wrong[0] / "report.html").read_text()
    check_html(html)
    card = re.search(rf'<article class="card [a-z]+" [^>]*id="q-{wrong[1]}-{wrong[2]}">(.*?)</article>', html, re.S)
    assert card, "no card for the appealed question"
    text = card.group(1)
    assert '<span class="chip override">overridden by appeal</span>' in text
    assert "[must fix]" not in text and "[overruled by appeal]" in text
    assert "Review (the assessor&#39;s, overruled by appeal)" in text
    assert 'data-state="unverified"' in text and "counts as correct (c_i = 1)" in text


# ------------------------------------------------------------------------------------------- rescore


def test_rescore_overrides_prints_what_moved_and_what_did_not(work):
    results = work / "results"
    wrong, _ = targets(results)
    before = board(results)
    appeal = overrides(work / "appeal.csv", (wrong, 1, "granted"))
    run = cli("rescore", results, "--overrides", appeal, "--json")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert list(doc) == ["submissions", "appeals", "moves"]  # the scores first, as before; two fields added
    after = {s["submission_id"]: s["S"] for s in doc["submissions"]}
    assert after == board(results) and after[wrong[0]] > before[wrong[0]]
    assert doc["appeals"] == [{"submission_id": wrong[0], "role": wrong[1], "question_id": wrong[2], "before": False,
                               "correct": True, "changes_nothing": False, "recorded": True}]
    assert {m["submission_id"]: (m["S_before"], m["S"], m["moved"]) for m in doc["moves"]} == {
        sid: (before[sid], after[sid], before[sid] != after[sid]) for sid in before}

    # the table, then each decision, then the scores that moved and those that did not
    appeal = overrides(work / "appeal2.csv", (wrong, 0, "second look"))
    run = cli("rescore", results, "--overrides", appeal)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "Decisions of appeal2.csv:" in lines
    assert f"  {key_text(wrong)}: correct \u2192 incorrect (the assessor's verdict again, by appeal)" in lines
    assert f"S moved: {wrong[0]} {after[wrong[0]]:.4f} \u2192 {before[wrong[0]]:.4f}" in lines
    still = next(ln for ln in lines if ln.startswith("S did not move: "))
    assert all(f"{sid} {before[sid]:.4f}" in still for sid in before if sid != wrong[0])
    # without --overrides the JSON is what it was
    assert list(json.loads(cli("rescore", results, "--json").stdout)) == ["submissions"]


def test_a_decision_that_changes_nothing_is_recorded_and_says_so(work):
    results = work / "results"
    wrong, right = targets(results)
    before = board(results)
    appeal = overrides(work / "appeal.csv", (right, 1, "checked: it is right"), (wrong, 0, "stands"))
    run = cli("rescore", results, "--overrides", appeal)
    assert run.returncode == 0, run.stderr
    assert f"  changes nothing: {key_text(right)} stays correct, as assessed (recorded)" in run.stdout.splitlines()
    assert f"  changes nothing: {key_text(wrong)} stays incorrect, as assessed (recorded)" in run.stdout.splitlines()
    assert "No score moved." in run.stdout and board(results) == before
    db = sqlite3.connect(results / "results.sqlite")
    try:
        kept = db.execute("SELECT submission_id, role, question_id, was_correct, correct, note FROM appeals").fetchall()
    finally:
        db.close()
    assert kept == [(*right, 1, 1, "checked: it is right"), (*wrong, 0, 0, "stands")]
    assert records(results)[right]["appeal"].startswith("confirmed by appeal (changes nothing): correct (appeal.csv, ")
    card = re.search(rf'id="q-{wrong[1]}-{wrong[2]}">(.*?)</article>',
                     (results / "submissions" / wrong[0] / "report.html").read_text(), re.S)
    assert card and '<span class="chip override">confirmed by appeal</span>' in card.group(1)
    assert "<dd>incorrect, confirmed by appeal.csv on " in card.group(1) and "(stands)</dd>" in card.group(1)
    # the same file again: already recorded, nothing added
    run = cli("rescore", results, "--overrides", appeal)
    assert f"  changes nothing: {key_text(right)} stays correct, by an earlier appeal (already recorded)" in \
        run.stdout.splitlines()
    assert json.loads(cli("rescore", results, "--overrides", appeal, "--json").stdout)["appeals"][0]["recorded"] is False


def test_a_lone_ledger_rescored_with_overrides_says_what_moved_and_keeps_nothing(work):
    ledger = work / "ledger.csv"
    shutil.copy(work / "results" / "records.csv", ledger)  # no results.sqlite beside it
    wrong, right = targets(work / "results")
    run = cli("rescore", ledger, "--overrides", overrides(work / "appeal.csv", (wrong, 1, ""), (right, 1, "")))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert f"  {key_text(wrong)}: incorrect \u2192 correct (overridden by appeal)" in lines
    assert f"  changes nothing: {key_text(right)} stays correct, as assessed (not kept: a lone ledger)" in lines
    assert any(ln.startswith(f"S moved: {wrong[0]} ") for ln in lines)


# ---------------------------------------------------------------------------------------- leaderboards


def test_both_leaderboards_mark_the_appealed_rows(work):
    results = work / "results"
    wrong, _ = targets(results)
    assert cli("rescore", results, "--overrides", overrides(work / "appeal.csv", (wrong, 1, "granted"))).returncode == 0
    run = cli("leaderboard", results, "--csv", work / "board.csv", "--html", work / "site" / "board.html")
    assert run.returncode == 0, run.stderr
    row = next(ln for ln in run.stdout.splitlines() if f" {wrong[0]} *" in ln)
    assert re.search(r"│\s+\d+ │", row)
    mark = f"* appealed: {wrong[0]} ({wrong[1]}:{wrong[2]}); every decision: {results / 'appeals.html'}"
    assert mark in run.stdout.splitlines()
    assert sum(" *" in ln for ln in run.stdout.splitlines() if ln.startswith("│")) == 1
    for path in (work / "board.csv", results / "leaderboard.csv"):
        with path.open(newline="") as fh:
            got = list(csv.DictReader(fh))
        assert list(got[0])[-2:] == ["appeals", "status"]
        assert {r["submission_id"]: r["appeals"] for r in got} == {
            sid: (f"{wrong[1]}:{wrong[2]}" if sid == wrong[0] else "") for sid in (r["submission_id"] for r in got)}
    # the pages: the appealed row wears the mark, linking the appeals page beside the results
    for page, href in ((work / "site" / "board.html", "../results/appeals.html"),
                       (results / "leaderboard.html", "appeals.html")):
        html = page.read_text()
        check_html(html)
        rows = re.findall(r"<tr><td class=\"num rank\">.*?</tr>", html, re.S)
        marked = [r for r in rows if 'class="chip appealed"' in r]
        assert len(marked) == 1 and f">{wrong[0]}</a>" in marked[0] and f'href="{href}"' in marked[0]


# ------------------------------------------------------------------------------------- the appeals page


def test_the_appeals_page_lists_every_decision_with_its_note(work):
    results = work / "results"
    wrong, right = targets(results)
    assert cli("rescore", results, "--overrides", overrides(work / "first.csv", (wrong, 1, "granted <b>now</b>"),
                                                             (right, 1, "checked"))).returncode == 0
    assert cli("rescore", results, "--overrides", overrides(work / "second.csv", (wrong, 0, "second look"))).returncode == 0
    html = (results / "appeals.html").read_text()
    parsed = check_html(html)
    assert "b" not in parsed.tags and "granted &lt;b&gt;now&lt;/b&gt;" in html  # a note is text
    cards = re.findall(r'<article class="card decision[^"]*" id="d-(\d)">(.*?)</article>', html, re.S)
    assert [n for n, _ in cards] == ["3", "2", "1"]  # newest first
    text = {n: " ".join(unescape(re.sub(r"<[^>]+>", " ", body)).split()) for n, body in cards}
    q = f"{wrong[0]} · {wrong[1]} question {wrong[2]}"
    assert q in text["3"] and "correct → incorrect" in text["3"] and "second look" in text["3"]
    assert f"{q} : {records(results)[wrong]['question_title']}" in text["3"]  # the question named by its title
    assert "second.csv" in text["3"] and re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", text["3"])
    assert q in text["1"] and "incorrect → correct" in text["1"] and "superseded by a later decision" in text["1"]
    assert "changes nothing: stays correct" in text["2"] and "stands" in text["2"]
    assert "3 decisions on 1 submission, newest first: 2 changed a verdict, 1 changed nothing; 2 stand." in \
        " ".join(re.sub(r"<[^>]+>", " ", html).split())
    # each decision links the card of its answer in the submission's report
    assert f'href="submissions/{wrong[0]}/report.html#q-{wrong[1]}-{wrong[2]}"' in cards[0][1]
    assert (results / "submissions" / wrong[0] / "report.html").is_file()
    assert "appeals.html" in json.loads((results / "exports.json").read_text())["files"]


@pytest.fixture(scope="module")
def served(scored, tmp_path_factory):
    """A copy of the batch with two appeals on it, served by ``serve --results`` on 127.0.0.1."""
    work = tmp_path_factory.mktemp("served")
    shutil.copytree(scored, work, dirs_exist_ok=True)
    results = work / "results"
    wrong, right = targets(results)
    long_note = ("granted after reading Table 2 and its caption again: the error bars are the standard deviation "
                 "over five seeds, which the justification points to")
    assert cli("rescore", results, "--overrides", overrides(work / "appeal.csv", (wrong, 1, f'"{long_note}"'),
                                                             (right, 1, "checked: it is right"))).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", "serve", "--port", "0", "--results", str(results)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    match = re.search(r"http://127\.0\.0\.1:\d+", proc.stdout.readline() if proc.stdout else "")
    if match is None:
        proc.kill()
        pytest.fail(f"serve did not start: {proc.stderr.read() if proc.stderr else ''}")
    try:
        yield match.group(0), results, wrong, right
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_the_appeals_page_reads_at_375_and_1280_px_in_a_browser(served):
    from test_serve import ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, _need_chromium

    _need_chromium()
    from playwright.sync_api import sync_playwright

    base, results, wrong, right = served
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            # from the leaderboard's mark to the page, and from a decision to its question
            page.goto(base + "/results/")
            row = page.locator("table.leaderboard tr", has_text=wrong[0])
            row.locator("a.chip.appealed").click()
            page.wait_for_url("**/results/appeals")
            check_html(page.content())
            cards = page.locator("article.card.decision")
            assert cards.count() == 2
            assert "changes nothing: stays correct" in cards.nth(0).inner_text()
            assert "incorrect → correct" in cards.nth(1).inner_text()
            assert "standard deviation over five seeds" in cards.nth(1).locator("dd.note").inner_text()
            title = records(results)[wrong]["question_title"]
            assert cards.nth(1).locator("h3").inner_text() == f"{wrong[0]} · {wrong[1]} question {wrong[2]}: {title}"
            for width, name in ((375, "appeals-375.png"), (1280, "appeals-1280.png")):
                page.set_viewport_size({"width": width, "height": 900})
                page.screenshot(path=str(ARTIFACTS / name), full_page=True)
                assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing sideways
                for i in range(cards.count()):
                    box = cards.nth(i).bounding_box()
                    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width
                chip = cards.nth(1).locator(".chip").evaluate(
                    "e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]")
                assert chip == ["rgb(10, 48, 105)", "rgb(221, 244, 255)"]  # dark blue on pale blue: readable
            page.set_viewport_size({"width": 1280, "height": 900})
            cards.nth(1).locator("h3 a").click()
            page.wait_for_url(f"**/results/s/{wrong[0]}/{wrong[1]}/{wrong[2]}")
            assert page.locator(".chip.override").inner_text() == "overridden by appeal"
            assert "[must fix]" not in page.inner_text(".review")
            # the static page, the export beside leaderboard.html, reads the same
            page.goto((results / "appeals.html").as_uri())
            assert page.locator("article.card.decision").count() == 2
            page.locator("#back").click()
            assert page.url.endswith("/leaderboard.html")
        finally:
            browser.close()


def test_a_decision_on_an_answer_since_replaced_is_listed_as_not_applied(work):
    """A re-upload changed the answer an appeal was decided on: the page keeps the decision and says it
    is not applied; the leaderboard no longer marks the row."""
    results = work / "results"
    first = ("team-beta", "G", "1")
    assert cli("rescore", results, "--overrides", overrides(work / "appeal.csv", (first, 0, "upheld"))).returncode == 0
    paper = work / "subs" / "team-beta" / "genuine_sga" / "checklist.tex"
    text = paper.read_text()
    paper.write_text(text.replace("\\item[] Answer: \\answerYes{}", "\\item[] Answer: \\answerNo{}", 1))
    assert cli("batch", work / "subs", "--out", results, "--quiet").returncode == 0  # the re-upload
    html = unescape(re.sub(r"<[^>]+>", " ", (results / "appeals.html").read_text()))
    assert "team-beta · G question 1" in html and "not applied: the answer was replaced after it" in html
    assert records(results)[first]["appeal"] == ""
    with (results / "leaderboard.csv").open(newline="") as fh:
        assert all(r["appeals"] == "" for r in csv.DictReader(fh))
