# ruff: noqa: F811  (the cli fixture is imported from test_hostile_parsing and named by each test)
"""What TeX prints is what is judged (issue 22, item 6): conditionals decided by the source are
evaluated, redefined answer macros are followed, and where the source does not decide, the answer is
read as written with an ``undecided`` warning that `parse` prints and `batch` writes into the records'
manipulation column. Each case is a real paper (the bundled team-alpha G paper) run through the CLI.

These hold the source evaluator (``--tex never``): with TeX on the machine, TeX reads these papers
(tests/test_tex_reader.py)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from test_hostile_parsing import cli  # noqa: F401 (fixture)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "submissions" / "team-alpha"
PAPER = (FIXTURE / "genuine_sga.tex").read_text("utf-8")
CLAIMS = "\\item[] Answer: \\answerYes{}"  # question 1's answer line
assert PAPER.count(CLAIMS) >= 1


def with_claims(answer: str, preamble: str = "") -> str:
    text = PAPER.replace(CLAIMS, f"\\item[] Answer: {answer}", 1)
    return text.replace("\\begin{document}", preamble + "\n\\begin{document}", 1)


# (preamble, answer text of question 1, the answer TeX prints)
DECIDED = {
    "if01": ("", "\\if01 \\answerYes{}\\else \\answerNo{}\\fi", "No"),
    "if00": ("", "\\if00 \\answerNo{}\\else \\answerYes{}\\fi", "No"),
    "iftrue": ("", "\\iftrue \\answerNo{}\\else \\answerYes{}\\fi", "No"),
    "ifnum": ("", "\\ifnum 3<2 \\answerYes{}\\else \\answerNo{}\\fi", "No"),
    "newif-set-true": ("\\newif\\ifcamera\\cameratrue", "\\ifcamera \\answerNo{}\\else \\answerYes{}\\fi", "No"),
    "newif-default-false": ("\\newif\\ifcamera", "\\ifcamera \\answerYes{}\\else \\answerNo{}\\fi", "No"),
    "ifdefined-in-file": ("\\newcommand{\\camera}{x}", "\\ifdefined\\camera \\answerNo{}\\else \\answerYes{}\\fi",
                          "No"),
    "excludecomment": ("\\usepackage{comment}\\excludecomment{draft}",
                       "\\begin{draft}\\answerYes{}\\end{draft}\\answerNo{}", "No"),
    "let": ("\\let\\answerYes\\answerNo", "\\answerYes{}", "No"),
    # every setting literal and global: TeX meets them in order, the last one before the use counts
    "switch-set-both-ways-in-order": ("\\newif\\ifcamera\\cameratrue\\camerafalse",
                                      "\\ifcamera \\answerYes{}\\else \\answerNo{}\\fi", "No"),
    "let-iftrue": ("\\newif\\ifcamera\\let\\ifcamera\\iftrue", "\\ifcamera \\answerNo{}\\else \\answerYes{}\\fi",
                   "No"),
    "unless": ("", "\\unless\\iffalse \\answerNo{}\\else \\answerYes{}\\fi", "No"),
    "set-after-the-checklist": ("\\newif\\ifcamera", "\\ifcamera \\answerYes{}\\else \\answerNo{}\\fi\\cameratrue",
                                "No"),
    "iffalse-in-verb": ("", "\\verb|\\iffalse| \\answerNo{}", "No"),
    "iffalse-in-verbatim": ("", "\\begin{verbatim}\n\\iffalse\n\\end{verbatim}\n\\answerNo{}", "No"),
    "renewcommand": ("\\renewcommand{\\answerYes}[1][]{\\textcolor{orange}{[No] #1}}", "\\answerYes{}", "No"),
}
UNDECIDED = {
    "switch-set-in-a-group": ("\\newif\\ifcamera{\\cameratrue}",
                              "\\ifcamera \\answerYes{}\\else \\answerNo{}\\fi", "\\ifcamera"),
    "switch-set-by-csname": ("\\newif\\ifcamera\\csname cameratrue\\endcsname",
                             "\\ifcamera \\answerYes{}\\else \\answerNo{}\\fi", "\\ifcamera"),
    "switch-let-to-another": ("\\newif\\ifcamera\\newif\\ifdraft\\drafttrue\\let\\ifcamera\\ifdraft",
                              "\\ifcamera \\answerYes{}\\else \\answerNo{}\\fi", "\\ifcamera"),
    "if-over-macros": ("\\def\\a{x}\\def\\b{x}", "\\if\\a\\b \\answerYes{}\\else \\answerNo{}\\fi", "\\if"),
    "etoolbox-toggle": ("\\usepackage{etoolbox}\\newtoggle{cam}\\toggletrue{cam}",
                        "\\iftoggle{cam}{\\answerYes{}}{\\answerNo{}}", "\\iftoggle"),
    "ifthen-boolean": ("\\usepackage{ifthen}\\newboolean{cam}\\setboolean{cam}{true}",
                       "\\ifthenelse{\\boolean{cam}}{\\answerYes{}}{\\answerNo{}}", "\\ifthenelse"),
    "ifdefined-from-a-package": ("", "\\ifdefined\\camerarready \\answerYes{}\\fi", "\\ifdefined"),
    "renewcommand-unreadable": ("\\renewcommand{\\answerNo}{\\mystery}", "\\answerNo{}", "\\answerNo"),
}


def _claims(run) -> tuple[str, list[str]]:
    assert run.code == 0, run
    doc = json.loads(run.out)
    return next(it["answer"] for it in doc["items"] if it["id"] == "1"), doc["warnings"]


@pytest.mark.parametrize("case", sorted(DECIDED))
def test_decided_conditionals_and_redefinitions_read_what_tex_prints(cli, tmp_path, case):
    preamble, answer, printed = DECIDED[case]
    path = tmp_path / "paper.tex"
    path.write_text(with_claims(answer, preamble), "utf-8")
    got, warnings = _claims(cli("parse", str(path), "--json", "--tex", "never"))
    assert got == printed, (case, got)
    assert not any("undecided" in w or "does not decide" in w for w in warnings), warnings


def test_undecided_answers_are_read_as_written_and_flagged_in_the_records(cli, tmp_path):
    root = tmp_path / "root"
    for case, (preamble, answer, _) in UNDECIDED.items():
        shutil.copytree(FIXTURE, root / case)
        (root / case / "genuine_sga.tex").write_text(with_claims(answer, preamble), "utf-8")
        run = cli("parse", str(root / case / "genuine_sga.tex"), "--json", "--tex", "never")
        got, warnings = _claims(run)
        assert got in ("Yes", "No"), (case, got)  # read as written: an answer, never dropped
        assert any("does not decide" in w or "does not evaluate" in w for w in warnings), (case, warnings)
    out = tmp_path / "results"
    run = cli("batch", str(root), "--out", str(out), "--tex", "never", out=out)
    assert run.code == 0, run
    with (out / "records.csv").open(newline="", encoding="utf-8") as fh:
        flags = {r["submission_id"]: r["manipulation"] for r in csv.DictReader(fh) if r["role"] == "G"}
    for case, (_, _, where) in UNDECIDED.items():
        assert f"undecided: {where} at genuine_sga.tex:" in flags[case], (case, flags[case])
        reports = [p.read_text("utf-8") for p in out.rglob("report.html") if case in str(p)]
        assert reports and "Answers the source does not decide" in reports[0], case


def test_a_checklist_only_in_an_untaken_branch_is_read_as_written_and_said(cli, tmp_path):
    """An arXiv switch that leaves the checklist out of the PDF (a repository left in its arXiv mode): the
    authors' checklist is still read, and the warning says the PDF would not show it."""
    start, end = PAPER.index("\\section*{NeurIPS Paper Checklist}"), PAPER.index("\\end{document}")
    text = PAPER[:start] + "\\ifarxiv\\else\n" + PAPER[start:end] + "\\fi\n" + PAPER[end:]
    path = tmp_path / "paper.tex"
    path.write_text(text.replace("\\begin{document}", "\\newif\\ifarxiv\\arxivtrue\n\\begin{document}", 1))
    run = cli("parse", str(path), "--json", "--tex", "never")
    assert run.code == 0, run
    parsed = json.loads(run.out)
    assert sum(1 for it in parsed["items"] if it["answer"] not in ("", None, "TODO")) > 10
    assert any("conditional that TeX does not take" in w for w in parsed["warnings"]), parsed["warnings"]
