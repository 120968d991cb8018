"""The HTML leaderboard and the reports it links, loaded in a real headless browser (Debian's chromium;
skipped where none is installed): the links resolve to the reports, failed submissions are listed
with their reason, and text from submissions is shown as text, never as markup."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.assessors.heuristic.assessor import RULES_VERSION

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def cli(*args: str) -> CliRun:
    return run_cli(*args, cwd=ROOT)


def rendered_dom(path: Path) -> str:
    """The DOM chromium builds for a local file (scripts would have run; the pages have none)."""
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--dump-dom", path.resolve().as_uri()],
            capture_output=True, text=True, timeout=120,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


class _Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[tuple[str, str]] = []  # (href, text)
        self.tags: list[str] = []
        self.text: list[str] = []
        self._href: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_endtag(self, tag):
        if tag == "a":
            self._href = None

    def handle_data(self, data):
        self.text.append(data)
        if self._href is not None:
            self.links.append((self._href, data))


def parse(dom: str) -> _Dom:
    d = _Dom()
    d.feed(dom)
    return d


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed")
def test_leaderboard_page_links_every_report_and_lists_failures_in_a_browser(tmp_path, fixtures_dir):
    subs = tmp_path / "subs"
    shutil.copytree(fixtures_dir / "submissions", subs)
    hostile = subs / "team-evil"
    hostile.mkdir()
    (hostile / "genuine_<b>bold&amp;.tex").write_text("<script>alert(1)</script> not LaTeX\n")
    out = tmp_path / "results"
    assert cli("batch", str(subs), "--out", str(out), "--quiet").returncode == 4  # EXIT_SOME_FAILED: team-evil
    page = out / "site" / "index.html"  # not beside the reports: the links must still resolve
    proc = cli("leaderboard", str(out), "--html", str(page))
    assert proc.returncode == 0, proc.stderr

    # the page shows more than the file: the CSV keeps the organizers' columns, status last
    csv_file = tmp_path / "leaderboard.csv"
    assert cli("leaderboard", str(out), "--csv", str(csv_file)).returncode == 0
    assert csv_file.read_text().splitlines()[0] == ("rank,submission_id,case,C_G,C_A,C_T,R,S,questions,assessor,model,"
                                                    "prompt_version,scored_at,manipulation,appeals,status")
    dom = parse(rendered_dom(page))
    text = " ".join(" ".join(dom.text).split())
    links = dict((t, h) for h, t in dom.links)
    assert set(links) == {"team-alpha", "team-beta", "team-gamma"}
    assert "script" not in dom.tags and "b" not in dom.tags  # the hostile file name stayed text
    assert "Not scored" in text and "team-evil" in text and "genuine_<b>bold&amp;.tex" in text
    ranked = [t for t in text.split() if t.startswith("team-")]
    assert ranked.index("team-evil") > max(ranked.index(s) for s in ("team-alpha", "team-beta", "team-gamma"))

    # each ranked row counts its unverified answers, as the report it links counts them
    html = rendered_dom(page)
    shown = {sid: (int(n), int(of)) for sid, n, of in re.findall(
        r'<tr>.*?>(team-\w+)</a>.*?<td class="num opt unverified">(\d+) of (\d+)</td>', html)}
    assert set(shown) == set(links)
    for sid, href in links.items():
        target = Path(unquote(urlparse(urljoin(page.resolve().as_uri(), href)).path))
        assert target == (out / "submissions" / sid / "report.html").resolve() and target.is_file()
        report = " ".join(" ".join(parse(rendered_dom(target)).text).split())
        tally = re.search(r"\d+ of (\d+) answers judged correct: \d+ supported by a passage of the paper, (\d+)"
                          r" unverified", report)
        assert tally and shown[sid] == (int(tally.group(2)), int(tally.group(1))), (sid, shown[sid])
        assert f"Submission {sid}" in report
        assert "assessor heuristic" in report and f"rules {RULES_VERSION}" in report and "prompt heuristic" not in report
        assert "model (none)" not in report and " · model " not in report  # the offline assessor ran none
        assert "Model calls" not in report and "$0" not in report
