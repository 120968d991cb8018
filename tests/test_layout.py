"""The results-folder layout names the files a batch really writes, and never leads out of the folder."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import run_cli
import pytest

from checklist_eval.challenge.results.layout import ResultsLayout, records_path
from checklist_eval.challenge.leaderboard_page import report_links

ROOT = Path(__file__).resolve().parents[1]


def test_a_batch_writes_every_file_the_layout_names(tmp_path: Path, fixtures_dir: Path) -> None:
    out = tmp_path / "results"
    run = run_cli("batch", str(fixtures_dir / "submissions"), "--out", str(out), "--quiet", cwd=ROOT)
    assert run.returncode == 0, run.stderr
    layout = ResultsLayout(out)
    # (the cache is made by the LLM assessor only; the heuristic default has nothing to cache)
    for path in (layout.lock, layout.records_csv, layout.records_jsonl, layout.scores_csv, layout.summary_json,
                 layout.failures_jsonl):
        assert path.is_file(), path
    ids = [s["submission_id"] for s in json.loads(layout.summary_json.read_text())["scores"]]
    assert sorted(ids) == ["team-alpha", "team-beta", "team-gamma"]
    for sid in ids:
        assert layout.submission(sid).result_json.is_file() and layout.submission(sid).report_html.is_file()
    assert records_path(out) == layout.records_csv


@pytest.mark.parametrize("sid", ["", ".", "..", "../x", "a/b", "a\\b", "x\0y"])
def test_a_submission_id_that_is_not_one_folder_name_is_refused(tmp_path: Path, sid: str) -> None:
    with pytest.raises(ValueError):
        ResultsLayout(tmp_path).submission(sid)


def test_the_leaderboard_page_links_only_reports_inside_the_folder(tmp_path: Path) -> None:
    layout = ResultsLayout(tmp_path / "results")
    for sid in ("team-a", "..", "../outside"):
        report = layout.root / "submissions" / sid / "report.html"
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text("<html></html>")
    links = report_links(layout.root, tmp_path / "board.html", ["team-a", "..", "../outside", "missing"])
    assert links == {"team-a": "results/submissions/team-a/report.html"}
