"""Hostile submissions, built here in tmp_path (no binary blobs in the repository), run through the CLI in a
subprocess. For each: a clear one-line error or a warning, exit 2 where nothing can be scored, no traceback,
nothing written outside the output folder (nor left in the temp folder), and bounded memory.

Memory bound: every child's own peak RSS stays under ``RSS_LIMIT_MB``, the figure the README's "Limits
and guarantees" states. The child reports it (``VmHWM`` of its address space after exec) when it exits:
``ru_maxrss`` from ``wait4`` would also count the forked copy of this pytest process from before exec. A hang guard (``HANG_GUARD_S``) kills a child that would never end; it is
not a timing assertion.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tarfile
import threading
import zipfile
import zlib
from pathlib import Path

import pytest
from helpers import one_error_line, pdf_bytes

from checklist_eval.reading import sources
from checklist_eval.reading.parsing import load_paper

RSS_LIMIT_MB = 1024
# Runs ``python -m checklist_eval ARGS`` and, at exit, writes the process's own peak RSS (kB) to $CE_PEAK_FILE.
RUN_REPORTING_PEAK = """
import atexit, os, runpy

def report_peak():
    with open("/proc/self/status") as status:
        kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(os.environ["CE_PEAK_FILE"], "w") as out:
        out.write(kb)

atexit.register(report_peak)
runpy.run_module("checklist_eval", run_name="__main__", alter_sys=True)
"""
HANG_GUARD_S = 300
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "submissions"
GOOD_TEX = (FIXTURES / "team-alpha" / "genuine_sga.tex").read_text("utf-8")
MIB = 1 << 20
# Answers the fixture paper gives (Yes/No/NA): a paper built from it keeps them all when parsing goes right.
GOOD_ANSWERS = sum(1 for it in load_paper(FIXTURES / "team-alpha" / "genuine_sga.tex").checklist.items
                   if it.answer is not None and it.answer.is_answered)


# ------------------------------------------------------------------------------------------ running


class Run:
    def __init__(self, code: int, out: str, err: str, rss_mb: float):
        self.code, self.out, self.err, self.rss_mb = code, out, err, rss_mb

    def __repr__(self) -> str:
        return f"Run(code={self.code}, rss={self.rss_mb:.0f} MB, err={self.err[-400:]!r})"


def snapshot(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, tuple[int, int]]:
    """Every file and folder under root (except ``skip``) with its size and mtime."""
    snap = {}
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        dirnames[:] = [n for n in dirnames if d / n not in skip]
        for name in dirnames + filenames:
            p = d / name
            st = p.lstat()
            snap[str(p.relative_to(root))] = (st.st_size if not stat.S_ISDIR(st.st_mode) else 0, st.st_mtime_ns)
    return snap


@pytest.fixture()
def cli(tmp_path):
    """Run ``python -m checklist_eval ARGS`` with HOME and TMPDIR inside tmp_path; check the common rules."""
    home, tmpdir = tmp_path / "home", tmp_path / "tmpdir"
    home.mkdir()
    tmpdir.mkdir()

    def run(*args: str, out: Path | None = None) -> Run:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHECKLIST_EVAL_"))}
        peak_file = tmp_path / ".peak"
        env.update(HOME=str(home), TMPDIR=str(tmpdir), COLUMNS="200", CE_PEAK_FILE=str(peak_file),
                   CHECKLIST_EVAL_TEX_CACHE=os.environ.get("CHECKLIST_EVAL_TEX_CACHE", ""))
        # TMPDIR is checked on its own: the parser may use it, but must leave it empty.
        skip = (tmpdir, out) if out is not None else (tmpdir,)
        before = snapshot(tmp_path, skip)
        with open(tmp_path / ".stdout", "w+b") as so, open(tmp_path / ".stderr", "w+b") as se:
            proc = subprocess.Popen([sys.executable, "-c", RUN_REPORTING_PEAK, *args], stdout=so, stderr=se,
                                    env=env, cwd=tmp_path)
            guard = threading.Timer(HANG_GUARD_S, proc.kill)
            guard.start()
            try:
                proc.wait()
            finally:
                guard.cancel()
            so.seek(0)
            se.seek(0)
            result = Run(proc.returncode, so.read().decode("utf-8", "replace"), se.read().decode("utf-8", "replace"),
                         int(peak_file.read_text()) / 1024 if peak_file.exists() else float("inf"))
            peak_file.unlink(missing_ok=True)
        after = snapshot(tmp_path, skip)
        for f in (".stdout", ".stderr"):
            before.pop(f, None)
            after.pop(f, None)
        assert "Traceback" not in result.err and "Traceback" not in result.out, result
        assert "internal error" not in result.err, result
        assert result.rss_mb < RSS_LIMIT_MB, result
        changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
        assert not changed, f"written outside the output folder: {sorted(changed)[:10]}"
        assert not any(tmpdir.iterdir()), f"left in TMPDIR: {list(tmpdir.iterdir())[:5]}"
        return result

    return run


# ------------------------------------------------------------------------------------------ builders


def _zeros_deflate_chunk() -> bytes:
    """Raw deflate of 1 MiB of zeros ending in a full flush: byte-aligned and history-free, so the chunk
    repeated k times is a valid stream of k MiB of zeros (how a bomb stays small to build and on disk)."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    return co.compress(b"\0" * MIB) + co.flush(zlib.Z_FULL_FLUSH)


