"""Every page that states the scoring rules states what the scorer computes.

The participant's Overview page (Codabench), the documentation's scoring page and the HTML report each
print the formulas of ``scoring.RULES``. Here each page's copy is read back from the page as printed,
evaluated as a reader would (``[x]`` is 1 when x holds, ``Σ`` sums over the n questions) on the
crafted cases (T left a question TODO; G alone; G and T), and compared with what ``rescore`` prints.
A page that said "R over the questions T answers" would fail here: its R line would not evaluate to
the scorer's R, or would not parse as a sum over all n questions.
"""

from __future__ import annotations

import csv
import json
import re
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path

from cli_runner import run_cli
import pytest

from checklist_eval.challenge.codabench_options import BundleOptions
from checklist_eval.challenge.codabench_pages import pages
from checklist_eval.challenge.results.ledger import read_records
from checklist_eval.challenge.report import render_submission_report
from checklist_eval.challenge.scoring import rules_markdown, score_submission

ROOT = Path(__file__).resolve().parents[1]
CASES = {"todo-in-t": "GAT", "g-only": "G", "gt": "GT"}
# One formula per line: "C = Σ c_i / n: words", optionally a markdown item with the formula in backticks.
FORMULA = re.compile(r"^(?:- )?`?((?:C|g_i|R|S|C_A) = [^`:]+?)`?: ", re.M)


def scoring_page() -> str:
    """The documentation's page of the rules (docs/scoring.md), whole."""
    return (ROOT / "docs" / "scoring.md").read_text(encoding="utf-8")


class _RulesList(HTMLParser):
    """The text of each <li> of the report's "How the scores are computed" (``#rules``)."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = False
        self.items: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "details" and dict(attrs).get("id") == "rules":
            self.inside = True
        elif tag == "li" and self.inside:
            self.items.append("")

    def handle_endtag(self, tag):
        if tag == "details":
            self.inside = False

    def handle_data(self, data):
        if self.inside and self.items:
            self.items[-1] += data


def report_rules(case: str) -> str:
    records = read_records(ROOT / "fixtures" / "scoring" / f"{case}.csv")
    html = render_submission_report(score_submission(records[0].submission_id, records), records)
    parser = _RulesList()
    parser.feed(html)
    return "\n".join(parser.items)


def page_texts(case: str) -> dict[str, str]:
    return {"Codabench Overview": pages(BundleOptions())["overview"], "docs/scoring.md": scoring_page(),
            "HTML report": report_rules(case)}


def formulas(text: str) -> dict[str, str]:
    """left-hand side -> right-hand side, of every formula line the page prints; the line of constants
    ("C_A = 0, C_T = 0, R = 1", G alone) as "G alone: C_A" etc."""
    found = {}
    for match in FORMULA.finditer(text):
        assignments = match.group(1).split(", ")
        for assignment in assignments:
            lhs, rhs = assignment.split(" = ", 1)
            found[("G alone: " if len(assignments) > 1 else "") + lhs.strip()] = rhs.strip()
    return found


def as_python(expression: str) -> str:
    """The page's notation read literally: a sum must run over all n questions, divided by n."""
    py = expression.replace("×", "*").replace("−", "-")
    py = re.sub(r"\[([^\]=]+?) = ([^\]]+?)\]", r"int((\1) == (\2))", py)
    py = py.replace("c_i of A", "cA[i]")
    py = re.sub(r"\b([acgt])_i\b", r"\1[i]", py)
    summed = re.fullmatch(r"Σ (.+) / n", py)
    if "Σ" in py:
        assert summed, f"a sum that is not over all n questions divided by n: {expression!r}"
        py = f"sum({summed.group(1)} for i in range(n)) / N"
    return py


def crafted(case: str) -> dict[str, dict[str, list[str]]]:
    """role -> {"answer": [...], "c": [...]} in question order, read straight from the crafted CSV."""
    with (ROOT / "fixtures" / "scoring" / f"{case}.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    roles: dict[str, dict[str, list[str]]] = {}
    for row in rows:
        role = roles.setdefault(row["role"], {"answer": [], "c": []})
        role["answer"].append(row["answer"])
        role["c"].append(row["correct"])
    return roles


def evaluate(stated: dict[str, str], case: str) -> dict[str, Fraction]:
    """The page's formulas on the crafted case, exactly (fractions)."""
    papers = crafted(case)
    n = len(papers["G"]["answer"])

    def run(lhs: str, **env) -> Fraction:
        # one namespace: the sum's generator reads the page's variables as globals
        return Fraction(eval(as_python(stated[lhs]), {"n": n, "N": Fraction(n), **env}))

    out = {f"C_{role}": run("C", c=[int(x) for x in papers[role]["c"]]) for role in papers}
    if set(papers) == {"G"}:
        out.update({name: Fraction(stated[f"G alone: {name}"]) for name in ("C_A", "C_T", "R")})
    else:
        a, t = papers["A"]["answer"], papers["T"]["answer"]
        g = [int(eval(as_python(stated["g_i"]), {"a": a, "t": t, "i": i})) for i in range(n)]
        out["R"] = run("R", cA=[int(x) for x in papers["A"]["c"]], g=g)
    out["S"] = run("S", **{k: v for k, v in out.items()})
    return out


def rescored(case: str) -> dict[str, float]:
    run = run_cli("rescore", str(ROOT / "fixtures" / "scoring" / f"{case}.csv"), "--json", cwd=ROOT)
    assert run.returncode == 0, run.stderr
    (row,) = json.loads(run.stdout)["submissions"]
    return row


@pytest.mark.parametrize("case", list(CASES))
def test_every_page_formula_gives_rescores_numbers(case):
    scorer = rescored(case)
    assert scorer["case"] == CASES[case]
    for page, text in page_texts(case).items():
        stated = formulas(text)
        assert {"C", "g_i", "R", "S", "G alone: R"} <= set(stated), (page, stated)
        got = evaluate(stated, case)
        for name in ("C_G", "C_A", "C_T", "R", "S"):
            assert float(got[name]) == scorer[name], (page, case, name, got[name], scorer[name])


def test_the_todo_case_is_the_one_a_page_used_to_get_wrong():
    """T left question 4 TODO: over all n questions R = 0.75 and S = 0.140625; over "the questions T
    answers" (3 of them) R would be 1 and S 0."""
    scorer = rescored("todo-in-t")
    assert (scorer["R"], scorer["S"]) == (0.75, 0.140625)
    wrong = {"C": "Σ c_i / n", "g_i": "[a_i = t_i]", "R": "Σ [c_i of A = g_i] / (n - 1)",
             "S": "C_G × C_A × (1 − R) × C_T"}
    with pytest.raises(AssertionError, match="not over all n questions"):
        evaluate(wrong, "todo-in-t")


def test_gt_case_is_a_with_t_paper_and_g_answers():
    """The crafted GT case is what the "G and T" rule says: A's answers are G's."""
    papers = crafted("gt")
    assert papers["A"]["answer"] == papers["G"]["answer"] != papers["T"]["answer"]


def test_scoring_page_and_overview_print_the_scoring_module_text():
    assert rules_markdown() in scoring_page()
    overview = pages(BundleOptions())["overview"]
    assert rules_markdown() in overview
    for page in (overview, scoring_page()):
        assert "questions T answers" not in page and "are not counted" not in page
