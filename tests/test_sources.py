"""Opening inputs: .tex files, folders, archives (hostile until proven safe), encodings."""

from __future__ import annotations

import io
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from checklist_eval.reading import sources
from checklist_eval.reading.latex import load_latex, project
from checklist_eval.errors import InputError, UnsafeArchiveError

DOC = "\\documentclass{article}\n\\begin{document}\n%s\n\\end{document}\n"


def _zip(path: Path, members: dict[str, bytes], symlink: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (0o120777 << 16)
            zf.writestr(info, "/etc/passwd")
    return path


def _tar(path: Path, members: dict[str, bytes], link: str | None = None) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        if link:
            info = tarfile.TarInfo(link)
            info.type = tarfile.SYMTYPE
            info.linkname = "../../etc/passwd"
            tf.addfile(info)
    return path


def test_inputs_resolve_with_and_without_extension_and_comments_stay_dead(tmp_path):
    (tmp_path / "sec").mkdir()
    (tmp_path / "sec" / "a.tex").write_text("ALPHA \\input{sec/b}")
    (tmp_path / "sec" / "b.tex").write_text("BETA")
    (tmp_path / "c.tex").write_text("GAMMA")
    (tmp_path / "dead.tex").write_text("DEAD")
    (tmp_path / "main.tex").write_text(DOC % "\\input{sec/a.tex}\n\\include{c}\n% \\input{dead}\n\\subfile{c.tex}")
    src = load_latex(tmp_path)
    assert src.root == "main.tex"
    assert "ALPHA" in src.text and "BETA" in src.text and src.text.count("GAMMA") == 2
    assert "DEAD" not in src.text
    assert src.warnings == []


def test_missing_input_is_a_warning_naming_the_file(tmp_path):
    (tmp_path / "main.tex").write_text(DOC % "\\input{nothere}")
    src = load_latex(tmp_path / "main.tex")
    assert any("nothere" in w.message and "not found" in w.message for w in src.warnings)


def test_input_cycle_is_detected(tmp_path):
    (tmp_path / "a.tex").write_text("A \\input{b}")
    (tmp_path / "b.tex").write_text("B \\input{a}")
    (tmp_path / "main.tex").write_text(DOC % "\\input{a}")
    src = load_latex(tmp_path)
    assert src.text.count("A ") == 1 and any("cycle" in w.message for w in src.warnings)


def test_input_outside_the_project_is_refused(tmp_path):
    outside = tmp_path / "secret.tex"
    outside.write_text("SECRET")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "main.tex").write_text(DOC % "\\input{../secret}\\input{/etc/hostname}")
    src = load_latex(proj)
    assert "SECRET" not in src.text
    assert sum("outside the project" in w.message for w in src.warnings) == 2


def test_root_choice_prefers_the_document_that_really_includes_the_checklist(tmp_path):
    (tmp_path / "checklist.tex").write_text("\\answerYes{}")
    (tmp_path / "main.tex").write_text(DOC % "% \\input{checklist.tex}\nmain body")
    (tmp_path / "neurips_2026.tex").write_text(DOC % "\\input{checklist.tex}")
    assert load_latex(tmp_path).root == "neurips_2026.tex"
    (tmp_path / "neurips_2026.tex").write_text(DOC % "other")
    assert load_latex(tmp_path).root == "main.tex"


def test_iffalse_and_comment_environment_are_dead(tmp_path):
    f = tmp_path / "x.tex"
    f.write_text("\\iffalse \\input{a} \\ifx a b \\fi still dead \\else LIVE \\fi\n\\begin{comment}\nGONE\n\\end{comment}\nKEPT 50\\% done")
    text = load_latex(f).text
    assert "still dead" not in text and "LIVE" in text and "GONE" not in text and "50\\% done" in text


def test_latin1_fallback_warns_and_crlf_is_fine(tmp_path):
    f = tmp_path / "x.tex"
    f.write_bytes("\\section{Caf\u00e9}\r\nline two\r\n".encode("latin-1"))
    src = load_latex(f)
    assert "Caf\u00e9" in src.text and "\r" not in src.text
    assert any("latin-1" in w.message for w in src.warnings)


@pytest.mark.parametrize(
    "content,problem",
    [(b"", "empty file"), (b"\\section{a}\x00\x01\x02", "binary"), (b"just some words", "not LaTeX")],
)
def test_bad_files_raise_input_error_naming_the_file(tmp_path, content, problem):
    f = tmp_path / "paper.tex"
    f.write_bytes(content)
    with pytest.raises(InputError, match=problem) as err:
        load_latex(f)
    assert "paper.tex" in str(err.value)


def test_input_kind_sniffs_content(tmp_path):
    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.5\n...")
    (tmp_path / "b.tex").write_bytes(b"%PDF-1.5\n...")
    (tmp_path / "c.pdf").write_bytes(b"\\documentclass{article}")
    assert sources.input_kind(tmp_path / "a.pdf") == "pdf"
    assert sources.input_kind(tmp_path / "b.tex") == "pdf"
    with pytest.raises(InputError, match="not a PDF"):
        sources.input_kind(tmp_path / "c.pdf")
    with pytest.raises(InputError, match="no such file"):
        sources.input_kind(tmp_path / "missing.tex")


def test_zip_and_tar_projects_load_in_memory(tmp_path, fixtures_dir):
    members = {
        f"paper/{p.relative_to(fixtures_dir / 'papers' / 'genuine').as_posix()}": p.read_bytes()
        for p in (fixtures_dir / "papers" / "genuine").rglob("*.tex")
    }
    members["paper/figures/plot.zip"] = b"PK\x03\x04 nested archive, never opened"
    z = load_latex(_zip(tmp_path / "p.zip", members))
    t = load_latex(_tar(tmp_path / "p.tar.gz", members))
    assert z.root == t.root == "paper/main.tex"
    assert z.text == t.text and "\\answerYes" in z.text
    assert not any(tmp_path.glob("paper"))  # nothing extracted


