"""``checklist-eval serve`` driven as people use it: headless Chromium (Debian's package, driven by
Playwright with no browser download) against the server on 127.0.0.1.

An author uploads a real PDF and a LaTeX zip and reads the report (must-fix list first, a card per
question, readable at 375 px; screenshots kept in ``test-artifacts/serve``); an oversized upload is
answered 413, a hostile one gets one clear line and the server goes on. An organizer walks from the
leaderboard to a submission, an appealed question and the model call behind its verdict.

Without Chromium the test skips on a developer's machine and FAILS in CI (``CI`` set): `.ci/run`
installs it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from cli_runner import run_cli
import pytest
from helpers import check_html

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).is_file()), None)
ARTIFACTS = Path(os.environ.get("CHECKLIST_EVAL_ARTIFACTS", ROOT / "test-artifacts")) / "serve"
KEY = "sk-serve-test-key-0123456789abcdef"
MAX_UPLOAD_MB = 8
PDF = Path("corpus/anchor-sample/papers/1_adversarial_MetaAlbum/adversarial_MetaAlbum.pdf")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
UNICODE_TEAM = "Équipe Zoé"


def _need_chromium() -> None:
    if CHROMIUM is not None:
        return
    if os.environ.get("CI"):
        pytest.fail("no chromium in CI: .ci/run installs Debian's chromium (apt-get install chromium)")
    pytest.skip("no chromium installed (apt-get install chromium)")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    _need_chromium()
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, headless=True,
                                                       args=CHROMIUM_FLAGS, viewport={"width": 1280, "height": 900})
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="module")
def mock_endpoint():
    from checklist_eval.testing import MockServer

    with MockServer() as server:
        yield server


@pytest.fixture(scope="module")
def appealed_results(tmp_path_factory, mock_endpoint):
    """The fixture submissions scored by the LLM assessor against the loopback endpoint, then one
    verdict appealed with ``rescore --overrides``."""
    out = tmp_path_factory.mktemp("served") / "results"
    subs = out.parent / "submissions"
    shutil.copytree(ROOT / "fixtures" / "submissions", subs)
    shutil.copytree(subs / "team-gamma", subs / UNICODE_TEAM)  # a team named with accents
    (subs / "broken-team").mkdir()
    (subs / "broken-team" / "genuine_paper.tex").write_text("not a paper at all\n")  # fails: listed, not scored
    env = {**os.environ, "CE_TEST_KEY": KEY}
    llm = ["--assessor", "llm", "--model", "gpt-4o-mini", "--base-url", mock_endpoint.base_url,
           "--api-key-env", "CE_TEST_KEY"]
    run = run_cli("batch", str(subs), "--out", str(out), *llm, env=env)
    assert run.returncode == 4, run.stderr  # the batch ran; one submission failed
    records = list(json.loads(line) for line in (out / "records.jsonl").read_text().splitlines())
    target = next(r for r in records if r["submission_id"] == "team-alpha" and r["role"] == "A" and not r["correct"]
                  and r["answer"] in ("Yes", "No", "NA"))
    appeals = out.parent / "appeals.csv"
    appeals.write_text(f"submission_id,role,question_id,correct,note\nteam-alpha,A,{target['question_id']},1,"
                       "appeal granted: see Table 2\n")
    run = run_cli("rescore", str(out), "--overrides", str(appeals))
    assert run.returncode == 0, run.stderr
    return out, target


@pytest.fixture(scope="module")
def server(appealed_results, mock_endpoint):
    """``checklist-eval serve`` as typed, on a free port of 127.0.0.1, offering the loopback model."""
    results, _ = appealed_results
    env = {**os.environ, "CE_TEST_KEY": KEY}
    proc = subprocess.Popen(
        [sys.executable, "-m", "checklist_eval", "serve", "--port", "0", "--max-upload-mb", str(MAX_UPLOAD_MB),
         "--results", str(results), "--assessor", "llm", "--model", "gpt-4o-mini", "--base-url",
         mock_endpoint.base_url, "--api-key-env", "CE_TEST_KEY", "--no-cache"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline() if proc.stdout else ""
    match = re.search(r"http://127\.0\.0\.1:\d+/", line)
    if match is None:
        proc.kill()
        pytest.fail(f"serve did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    try:
        yield match.group(0).rstrip("/")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def latex_zip(tmp_path: Path) -> Path:
    path = tmp_path / "paper.zip"
    folder = ROOT / "fixtures" / "papers" / "adversarial"
    with zipfile.ZipFile(path, "w") as zf:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(folder).as_posix())
    return path


def hostile_zip(tmp_path: Path) -> Path:
    """A LaTeX project whose title and justification carry markup: the report must show it as text."""
    folder = ROOT / "fixtures" / "papers" / "adversarial"
    path = tmp_path / "hostile.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for f in sorted(folder.rglob("*")):
            if not f.is_file():
                continue
            text = f.read_text(encoding="utf-8")
            text = re.sub(r"\\title\{", lambda m: m.group(0) + HOSTILE.replace("#", "\\#"), text, count=1)
            text = text.replace("Justification: ", "Justification: " + HOSTILE + " ", 1)
            zf.writestr(f.relative_to(folder).as_posix(), text)
    return path


def zip_bomb(tmp_path: Path) -> Path:
    """One member of 40 MB of zeros (ratio ~1000): refused from its header, never unpacked."""
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        with zf.open("main.tex", "w", force_zip64=True) as member:
            block = b"\0" * (1 << 20)
            for _ in range(40):
                member.write(block)
    return path


def upload(page, base: str, *files: Path, assessor: str = "heuristic"):
    page.goto(base + "/")
    page.set_input_files("#file", [str(f) for f in files])
    page.select_option("#assessor", assessor)
    with page.expect_response(lambda r: r.url.endswith("/check") and r.request.method == "POST") as sent:
        page.click("#submit")
    return sent.value


def wait_for_report(page) -> None:
    page.wait_for_selector("#must-fix, #error", timeout=180_000)


def assert_actionable_report(page, where: str) -> list[str]:
    """The lists to fix and to read first, each entry linking a card in that state (contradicted,
    unverified); a card per question with its place in the author's files; no spending line for the
    offline assessor."""
    cards = page.locator("article.card")
    assert cards.count() >= 15
    for tone, state in (("bad", "contradicted"), ("neutral", "unverified")):
        links = page.locator(f"ul.mustfix.tone-{tone} a")
        assert links.count() == page.locator(f"article.card.{state}").count()
        for i in range(links.count()):
            anchor = links.nth(i).get_attribute("href")
            assert anchor and anchor.startswith("#")
            assert page.locator(f"article.card.{state}{anchor}").count() == 1
    assert page.locator("ul.mustfix a").count() >= 1
    # the summary comes before the first card
    assert page.evaluate("document.querySelector('.summary').compareDocumentPosition("
                         "document.querySelector('article.card')) & Node.DOCUMENT_POSITION_FOLLOWING")
    places = page.locator("dd.where").all_inner_texts()
    assert places and all(re.fullmatch(where, p) for p in places), places[:3]
    return places


def screenshots(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (375, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}-first-screen.png"))
        if width == 375:  # nothing wider than a phone: no sideways scrolling
            assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.set_viewport_size({"width": 1280, "height": 900})


@pytest.mark.shared_material
def test_author_uploads_a_pdf_and_a_latex_zip_and_reads_the_report(browser, server, shared_dir, tmp_path):
    page = browser.new_page()
    assert "sk-serve" not in page.goto(server + "/").text()  # the key never reaches the browser
    assert page.locator("#assessor option").all_inner_texts() == ["offline checks (no model)",
                                                                  "the model gpt-4o-mini"]
    response = upload(page, server, shared_dir / PDF)
    assert response.status == 303
    report_url = page.url
    assert re.fullmatch(re.escape(server) + r"/check/[A-Za-z0-9_-]{24}", report_url)
    wait_for_report(page)
    assert_actionable_report(page, r"page \d+")
    assert "Model calls" not in page.inner_text("body")
    screenshots(page, "pdf-report")
    check_html(page.content())

    upload(page, server, latex_zip(tmp_path))
    wait_for_report(page)
    places = assert_actionable_report(page, r"checklist\.tex:\d+")
    first = page.locator("article.card").first
    assert first.locator(".chip").first.inner_text() in ("supported", "unverified", "contradicted")
    # the report leads on: to another upload, and to its own JSON (check --json's document)
    report_url = page.url
    assert page.locator("#next a", has_text="Check another paper").get_attribute("href") == "/"
    page.locator("#next a", has_text="This report as JSON").click()
    document = json.loads(page.inner_text("body"))
    assert page.url == report_url.replace("/check/", "/api/check/") and set(document["states"]) == \
        {"contradicted", "supported", "unverified"}
    page.go_back()
    assert places[0] == "checklist.tex:7"  # where question 1's \answerYes{} is
    screenshots(page, "latex-report")

    # with the model: the loopback endpoint is asked, the report says what it spent, not the key
    upload(page, server, latex_zip(tmp_path), assessor="llm")
    wait_for_report(page)
    body = page.inner_text("body")
    assert "gpt-4o-mini" in body and "Model calls: " in body and KEY not in page.content()
    page.close()


def test_report_shows_hostile_text_as_text(browser, server, tmp_path):
    page = browser.new_page()
    upload(page, server, hostile_zip(tmp_path))
    wait_for_report(page)
    html = page.content()
    parsed = check_html(html)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert page.evaluate("document.querySelectorAll('script, img').length") == 0
    assert HOSTILE in page.inner_text("body")  # shown, as text, in the title and the justification
    page.close()


def test_oversized_and_hostile_uploads_are_refused_in_one_line_and_the_server_goes_on(browser, server, tmp_path):
    page = browser.new_page()
    big = tmp_path / "big.pdf"
    with big.open("wb") as fh:
        fh.write(b"%PDF-1.4\n" + os.urandom((MAX_UPLOAD_MB + 1) * 2**20))
    assert upload(page, server, big).status == 413
    assert f"larger than {MAX_UPLOAD_MB} MB" in page.inner_text("#error")

    upload(page, server, zip_bomb(tmp_path))
    wait_for_report(page)
    message = page.inner_text("#error")
    assert "bomb.zip" in message and "ratio" in message and "/tmp" not in message and len(message.splitlines()) == 1

    fake = tmp_path / "notes.docx"
    fake.write_bytes(b"PK\x03\x04 not a paper")
    assert upload(page, server, fake).status == 415
    assert "not a paper" in page.inner_text("#error")

    assert page.goto(server + "/").status == 200  # still answering
    assert page.goto(server + "/check/not-a-real-id").status == 404
    page.close()


def test_progress_page_says_each_answer_s_evidence_state_as_it_comes(browser, server, mock_endpoint, tmp_path):
    """While the model is asked, the page an author waits on names each judged answer's state in the
    report's words (contradicted / supported / unverified), never the old verdict words."""
    page = browser.new_page()
    mock_endpoint.latency = 1.0  # slow replies: the page is read while some questions wait
    try:
        assert upload(page, server, latex_zip(tmp_path), assessor="llm").status == 303
        url, seen = page.url, None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and page.locator("#must-fix, #error").count() == 0:
            badges = page.locator("ol.progress [data-state]")
            waiting = page.locator("ol.progress .muted").count()
            if badges.count() and waiting:
                seen = (badges.all_inner_texts(), page.inner_text("#status"), page.locator("ol.progress li").count(),
                        page.inner_text("ol.progress"))
                break
            time.sleep(0.2)
            page.goto(url)
    finally:
        mock_endpoint.latency = 0.0
    assert seen is not None, "no page showed some answers judged and some waiting"
    states, status, questions, listed = seen
    assert set(states) <= {"contradicted", "supported", "unverified"}, states
    counts = {s: states.count(s) for s in ("contradicted", "supported", "unverified")}
    assert f"Judged {len(states)} of {questions} questions" in status
    assert "So far " + ", ".join(f"{n} {s}" for s, n in counts.items()) + "." in status
    assert not re.search(r"\b(?:correct|incorrect|unverifiable)\b", listed)
    wait_for_report(page)
    page.close()