_FINAL_BLOCK = zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # an empty final block


def _zeros_crc(n_mib: int, crc: int = 0) -> int:
    zero = b"\0" * MIB
    for _ in range(n_mib):
        crc = zlib.crc32(zero, crc)
    return crc


def write_zip_raw(path: Path, members: list[tuple[str, object]]) -> None:
    """A zip written member by member with ``struct`` so a member can be a bomb: each member is
    (name, bytes) or (name, ("bomb", n_mib, declared_size_or_None)); deflate data is streamed to disk."""
    chunk = _zeros_deflate_chunk()
    central = b""
    with path.open("wb") as fh:
        for name, content in members:
            raw_name = name.encode("utf-8")
            offset = fh.tell()
            if isinstance(content, tuple):
                _, n_mib, declared = content
                usize, crc, csize = n_mib * MIB, _zeros_crc(n_mib), len(chunk) * n_mib + len(_FINAL_BLOCK)
                usize_hdr = usize if declared is None else declared
                fh.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, csize, usize_hdr,
                                     len(raw_name), 0) + raw_name)
                for _ in range(n_mib):
                    fh.write(chunk)
                fh.write(_FINAL_BLOCK)
            else:
                data = bytes(content)
                co = zlib.compressobj(6, zlib.DEFLATED, -15)
                comp = co.compress(data) + co.flush()
                usize_hdr, crc, csize = len(data), zlib.crc32(data), len(comp)
                fh.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, csize, usize_hdr,
                                     len(raw_name), 0) + raw_name + comp)
            central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc, csize, usize_hdr,
                                   len(raw_name), 0, 0, 0, 0, 0o100644 << 16, offset) + raw_name
        cd_offset = fh.tell()
        fh.write(central)
        fh.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central),
                             cd_offset, 0))


