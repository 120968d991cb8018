"""Every page read at the widths people use, from a 320 px phone to a 1920 px screen, in a real
headless browser (Debian's chromium driven by Playwright, as ``test_serve.py``; skipped without it on
a developer's machine, failing in CI).

A 50-submission leaderboard (``leaderboard --html`` and ``serve --results``), a submission's page, a
question's page and an author's report (``check --out``): no sideways scrolling at any width; rank,
submission and S always on screen; rows of a bounded height; headers never broken inside a word.
Screenshots at 375 and 1280 px go to ``test-artifacts/layout/``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from cli_runner import CliRun, run_cli
import pytest
from test_serve import ARTIFACTS as SERVE_ARTIFACTS
from test_serve import CHROMIUM, CHROMIUM_FLAGS, _need_chromium

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = SERVE_ARTIFACTS.parent / "layout"
WIDTHS = (320, 375, 768, 1280, 1920)
TEAMS = ("team-alpha", "team-beta", "team-gamma")
# The tallest a leaderboard row may be: at 375 px a card of the rank, a name wrapped over two or three
# lines, one line of the other scores and S (the page this replaced drew rows ~500 px tall).
MAX_ROW_PX = {320: 170, 375: 150, 768: 90, 1280: 60, 1920: 60}


def cli(*args: str) -> CliRun:
    return run_cli(*args, cwd=ROOT)


def submission_name(i: int) -> str:
    """Names as teams pick them: long hyphenated ones, short ones, one long word."""
    return (f"university-of-somewhere-nlp-group-{i}", f"t{i}", f"federatedsketchingwithalongname{i}")[i % 3]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """50 submissions (copies of the three bundled ones: GAT, GT and G) and one that fails, scored by
    ``batch`` with the default (offline) assessor."""
    root = tmp_path_factory.mktemp("fifty")
    subs = root / "subs"
    for i in range(50):
        shutil.copytree(ROOT / "fixtures" / "submissions" / TEAMS[i % 3], subs / submission_name(i))
    broken = subs / "team-broken"
    broken.mkdir()
    (broken / "genuine_notes.tex").write_text("not a paper at all\n")
    out = root / "results"
    run = cli("batch", str(subs), "--out", str(out), "--quiet")
    assert run.returncode == 4, run.stderr  # the broken one failed, the batch went on
    page = cli("leaderboard", str(out), "--html", str(out / "leaderboard.html"))
    assert page.returncode == 0, page.stderr
    return out


@pytest.fixture(scope="module")
def served(results):
    proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", "serve", "--port", "0", "--results",
                             str(results)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    match = re.search(r"http://127\.0\.0\.1:\d+", proc.stdout.readline() if proc.stdout else "")
    if match is None:
        proc.kill()
        pytest.fail(f"serve did not start: {proc.stderr.read() if proc.stderr else ''}")
    try:
        yield match.group(0)
    finally:
        proc.terminate()
        proc.wait(timeout=15)


@pytest.fixture(scope="module")
def author_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("check") / "out"
    run = cli("check", str(ROOT / "fixtures" / "papers" / "adversarial"), "--out", str(out), "--quiet")
    assert run.returncode == 0, run.stderr
    return out / "report.html"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    _need_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            yield browser.new_page(viewport={"width": 1280, "height": 900})
        finally:
            browser.close()


def fits(page, width: int) -> None:
    """No sideways scrolling: the page is no wider than the window."""
    page.set_viewport_size({"width": width, "height": 900})
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{page.url} is {scroll} px wide in a {width} px window"


def on_screen(page, selector: str, width: int) -> None:
    """Every element matching ``selector`` is displayed and lies within the window's width."""
    boxes = page.evaluate("""s => [...document.querySelectorAll(s)].map(e => {
        const r = e.getBoundingClientRect(); return [r.left, r.right, r.width, r.height]; })""", selector)
    assert boxes, f"nothing matches {selector} on {page.url}"
    for left, right, w, h in boxes:
        assert w > 0 and h > 0 and left >= 0 and right <= width + 0.5, (selector, width, left, right)


def words_split_across_lines(page, selector: str) -> list[str]:
    """Header texts of one word drawn on more than one line (a word broken in the middle)."""
    return page.evaluate("""s => [...document.querySelectorAll(s)].filter(e => e.offsetParent !== null
        && !/\\s/.test(e.textContent.trim())).filter(e => {
            const range = document.createRange(); range.selectNodeContents(e);
            return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size > 1;
        }).map(e => e.textContent)""", selector)


def shoot(page, name: str, width: int, *, full: bool) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=full)


def check_leaderboard(page, name: str) -> None:
    rows = page.locator("table.leaderboard tbody tr")
    assert rows.count() == 50
    for width in WIDTHS:
        fits(page, width)
        for cell in ("td.rank", "td.sub a", "td.S", "th.S"):
            on_screen(page, f"table.leaderboard {cell}", width)
        assert words_split_across_lines(page, "table.leaderboard th, table.failures th") == []
        tallest = max(page.evaluate("""() => [...document.querySelectorAll('table.leaderboard tbody tr')]
            .map(r => r.getBoundingClientRect().height)"""))
        assert tallest <= MAX_ROW_PX[width], (width, tallest)
        if width == 375:  # one line under each name carries the other scores
            assert re.search(r"C_G \d\.\d{4} · C_A", rows.first.locator(".brief").inner_text())
        if width in (375, 1280):
            shoot(page, name, width, full=True)
    assert "team-broken" in page.locator("table.failures").inner_text()


def test_leaderboard_html_of_50_submissions_reads_at_every_width(page, results):
    page.goto((results / "leaderboard.html").as_uri())
    check_leaderboard(page, "leaderboard-50")


def test_served_pages_read_at_every_width(page, served, results):
    page.goto(served + "/results/")
    title = page.inner_text("h1")  # which run is shown, read as one phrase: no parentheses within parentheses
    assert "showing run 1" in title and "((" not in title and "))" not in title, title
    check_leaderboard(page, "served-leaderboard-50")

    sid = submission_name(0)  # a GAT submission with a long name
    page.goto(f"{served}/results/s/{sid}")
    for width in WIDTHS:
        fits(page, width)
        for tile in (".scores .S", ".scores .R", ".scores .C_G"):
            on_screen(page, tile, width)
        on_screen(page, "table.agreement", width)
        if width in (375, 1280):
            shoot(page, "submission", width, full=False)

    page.locator("a", has_text="the question, its review").first.click()
    assert "/results/s/" in page.url
    verdict = " ".join(page.inner_text("dd:has(#verdict)").split())  # the state's meaning, then what it counts as
    assert re.search(r"[a-z]; counts as (correct|wrong) \(c_i = [01]\)", verdict), verdict
    for width in WIDTHS:
        fits(page, width)
        on_screen(page, "#verdict", width)


def test_authors_report_reads_at_every_width(page, author_report):
    page.goto(author_report.as_uri())
    for width in WIDTHS:
        fits(page, width)
        on_screen(page, "ul.mustfix li", width)
        on_screen(page, "article.card", width)
        assert page.locator("#p-legend").count() == 1
        if width in (375, 1280):
            shoot(page, "report", width, full=False)


def test_upload_page_says_how_to_name_a_submissions_papers_before_any_upload(page, served):
    page.goto(served + "/")
    naming = page.inner_text("#naming")
    assert all(prefix in naming for prefix in ("genuine_", "adversarial_", "truth_adversarial_"))
    for width in WIDTHS:
        fits(page, width)
        on_screen(page, "#submit", width)