def test_json_api_returns_the_check_json_document(browser, server, tmp_path):
    from checklist_eval.summaries import CheckResult

    paper = latex_zip(tmp_path)
    request = browser.request
    sent = request.post(server + "/api/check", multipart={
        "file": {"name": "paper.zip", "mimeType": "application/zip", "buffer": paper.read_bytes()}})
    assert sent.status == 202
    url = server + sent.json()["url"]
    deadline = time.monotonic() + 180
    while (got := request.get(url)).status == 202 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert got.status == 200
    document = got.json()
    assert list(document) == list(CheckResult.model_fields)
    cli = run_cli("check", str(paper), "--json")
    expected = json.loads(cli.stdout)
    assert document["C"] == expected["C"] and document["source"] == "paper.zip"
    assert [(i["id"], i["correct"], i["review"]) for i in document["items"]] == \
        [(i["id"], i["correct"], i["review"]) for i in expected["items"]]
    # each item says its evidence state, the passages it rests on, the justification and where the answer is
    assert [(i["state"], i["passages"], i["justification"]) for i in document["items"]] == \
        [(i["state"], i["passages"], i["justification"]) for i in expected["items"]]
    assert document["states"] == expected["states"] and sum(document["states"].values()) == len(document["items"])
    assert any(i["location"] for i in document["items"])
    assert request.get(server + "/api/check/unknown").status == 404


