"""Submission naming, role counts, cases, zip submissions and `validate`."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from checklist_eval.cli import main
from checklist_eval.errors import InputError, UnsafeArchiveError
from checklist_eval.challenge.submissions import find_submissions, load_submission, open_submission, role_of


def test_role_prefixes_do_not_overlap():
    assert role_of("truth_adversarial_x.tex") == "T"
    assert role_of("adversarial_x.tex") == "A"
    assert role_of("genuine_x") == "G"
    assert role_of("Genuine_X.PDF") == "G"
    assert role_of("xadversarial_x.tex") is None
    assert role_of("genuine_") is None
    assert role_of("truthadversarial_x.tex") is None


def _touch(folder, *names):
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        if "." in n:
            (folder / n).write_text("x")
        else:
            (folder / n).mkdir()
    return folder


@pytest.mark.parametrize(
    "names, case",
    [
        (["genuine_a.tex"], "G"),
        (["genuine_a.pdf", "truth_adversarial_a.tex"], "GT"),
        (["genuine_a", "adversarial_a.zip", "truth_adversarial_a.tar.gz", "notes.txt"], "GAT"),
    ],
)
def test_cases(tmp_path, names, case):
    sub = open_submission(_touch(tmp_path / "team", *names))
    assert sub.case == case and sub.id == "team"
    if "notes.txt" in names:
        assert any("notes.txt" in w for w in sub.warnings)


@pytest.mark.parametrize(
    "names, message",
    [
        (["adversarial_a.tex", "truth_adversarial_a.tex"], "no genuine_"),
        (["genuine_a.tex", "adversarial_a.tex"], "without truth_adversarial_"),
        (["genuine_a.tex", "genuine_b.tex"], "more than one genuine"),
        (["genuine_a.tex", "paper.tex"], "'paper.tex' is not named"),
        (["genuine_a.docx"], "not a paper: a Word document"),
    ],
)
def test_invalid_submissions(tmp_path, names, message, capsys):
    folder = _touch(tmp_path / "team", *names)
    with pytest.raises(InputError, match=message):
        open_submission(folder)
    assert main(["validate", str(folder)]) == 2
    err = capsys.readouterr().err
    assert message.strip("'") in err and "Traceback" not in err and err.count("\n") == 1


def test_wrapper_folder_and_batch_root(tmp_path):
    _touch(tmp_path / "root" / "team1" / "inner", "genuine_a.tex")
    assert open_submission(tmp_path / "root" / "team1").entries["G"].name == "genuine_a.tex"
    (tmp_path / "root" / "team2.zip").write_bytes(b"")
    (tmp_path / "root" / ".hidden").mkdir()
    assert [p.name for p in find_submissions(tmp_path / "root")] == ["team1", "team2.zip"]
    with pytest.raises(InputError, match="one submission"):
        find_submissions(tmp_path / "root" / "team1" / "inner")
    with pytest.raises(InputError, match="no submissions"):
        find_submissions(_touch(tmp_path / "empty"))


def test_zip_submission_is_checked_for_unsafe_members(tmp_path):
    z = tmp_path / "evil.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("genuine_a.tex", "x")
        zf.writestr("../escape.tex", "x")
    with pytest.raises(UnsafeArchiveError):
        open_submission(z)


# --- with the LaTeX parser and the fixtures ----------------------------------------------------------


def test_load_fixture_cases(fixtures_dir):
    subs = fixtures_dir / "submissions"
    alpha = load_submission(subs / "team-alpha")
    assert alpha.case == "GAT" and set(alpha.papers) == {"G", "A", "T"}
    beta = load_submission(subs / "team-beta")
    assert beta.case == "GT"
    # GT: A is T's paper body carrying G's checklist answers.
    assert beta.papers["A"].body == beta.papers["T"].body
    assert beta.papers["A"].checklist.answers == beta.papers["G"].checklist.answers
    assert beta.papers["A"].checklist.answers != beta.papers["T"].checklist.answers
    gamma = load_submission(subs / "team-gamma")
    assert gamma.case == "G" and list(gamma.papers) == ["G"]


def test_gt_adversarial_has_no_parser_warnings_of_its_own(fixtures_dir):
    """GT: A is derived from T and G, never parsed; T's warnings are reported once, under T."""
    import asyncio

    from checklist_eval.assessors import make_assessor
    from checklist_eval.challenge.batch import assess_loaded
    from checklist_eval.models import ParseWarning
    from checklist_eval.challenge.submissions import LoadedSubmission, gt_adversarial

    beta = load_submission(fixtures_dir / "submissions" / "team-beta")
    g = beta.papers["G"].model_copy(update={"warnings": [ParseWarning.model_validate("G: odd macro")]})
    t = beta.papers["T"].model_copy(update={"warnings": [ParseWarning.model_validate("hidden text found")]})
    a = gt_adversarial(g, t)
    assert a.warnings == [] and [str(w) for w in t.warnings] == ["hidden text found"]
    assert a.body == t.body and a.checklist.answers == g.checklist.answers
    assert a.source.startswith(t.source) and g.source in a.source
    loaded = LoadedSubmission(id="beta", case="GT", papers={"G": g, "T": t, "A": a})
    result = asyncio.run(assess_loaded(loaded, make_assessor("heuristic"), source="x", fingerprint="f"))
    assert [w for w in result.warnings if "hidden text found" in w] == ["T: hidden text found"]
    assert not [w for w in result.warnings if w.startswith("A: ")]