@pytest.mark.parametrize("name", ["../evil.tex", "/abs/evil.tex", "a/../../evil.tex", "C:/evil.tex"])
def test_archive_path_traversal_is_rejected(tmp_path, name):
    with pytest.raises(UnsafeArchiveError):
        load_latex(_zip(tmp_path / "x.zip", {name: b"\\section{x}"}))
    with pytest.raises(UnsafeArchiveError):
        load_latex(_tar(tmp_path / "x.tgz", {name: b"\\section{x}"}))


def test_archive_links_are_rejected(tmp_path):
    with pytest.raises(UnsafeArchiveError, match="link"):
        load_latex(_zip(tmp_path / "x.zip", {"main.tex": DOC.encode()}, symlink="link.tex"))
    with pytest.raises(UnsafeArchiveError, match="link"):
        load_latex(_tar(tmp_path / "x.tgz", {"main.tex": DOC.encode()}, link="link.tex"))


def test_zip_bomb_and_size_limits(tmp_path, monkeypatch):
    bomb = _zip(tmp_path / "bomb.zip", {"main.tex": b"\\section{x}" + b" " * (3 * 1024 * 1024)})
    with pytest.raises(UnsafeArchiveError, match="compression ratio"):
        load_latex(bomb)
    monkeypatch.setattr(sources, "MAX_MEMBER_BYTES", 1000)
    with pytest.raises(UnsafeArchiveError, match="larger than"):
        load_latex(_zip(tmp_path / "big.zip", {"main.tex": b"\\x" * 1000}))
    monkeypatch.setattr(sources, "MAX_MEMBERS", 3)
    with pytest.raises(UnsafeArchiveError, match="more than 3 members"):
        load_latex(_zip(tmp_path / "many.zip", {f"{i}.tex": b"\\x" for i in range(5)}))


def test_tar_total_size_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "MAX_TOTAL_BYTES", 1500)
    with pytest.raises(UnsafeArchiveError, match="unpacks to more than"):
        load_latex(_tar(tmp_path / "t.tgz", {"a.tex": b"\\a" * 400, "b.tex": b"\\b" * 400}))


def test_corrupt_archive_is_an_input_error(tmp_path):
    f = tmp_path / "broken.zip"
    f.write_bytes(b"PK\x03\x04garbage")
    with pytest.raises(InputError, match="broken.zip"):
        load_latex(f)


def test_folder_without_root_uses_the_checklist_fragment(tmp_path, fixtures_dir):
    shutil.copy(fixtures_dir / "papers" / "genuine" / "checklist.tex", tmp_path / "checklist.tex")
    (tmp_path / "notes.tex").write_text("\\section{Notes}")
    src = load_latex(tmp_path)
    assert src.root == "checklist.tex" and src.is_fragment
    assert any("no root file" in w.message for w in src.warnings)


def test_single_file_input_through_a_link_outside_is_skipped(tmp_path):
    outside = tmp_path / "outside.tex"
    outside.write_text("SECRET-OUTSIDE-TEXT")
    project = tmp_path / "p"
    project.mkdir()
    (project / "secret.tex").symlink_to(outside)
    (project / "main.tex").write_text(
        "\\documentclass{article}\\begin{document}Intro. \\input{secret} End.\\end{document}")
    src = load_latex(project / "main.tex")
    assert "SECRET-OUTSIDE-TEXT" not in src.text and "Intro." in src.text
    assert any("secret" in w.message for w in src.warnings)


def test_repeated_inputs_cannot_blow_up_the_document(tmp_path, monkeypatch):
    monkeypatch.setattr(project, "MAX_SOURCE_CHARS", 100_000)  # the mechanism, at a test-sized limit
    (tmp_path / "chunk.tex").write_text("x" * 1000 + "\n")
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\\begin{document}" + "\\input{chunk}" * 500 + "\\end{document}")
    with pytest.raises(InputError, match="once its .input files are resolved"):
        load_latex(tmp_path / "main.tex")


def test_oversized_tex_file_is_refused_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "MAX_TEX_BYTES", 10_000)
    big = tmp_path / "big.tex"
    big.write_text("\\documentclass{article}\\begin{document}" + "y" * 20_000 + "\\end{document}")
    with pytest.raises(InputError, match="larger than"):
        load_latex(big)


def test_root_choice_agrees_with_the_parser_on_spaced_brackets(tmp_path):
    # An old draft (main.tex) beside the real paper whose checklist answers read "[ Yes ]".
    (tmp_path / "main.tex").write_text("\\documentclass{article}\\begin{document}Old draft.\\end{document}")
    (tmp_path / "checklist.tex").write_text(
        "\\section*{NeurIPS Paper Checklist}\\begin{enumerate}\\item {\\bf Claims}\n"
        "\\item[] Question: Do the main claims made in the abstract and introduction accurately reflect "
        "the paper's contributions and scope?\n\\item[] Answer: [ Yes ]\n"
        "\\item[] Justification: Section 1.\\end{enumerate}")
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\\begin{document}Intro.\\input{checklist}\\end{document}")
    src = load_latex(tmp_path)
    assert src.root == "paper.tex"


def test_decoding_warning_of_a_folder_file_is_kept(tmp_path):
    (tmp_path / "main.tex").write_bytes(
        "\\documentclass{article}\\begin{document}Caf\u00e9 \\input{sec}\\end{document}".encode("latin-1"))
    (tmp_path / "sec.tex").write_text("Section text.")
    src = load_latex(tmp_path)
    assert any("main.tex" in w.message and "latin-1" in w.message for w in src.warnings)