def test_organizer_walks_from_leaderboard_to_the_call_behind_an_appealed_verdict(browser, server,
                                                                                 appealed_results):
    _, target = appealed_results
    qid = target["question_id"]
    page = browser.new_page()
    page.goto(server + "/results/")
    check_html(page.content())
    # each row counts the submission's unverified answers, the appeal applied, as its page counts them
    listed = page.locator("table.leaderboard tr", has_text="team-alpha").locator("td.unverified").inner_text()
    page.click("text=team-alpha")
    page.wait_for_url("**/results/s/team-alpha")  # and its load event: content() read before it was empty
    assert page.url.endswith("/results/s/team-alpha")
    check_html(page.content())
    tally = re.search(r"\d+ of (\d+) answers judged correct: \d+ supported by a passage of the paper, (\d+)"
                      r" unverified", " ".join(page.inner_text("body").split()))
    assert tally and listed == f"{tally.group(2)} of {tally.group(1)}", listed
    card = page.locator(f"#q-A-{qid}")
    assert card.locator(".chip.override").count() == 1
    assert "appeal granted: see Table 2" in card.inner_text()
    card.locator("a", has_text="the model call behind it").click()
    page.wait_for_url(f"**/results/s/team-alpha/A/{qid}")  # the page loaded, not only its navigation committed
    assert page.url.endswith(f"/results/s/team-alpha/A/{qid}")
    check_html(page.content())
    assert page.inner_text("#verdict").startswith("counts as correct (c_i = 1)")
    # made correct by the appeal, not by a passage of the paper: unverified, never "contradicted" beside "correct"
    assert page.inner_text("dd [data-state]") == "unverified" and page.locator(".chip.correct").count() == 0
    assert re.fullmatch(r"adversarial_sga\.tex:\d+", page.inner_text("dd.where"))
    appeals = page.inner_text("ol >> nth=0")
    assert "incorrect → correct by appeals.csv" in appeals
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "organizer-question-1280.png"), full_page=True)
    page.locator("a", has_text="call ").first.click()
    page.wait_for_url(re.compile(rf"/results/s/team-alpha/A/{qid}/call/\d+$"))
    assert re.search(rf"/results/s/team-alpha/A/{qid}/call/\d+$", page.url)
    check_html(page.content())
    assert '"prompt_tokens"' in page.inner_text("#usage")
    assert page.inner_text("#reply").strip() and (page.text_content("#question") or "").strip()
    # the reply first, on the first screen; the whole prompt folded under it until asked for
    reply, prompt = page.locator("#reply").bounding_box(), page.locator("#prompt").bounding_box()
    assert reply and prompt and reply["y"] < prompt["y"] and reply["y"] < 900
    assert page.locator("#prompt").get_attribute("open") is None and not page.locator("#question").is_visible()
    assert page.inner_text("#outcome") and page.inner_text("#cached").startswith(("yes", "no"))
    assert KEY not in page.content()
    page.screenshot(path=str(ARTIFACTS / "organizer-call-1280.png"), full_page=True)
    page.close()


