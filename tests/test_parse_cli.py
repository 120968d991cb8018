"""``checklist-eval parse``: the JSON shape, the table, and one-line errors with exit 2."""

from __future__ import annotations

import json
import zipfile

from cli_runner import run_cli
from checklist_eval.cli import main

KEYS = ["source", "checklist", "title", "items", "warnings", "body_chars", "reader", "tex"]


def test_json_shape(fixtures_dir, capsys):
    assert main(["parse", str(fixtures_dir / "papers" / "genuine"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == KEYS
    assert doc["checklist"] == {"id": "neurips-2025", "questions": 16}
    assert [it["id"] for it in doc["items"]] == [str(i) for i in range(1, 17)]
    assert all(list(it) == ["id", "title", "question", "answer", "justification", "file", "line", "page"]
               for it in doc["items"])
    # where each answer is: the checklist file and the line of its \answerYes{} mark
    lines = (fixtures_dir / "papers" / "genuine" / "checklist.tex").read_text().splitlines()
    for it in doc["items"]:
        assert it["file"] == "checklist.tex" and it["page"] is None
        assert "\\answer" + it["answer"] in lines[it["line"] - 1]
    assert doc["items"][0]["answer"] == "Yes" and doc["body_chars"] > 4000


def test_with_body_is_exactly_the_paper_body(fixtures_dir, capsys):
    from checklist_eval.reading.parsing import load_paper

    assert main(["parse", str(fixtures_dir / "papers" / "adversarial"), "--json", "--with-body"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["body"] == load_paper(fixtures_dir / "papers" / "adversarial").body
    assert len(doc["body"]) == doc["body_chars"]
    assert any("hidden" in w for w in doc["warnings"])


def test_checklist_override_and_questions_file(fixtures_dir, tmp_path, capsys):
    assert main(["parse", str(fixtures_dir / "papers" / "genuine"), "--json", "--checklist", "neurips-2026"]) == 0
    assert json.loads(capsys.readouterr().out)["checklist"]["id"] == "neurips-2026"
    q = tmp_path / "q.json"
    q.write_text(json.dumps({"id": "mini", "name": "Mini", "questions": [
        {"id": "L", "title": "Limitations", "question": "Does the paper discuss the limitations of the work?"},
        {"id": "C", "title": "Compute", "question": "Does the paper report the compute resources used?"}]}))
    assert main(["parse", str(fixtures_dir / "papers" / "genuine"), "--json", "--questions", str(q)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["checklist"] == {"id": "mini", "questions": 2}
    assert [it["answer"] for it in doc["items"]] == ["Yes", "Yes"]


def test_table_output(fixtures_dir, capsys):
    assert main(["parse", str(fixtures_dir / "papers" / "truth_adversarial")]) == 0
    out = capsys.readouterr().out
    assert "neurips-2025" in out and "16/16 answered" in out and "hidden" in out


def _error(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err
    return code, err


def test_errors_are_one_line_exit_2(tmp_path, capsys):
    nochk = tmp_path / "paper.tex"
    nochk.write_text("\\documentclass{article}\\begin{document}\\section{A} text\n% \\answerYes{}\n\\end{document}")
    code, err = _error(capsys, ["parse", str(nochk), "--json"])
    assert code == 2 and "paper.tex" in err and "no live checklist" in err and err.count("\n") == 1
    notes = tmp_path / "notes.txt"
    notes.write_text("hello world")
    code, err = _error(capsys, ["parse", str(notes)])
    assert code == 2 and "notes.txt" in err and "not LaTeX" in err
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("../main.tex", "\\documentclass{article}")
    code, err = _error(capsys, ["parse", str(evil)])
    assert code == 2 and "evil.zip" in err and "escapes" in err and "Traceback" not in err
    code, err = _error(capsys, ["parse", str(tmp_path / "missing.tex")])
    assert code == 2 and "missing.tex" in err


def test_missing_checklist_input_is_named_in_the_error(tmp_path, fixtures_dir):
    # The checklist usually lives in checklist.tex: forgetting it in the upload must say so.
    import shutil

    project = tmp_path / "upload"
    shutil.copytree(fixtures_dir / "papers" / "genuine", project)
    (project / "checklist.tex").unlink()
    run = run_cli("parse", str(project))
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    assert "no live checklist" in run.stderr and "\\input{checklist}: file not found" in run.stderr
