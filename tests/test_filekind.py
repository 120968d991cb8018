"""The same file gets the same message from every command and from ``serve``: a Word document is
"not a paper: a Word document (.docx); a paper is ...", whether it is checked, parsed, validated or
scored as a submission's paper, or uploaded (one line, exit 2, no traceback; 415 from ``serve``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
import zipfile
from pathlib import Path

from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.reading.filekind import not_a_paper

ROOT = Path(__file__).resolve().parents[1]
WORD = not_a_paper("a Word document (.docx)")


def cli(*args: str) -> CliRun:
    return run_cli(*args, cwd=ROOT)


def word_document(path: Path) -> Path:
    """A .docx as Word writes it: a zip whose first member is ``[Content_Types].xml``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        zf.writestr("word/document.xml", "<w:document><w:body>Our paper</w:body></w:document>")
    return path


def one_line(proc: CliRun) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.mark.parametrize("command", ["check", "parse", "score", "validate"])
def test_a_word_document_is_not_a_paper_to_every_command(tmp_path, command):
    paper = word_document(tmp_path / "paper.docx")
    assert one_line(cli(command, str(paper))) == f"checklist-eval: error: {paper}: {WORD}"


def test_a_submission_holding_a_word_document_says_so_in_the_same_words(tmp_path):
    sub = tmp_path / "team"
    sub.mkdir()
    word_document(sub / "genuine_paper.docx")
    for command in ("validate", "score"):
        assert f"'genuine_paper.docx': {WORD}" in one_line(cli(command, str(sub)))


def test_a_renamed_office_file_or_image_is_known_by_its_bytes(tmp_path):
    renamed = word_document(tmp_path / "paper.zip")
    line = one_line(cli("check", str(renamed)))
    assert line.endswith(not_a_paper("an Office document (Word, Excel or PowerPoint)"))
    png = tmp_path / "main.tex"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    assert one_line(cli("check", str(png))).endswith(not_a_paper("an image (PNG)"))


def test_serve_refuses_the_upload_in_the_same_words(tmp_path):
    pytest.importorskip("starlette")
    paper = word_document(tmp_path / "paper.docx")
    proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", "serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        base = re.search(r"http://127\.0\.0\.1:\d+", proc.stdout.readline() if proc.stdout else "")
        assert base, "serve did not start"
        boundary = uuid.uuid4().hex
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"paper.docx\"\r\n"
                "Content-Type: application/octet-stream\r\n\r\n").encode() + paper.read_bytes() + \
            f"\r\n--{boundary}--\r\n".encode()
        req = urllib.request.Request(base.group(0) + "/api/check", data=body, method="POST",
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=60)
        assert refused.value.code == 415
        assert json.loads(refused.value.read())["error"] == f"paper.docx: {WORD}"
    finally:
        proc.terminate()
        proc.wait(timeout=15)