def test_serve_refuses_a_folder_that_is_not_results(tmp_path):
    run = run_cli("serve", "--results", str(tmp_path))
    assert run.returncode == 2 and "not a batch results folder" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_rescore_redraws_the_report_of_an_appealed_submission(appealed_results):
    results, target = appealed_results
    report = (results / "submissions" / "team-alpha" / "report.html").read_text()
    parsed = check_html(report)
    text = " ".join(" ".join(parsed.text).split())
    assert "incorrect → correct by appeals.csv" in text and "appeal granted: see Table 2" in text
    history = [json.loads(line) for line in (results / "overrides.jsonl").read_text().splitlines()]
    assert [(h["submission_id"], h["role"], h["question_id"], h["correct"]) for h in history] == \
        [("team-alpha", "A", target["question_id"], True)]


def test_upload_bytes_are_counted_as_they_arrive_not_trusted_from_headers(server):
    """A body longer than its Content-Length says cannot slip past the cap (the count is of bytes)."""
    import http.client
    from urllib.parse import urlparse

    url = urlparse(server)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    boundary = "x" * 16
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\n"
            "Content-Type: application/pdf\r\n\r\n").encode()
    conn.putrequest("POST", "/api/check")
    conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    chunk = b"\0" * (1 << 20)
    try:
        conn.send(b"%x\r\n%s\r\n" % (len(head), head))
        for _ in range(MAX_UPLOAD_MB + 2):
            conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        conn.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may stop reading as soon as the cap is passed
    status = conn.getresponse().status
    conn.close()
    assert status == 413


