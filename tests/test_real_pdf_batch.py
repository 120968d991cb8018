"""What organizers run: a batch of the real challenge PDFs at the default concurrency, twice.

PDFium is not thread-safe; parsing PDFs from several threads crashed the batch (SIGTRAP) or recorded
good papers as corrupt, differently from run to run. Each paper is now parsed in its own worker
process, so every submission must score, and two runs must write the same scores.
"""

from __future__ import annotations

from cli_runner import run_cli
import json
import shutil


def test_batch_of_the_real_pdfs_twice_at_default_jobs(shared_dir, tmp_path):
    papers = shared_dir / "corpus" / "anchor-sample" / "papers"
    subs = tmp_path / "subs"
    for folder in sorted(p for p in papers.iterdir() if p.is_dir()):
        pdfs = sorted(folder.glob("*.pdf"))
        if pdfs:
            (subs / folder.name).mkdir(parents=True)
            shutil.copy(pdfs[0], subs / folder.name / f"genuine_{pdfs[0].name}")
    expected = len(list(subs.iterdir()))
    assert expected >= 20
    scores = []
    for run in (1, 2):
        out = tmp_path / f"out{run}"
        proc = run_cli("batch", str(subs), "--out", str(out), "--json")
        assert proc.returncode == 0, proc.stderr[-2000:]
        counts = json.loads(proc.stdout)
        assert (counts["scored"], counts["failed"]) == (expected, 0), (out / "failures.jsonl").read_text()[:2000]
        assert (out / "failures.jsonl").read_text() == ""
        scores.append((out / "scores.csv").read_text())
    assert scores[0] == scores[1]
    assert len(scores[0].splitlines()) == expected + 1