def test_load_submission_takes_the_id_it_is_given(fixtures_dir):
    gamma = load_submission(fixtures_dir / "submissions" / "team-gamma", submission_id="team-gamma-1a2b3c")
    assert gamma.id == "team-gamma-1a2b3c"
    assert load_submission(fixtures_dir / "submissions" / "team-gamma").id == "team-gamma"


def test_zip_submission_loads_like_the_folder(fixtures_dir, tmp_path):
    src = fixtures_dir / "submissions" / "team-beta"
    z = tmp_path / "team-beta.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for f in sorted(src.rglob("*")):
            if f.is_file():
                zf.write(f, "wrapper/" + f.relative_to(src).as_posix())
    from_zip = load_submission(z)
    from_dir = load_submission(src)
    assert from_zip.case == "GT" and from_zip.id == "team-beta"
    for role in "GAT":
        assert from_zip.papers[role].checklist.answers == from_dir.papers[role].checklist.answers
    assert "team-beta.zip!" in from_zip.papers["G"].source


def test_validate_cli(fixtures_dir, tmp_path, capsys):
    assert main(["validate", str(fixtures_dir / "submissions" / "team-alpha"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["case"] == "GAT" and out["papers"]["A"]["checklist"] == out["papers"]["T"]["checklist"]
    # A paper that is not LaTeX fails parseability with the paper's name in the message.
    bad = tmp_path / "team-bad"
    shutil.copytree(fixtures_dir / "submissions" / "team-gamma", bad)
    (bad / "genuine_sga.tex").write_text("just some words, no LaTeX at all\n")
    assert main(["validate", str(bad)]) == 2
    assert "genuine_sga.tex" in capsys.readouterr().err


def _with_checklist_version(tex: str, version: str) -> str:
    """Replace the fixture's checklist by an all-Yes checklist of another version's questions."""
    from checklist_eval.reading import checklists

    items = "".join(
        f"\\item {{\\bf {q.title}}}\n\\item[] Question: {q.question}\n\\item[] Answer: \\answerYes{{}}\n"
        f"\\item[] Justification: See Section~\\ref{{sec:exp}}.\n\n"
        for q in checklists.load(version).questions
    )
    head = tex.split("\\section*{NeurIPS Paper Checklist}")[0]
    return head + "\\section*{NeurIPS Paper Checklist}\n\\begin{enumerate}\n" + items + "\\end{enumerate}\n\\end{document}\n"


def test_a_and_t_must_share_a_checklist_version(fixtures_dir, tmp_path, capsys):
    sub = tmp_path / "team-mixed"
    shutil.copytree(fixtures_dir / "submissions" / "team-alpha", sub)
    t = sub / "truth_adversarial_sga.tex"
    t.write_text(_with_checklist_version(t.read_text(), "neurips-2024"))
    assert main(["validate", str(sub)]) == 2
    err = capsys.readouterr().err
    assert "A uses checklist neurips-2025 but T uses neurips-2024" in err


def test_a_team_named_with_accents_keeps_its_letters_in_the_id_and_its_name_as_given():
    """A safe id for files and URLs that still reads as the name (was "quipe_Zo"), and the name as given
    found again from any path under the submission."""
    from checklist_eval.challenge.submissions import given_name, submission_id_of

    assert submission_id_of(Path("Équipe Zoé")) == "Equipe_Zoe"
    assert submission_id_of(Path("Müller-Straße.zip")) == "Muller-Stra_e"
    assert given_name("/data/subs/Équipe Zoé/genuine_x.tex", "Equipe_Zoe") == "Équipe Zoé"
    assert given_name("/data/subs/Équipe Zoé.zip", "Equipe_Zoe-1a2b3c") == "Équipe Zoé"  # a collision's id
    assert given_name("/elsewhere/paper.tex", "Equipe_Zoe") == ""