def test_a_gat_set_is_scored_as_a_submission(browser, server):
    team = ROOT / "fixtures" / "submissions" / "team-alpha"
    page = browser.new_page()
    upload(page, server, *sorted(team.glob("*.tex")))
    wait_for_report(page)
    check_html(page.content())
    text = page.inner_text("body")
    assert "Agreement of the assessor on A with the truth (T)" in text
    for role in ("G", "A", "T"):
        assert page.locator(f"article.card[id^='q-{role}-']").count() == 16
    assert page.locator("dl.scores .S").count() == 1 and "/tmp" not in page.content()
    page.close()


def _post_file(base: str, path: Path, assessor: str = "heuristic") -> tuple[int, dict]:
    import urllib.error
    import urllib.request
    import uuid

    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"assessor\"\r\n\r\n{assessor}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{path.name}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + path.read_bytes() + \
        f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(base + "/api/check", data=body, method="POST",
                                 headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_concurrent_uploads_wait_in_a_bounded_queue(tmp_path):
    """One check at a time and one waiting (a slow model): the third upload at once is answered 503,
    and the two accepted ones both finish."""
    from checklist_eval.testing import MockServer

    paper = latex_zip(tmp_path)
    with MockServer(latency=1.0) as endpoint:
        proc = subprocess.Popen(
            [sys.executable, "-m", "checklist_eval", "serve", "--port", "0", "--jobs", "1", "--queue", "1",
             "--assessor", "llm", "--model", "gpt-4o-mini", "--base-url", endpoint.base_url, "--api-key-env",
             "CE_TEST_KEY", "--no-cache"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env={**os.environ, "CE_TEST_KEY": KEY})
        try:
            base = re.search(r"http://127\.0\.0\.1:\d+", proc.stdout.readline() if proc.stdout else "")
            assert base, "serve did not start"
            answers = [_post_file(base.group(0), paper, "llm") for _ in range(3)]
            assert [status for status, _ in answers] == [202, 202, 503]
            assert "busy" in answers[2][1]["error"]
            import urllib.request

            for _, doc in answers[:2]:
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    with urllib.request.urlopen(base.group(0) + doc["url"], timeout=60) as resp:
                        if resp.status == 200:
                            assert json.loads(resp.read())["model"] == "gpt-4o-mini"
                            break
                    time.sleep(0.2)
                else:
                    pytest.fail("an accepted check never finished")
        finally:
            proc.terminate()
            proc.wait(timeout=15)


def test_a_failed_submission_links_a_page_with_its_failure_and_the_way_back(browser, server):
    """Not a 404: the leaderboard's failed row opens the failure, which leads back; a team named with
    accents is shown by its name beside its safe id, which the URL uses."""
    page = browser.new_page()
    page.goto(server + "/results/")
    failed = page.locator("table.failures tr", has_text="broken-team")
    assert "not LaTeX" in failed.inner_text()
    with page.expect_response(lambda r: "/results/s/broken-team" in r.url) as opened:
        failed.locator("a").click()
    assert opened.value.status == 200
    check_html(page.content())
    assert page.inner_text("h1") == "Submission broken-team: not scored"
    reason = page.inner_text("#failure")
    assert "genuine_paper.tex" in reason and "not LaTeX" in reason and str(ROOT) not in reason
    screenshots(page, "failed-submission")
    page.click("#back")
    assert page.url == server + "/results/"
    row = page.locator("table.leaderboard tr", has_text=UNICODE_TEAM)
    assert row.locator(".given").inner_text() == UNICODE_TEAM and row.locator(".sid").inner_text() == "Equipe_Zoe"
    row.locator("a").click()
    assert page.url == server + "/results/s/Equipe_Zoe"
    assert page.inner_text("h1") == f"Submission {UNICODE_TEAM} (Equipe_Zoe)"
    page.close()