def write_tar_gz_bomb(path: Path, name: str, n_mib: int, kind: bytes = tarfile.REGTYPE) -> None:
    """A .tar.gz whose one member (a file, or a pax header with ``kind=tarfile.XHDTYPE``) holds n_mib MiB
    of zeros, streamed as repeated deflate chunks."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = n_mib * MIB
    header = info.tobuf(format=tarfile.GNU_FORMAT)
    chunk = _zeros_deflate_chunk()
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = co.compress(header) + co.flush(zlib.Z_FULL_FLUSH)
    tail_plain = b"\0" * 1024  # two end-of-archive blocks (the member is block-aligned)
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    tail = co.compress(tail_plain) + co.flush()
    crc = zlib.crc32(tail_plain, _zeros_crc(n_mib, zlib.crc32(header)))
    total = len(header) + n_mib * MIB + len(tail_plain)
    with path.open("wb") as fh:
        fh.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")
        fh.write(head)
        for _ in range(n_mib):
            fh.write(chunk)
        fh.write(tail)
        fh.write(struct.pack("<II", crc, total & 0xFFFFFFFF))


def zip_bytes(members: dict[str, bytes | str], links: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name), data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return buf.getvalue()


def tar_gz(path: Path, members: dict[str, bytes], special: list[tarfile.TarInfo] = ()) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        for info in special:
            tf.addfile(info)
    return path


def link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def paper_with(extra_body: str = "", checklist: str | None = None) -> str:
    """The fixture paper with text added to its introduction (and optionally another checklist part)."""
    text = GOOD_TEX.replace("\\section{Introduction}\\label{sec:intro}\n",
                            "\\section{Introduction}\\label{sec:intro}\n" + extra_body + "\n", 1)
    assert extra_body == "" or extra_body in text
    if checklist is not None:
        start = text.index("\\section*{NeurIPS Paper Checklist}")
        text = text[:start] + checklist + "\n\\end{document}\n"
    return text


def parse_json(run: Run) -> dict:
    assert run.code == 0, run
    return json.loads(run.out)


# ------------------------------------------------------------------------------------------ archives


@pytest.mark.parametrize("kind,member,words", [
    ("zip", "../x.tex", ["escapes"]),
    ("zip", "paper/../../x.tex", ["escapes"]),
    ("zip", "/abs/x.tex", ["absolute"]),
    ("tar", "../x.tex", ["escapes"]),
    ("tar", "/abs/x.tex", ["absolute"]),
])
def test_archive_path_escape(cli, tmp_path, kind, member, words):
    members = {"main.tex": GOOD_TEX.encode(), member: b"\\section{Evil} overwrite"}
    if kind == "zip":
        path = tmp_path / "paper.zip"
        path.write_bytes(zip_bytes(members))
    else:
        path = tar_gz(tmp_path / "paper.tar.gz", members)
    one_error_line(cli("parse", str(path)), str(path.name), *words)
    assert not (tmp_path.parent / "x.tex").exists() and not Path("/abs/x.tex").exists()


def test_zip_symlink_member(cli, tmp_path):
    path = tmp_path / "paper.zip"
    path.write_bytes(zip_bytes({"main.tex": GOOD_TEX}, links={"sections/secret.tex": "/etc/passwd"}))
    one_error_line(cli("parse", str(path)), "link")


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE])
def test_tar_links(cli, tmp_path, kind):
    path = tar_gz(tmp_path / "paper.tgz", {"main.tex": GOOD_TEX.encode()},
                  [link("secret.tex", "/etc/passwd", kind), link("dev.tex", "main.tex", kind)])
    one_error_line(cli("parse", str(path)), "link")


def test_folder_symlink_to_outside_is_not_read(cli, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.tex").write_text("TOPSECRET-CONTENT \\section{Secret}")
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.tex").write_text(paper_with("\\input{secret}"))
    (project / "secret.tex").symlink_to(outside / "secret.tex")
    for target in (project, project / "main.tex"):
        run = cli("parse", str(target), "--json", "--with-body")
        # The link is skipped with a warning (the paper itself still parses); never read.
        assert "TOPSECRET" not in run.out + run.err, run
        assert run.code == 0, run
        doc = json.loads(run.out)
        assert any("secret" in w and "skipped" in w for w in doc["warnings"]), doc["warnings"]
        assert sum(1 for it in doc["items"] if it["answer"]) == GOOD_ANSWERS


def test_zip_bomb_rejected_by_limit(cli, tmp_path):
    path = tmp_path / "bomb.zip"
    write_zip_raw(path, [("main.tex", GOOD_TEX.encode()), ("zeros.tex", ("bomb", 1024, None))])
    assert path.stat().st_size < 2 * MIB  # 1 GiB of zeros, about 1 MB on disk
    assert zipfile.ZipFile(path).getinfo("zeros.tex").file_size == 1024 * MIB
    run = cli("parse", str(path))
    one_error_line(run, "zeros.tex")
    assert run.rss_mb < 300, run  # rejected from the header, nothing inflated


def test_zip_bomb_with_lying_header_stops_at_the_cap(cli, tmp_path):
    # The headers claim 1 KB; the data inflates to 256 MiB. The read is capped, so memory stays bounded.
    path = tmp_path / "liar.zip"
    write_zip_raw(path, [("main.tex", GOOD_TEX.encode()), ("zeros.tex", ("bomb", 256, 1000))])
    run = cli("parse", str(path))
    one_error_line(run, "liar.zip")
    # Read in 1 MiB chunks up to the cap: about 40 MB measured, where one big read() took 140.
    assert run.rss_mb < 120, run


def test_tar_bomb_rejected_by_limit(cli, tmp_path):
    path = tmp_path / "bomb.tar.gz"
    write_tar_gz_bomb(path, "zeros.tex", 256)
    assert path.stat().st_size < MIB
    with tarfile.open(path) as tf:  # a real, well-formed archive
        assert tf.next().size == 256 * MIB
    run = cli("parse", str(path))
    one_error_line(run, "zeros.tex")


def test_deeply_nested_archives(cli, tmp_path):
    data = zip_bytes({"main.tex": GOOD_TEX})
    for depth in range(40):
        data = zip_bytes({f"level{depth}.zip": data})
    path = tmp_path / "nested.zip"
    path.write_bytes(data)
    one_error_line(cli("parse", str(path)), "nested.zip")
    # The same as a paper inside a submission.
    sub = tmp_path / "sub.zip"
    sub.write_bytes(zip_bytes({"genuine_paper.zip": data}))
    one_error_line(cli("validate", str(sub)), "genuine_paper")


# ------------------------------------------------------------------------------------------ LaTeX


def test_input_cycle_is_a_warning(cli, tmp_path):
    project = tmp_path / "cycle"
    project.mkdir()
    (project / "main.tex").write_text(paper_with("\\input{a}"))
    (project / "a.tex").write_text("Part A. \\input{b}")
    (project / "b.tex").write_text("Part B. \\input{a} \\input{main}")
    doc = parse_json(cli("parse", str(project), "--json", "--with-body"))
    assert any("cycle" in w for w in doc["warnings"]), doc["warnings"]
    assert doc["body"].count("Part A.") == 1
    assert sum(1 for it in doc["items"] if it["answer"]) == GOOD_ANSWERS


def test_input_outside_the_project_is_skipped(cli, tmp_path):
    project = tmp_path / "deep" / "project"
    project.mkdir(parents=True)
    (project / "main.tex").write_text(paper_with("\\input{../../etc/passwd} \\input{/etc/passwd} \\include{../../../x}"))
    doc = parse_json(cli("parse", str(project / "main.tex"), "--json", "--with-body"))
    outside = [w for w in doc["warnings"] if "outside the project" in w]
    assert len(outside) >= 2, doc["warnings"]
    assert "root:" not in doc["body"]


def _single_line_paper(path: Path, size: int) -> None:
    n = size - len(paper_with().encode())
    path.write_text(paper_with(("lorem ipsum dolor sit amet " * (n // 27 + 1))[:n]))
    assert path.stat().st_size == size and path.read_text().count("\n") < 300


def test_huge_single_line_file(cli, tmp_path):
    # 20 MB on one line: refused from its size before anything is read into the parser.
    path = tmp_path / "huge.tex"
    _single_line_paper(path, 20 * MIB)
    one_error_line(cli("check", str(path), "--json"), "huge.tex", "larger")


def test_single_line_file_at_the_size_limit(cli, tmp_path):
    # check = parse + the heuristic assessor over the whole body (whose scan is capped, see heuristic.py)
    path = tmp_path / "big.tex"
    _single_line_paper(path, sources.MAX_TEX_BYTES)
    run = cli("check", str(path), "--json")
    assert run.code == 0, run  # parsed and assessed: the checklist is still found
    assert sum(1 for it in json.loads(run.out)["items"] if it["answer"]) == GOOD_ANSWERS


def test_file_over_the_size_limit(cli, tmp_path):
    path = tmp_path / "toolarge.tex"
    with path.open("w") as fh:
        fh.write(GOOD_TEX)
        fh.write("%" + "x" * (sources.MAX_MEMBER_BYTES + 10) + "\n")
    one_error_line(cli("parse", str(path)), "toolarge.tex", "larger")


def test_invalid_utf8_is_decoded_with_a_warning(cli, tmp_path):
    path = tmp_path / "latin.tex"
    path.write_bytes(paper_with("Caf\xe9 na\xefve r\xe9sum\xe9.").encode("latin-1"))
    with pytest.raises(UnicodeDecodeError):
        path.read_bytes().decode("utf-8")
    doc = parse_json(cli("parse", str(path), "--json", "--with-body"))
    assert any("latin-1" in w for w in doc["warnings"]), doc["warnings"]
    assert "Café" in doc["body"]


@pytest.mark.parametrize("name,content,words", [
    ("nul.tex", GOOD_TEX.encode()[:2000] + b"\x00\x00" + GOOD_TEX.encode()[2000:], ["NUL"]),
    ("image.tex", b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(256)) * 4, ["not a paper: an image (PNG)"]),
    ("empty.tex", b"", ["empty"]),
    ("blank.tex", b"  \n\n \t\n", ["empty"]),
    ("prose.tex", b"Just some words, no markup at all.\n" * 20, ["not LaTeX"]),
    ("fake.pdf", b"%PDF-1.7\n garbage that is not a PDF body", ["PDF"]),
])
def test_not_a_paper(cli, tmp_path, name, content, words):
    path = tmp_path / name
    path.write_bytes(content)
    one_error_line(cli("parse", str(path)), name, *words)
    one_error_line(cli("check", str(path)), name)


def test_pdf_without_text_layer(cli, tmp_path):
    pdfium = pytest.importorskip("pypdfium2")
    pdf = pdfium.PdfDocument.new()
    for _ in range(3):
        pdf.new_page(612, 792)
    path = tmp_path / "scanned.pdf"
    pdf.save(str(path))
    pdf.close()
    one_error_line(cli("parse", str(path)), "scanned.pdf", "text")
    one_error_line(cli("check", str(path)), "scanned.pdf")


def write_text_pdf(path: Path, n_pages: int, text: bytes) -> None:
    """A minimal PDF written by hand: n_pages pages sharing one content stream (small on disk)."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % (5 + i) for i in range(n_pages))
            + b"] /Count %d >>" % n_pages,
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    stream = b"BT /F1 12 Tf 72 720 Td (" + text + b") Tj ET"
    objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objs += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
             b" /Contents 4 0 R >>"] * n_pages
    path.write_bytes(pdf_bytes(objs, b"1.4"))


