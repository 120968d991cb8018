# ruff: noqa: F811  (the cli fixture is imported from test_hostile_parsing and named by each test)
"""Worst cases found, not listed (issue 22, item 8). The shapes once quadratic, at the sizes they were
reported at, through the CLI as a user runs it; and a brief Hypothesis search for the slowest shape
per KB (``checklist_eval.testing.shapes``), whose winner is then parsed by the CLI at 512 KB. The
``cli`` fixture bounds every run's time (60 s) and whole-tree memory (1,200 MB); before this work the
first four took 66 s, about 23 s, 10 s and past 25 s."""

from __future__ import annotations

import pytest
from helpers import one_error_line
from test_hostile_parsing import cli  # noqa: F401 (fixture)

from checklist_eval.reading.isolation import ParseLimits, ParserPool
from checklist_eval.testing import shapes, worstcases

KB = 1024
# (case, size, command, what the input holds, how many): the sizes of the reports (issue 22).
REPORTED = [
    ("30,000 \\subsection{Checklist} headings", 700 * KB, "parse", "\\subsection{Checklist}", 30_000),
    ("% comment + unclosed \\begin{verbatim}s", 16_000 * len("\\begin{verbatim}\n"), "parse", "\\begin{verbatim}",
     16_000),
    ("unclosed \\answerYes{ by the thousand", 12_000 * len("\\answerYes{"), "parse", "\\answerYes{", 12_000),
    ("2,000 pointers against a long body", 3 * KB * KB, "check", "Section~\\ref{sec:s", 2_000),
]


@pytest.mark.parametrize("case,size,command,needle,count", REPORTED, ids=[r[0] for r in REPORTED])
def test_shapes_once_quadratic_run_in_bounded_time(cli, tmp_path, case, size, command, needle, count):
    path = worstcases.write_case(tmp_path, case, size)
    assert path.read_text().count(needle) >= count - 1
    run = cli(command, str(path), *(["--json"] if command == "parse" else ["--quiet"]))
    if run.code == 2:
        one_error_line(run, path.name)  # a refusal is one line, within the same bounds
    else:
        assert run.code == 0, run


def test_the_slowest_shape_of_a_brief_search_parses_in_bounded_time(cli, tmp_path):
    with ParserPool(1, ParseLimits(timeout_s=30)) as pool:
        found = shapes.search(pool.load_paper, examples=12, size=16 * KB, seed=22)
    assert len(found) == 12
    slowest = found[0]
    assert slowest.ms_per_kb < 1000, slowest  # a hang guard: 16 KB in under 16 s through the worker
    path = tmp_path / "shape.tex"
    path.write_text(slowest.shape.document(512 * KB), "utf-8")
    run = cli("parse", str(path), "--json")
    if run.code == 2:
        one_error_line(run, "shape.tex")
    else:
        assert run.code == 0, run