def test_pdf_with_thousands_of_pages(cli, tmp_path):
    path = tmp_path / "long.pdf"
    write_text_pdf(path, 5000, b"We report standard deviations over five seeds on one A100 GPU.")
    assert path.stat().st_size < MIB
    one_error_line(cli("parse", str(path)), "long.pdf", "more than 1000")


def test_checklist_with_every_answer_deleted(cli, tmp_path):
    import re

    stripped = re.sub(r"\\answer(?:Yes|No|NA|TODO)(?:\{[^{}]*\})?", "", GOOD_TEX)
    assert "\\answerYes" not in stripped and "Justification:" in stripped
    path = tmp_path / "noanswers.tex"
    path.write_text(stripped)
    # No answer mark left: no live checklist is found, and the paper is refused rather than scored.
    one_error_line(cli("parse", str(path), "--json"), "noanswers.tex", "checklist")
    one_error_line(cli("check", str(path)), "noanswers.tex", "checklist")


# ------------------------------------------------------------------------------------------ submissions


def _good_submission(dest: Path) -> Path:
    shutil.copytree(FIXTURES / "team-alpha", dest)
    return dest


def test_hostile_submission_zip_validate_and_score(cli, tmp_path):
    sub = tmp_path / "evil.zip"
    sub.write_bytes(zip_bytes({"genuine_p.tex": GOOD_TEX, "../../escape.tex": "x"}))
    one_error_line(cli("validate", str(sub)), "evil.zip", "escapes")
    out = tmp_path / "out"
    one_error_line(cli("score", str(sub), "--out", str(out), out=out), "evil.zip")
    assert not out.exists() or not any(out.rglob("result.json"))


def test_hostile_submissions_are_isolated_in_a_batch(cli, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _good_submission(root / "good")
    (root / "traversal.zip").write_bytes(zip_bytes({"genuine_p.tex": GOOD_TEX, "../x.tex": "x"}))
    write_zip_raw(root / "bomb.zip", [("genuine_p.tex", ("bomb", 1024, None))])
    png = root / "png"
    png.mkdir()
    (png / "genuine_p.tex").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    empty = root / "empty"
    empty.mkdir()
    (empty / "genuine_p.tex").write_bytes(b"")
    linked = root / "linked.zip"
    linked.write_bytes(zip_bytes({"genuine_p.tex": GOOD_TEX}, links={"truth_adversarial_p.tex": "/etc/passwd"}))
    out = tmp_path / "results"
    run = cli("batch", str(root), "--out", str(out), "--json", out=out)
    assert run.code == 4, run
    counts = json.loads(run.out)
    assert (counts["scored"], counts["failed"]) == (1, 5), counts
    failures = {json.loads(line)["submission_id"]: json.loads(line)["error"]
                for line in (out / "failures.jsonl").read_text().splitlines()}
    assert set(failures) == {"traversal", "bomb", "png", "empty", "linked"}
    assert all(e and "\n" not in e and "Traceback" not in e for e in failures.values())
    assert "escapes" in failures["traversal"] and "link" in failures["linked"]
    assert json.loads((out / "submissions" / "good" / "result.json").read_text())["case"] == "GAT"
    assert not (tmp_path / "x.tex").exists()
