"""Hostile inputs aimed at the parser, run through the CLI as typed: papers that crash, hang or exhaust
the parsing worker, inputs built to make scanning quadratic or expansion unbounded, papers that are not
regular files or lie outside the submission, and archives or encodings that would be misread.

Every case asserts the exit code, a one-line message naming the file, a time bound, the peak memory of
the whole process tree (the CLI and its parsing workers, sampled from /proc while it runs), and that
nothing outside the output folder changed (nor anything was left in TMPDIR).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import time
import warnings
import zipfile
import zlib
from pathlib import Path

import pytest
from helpers import one_error_line, pdf_bytes

from checklist_eval.testing import worstcases
from checklist_eval.testing.proctree import descendants, tree_rss_kb
from checklist_eval.errors import InputError

from test_hostile import GOOD_ANSWERS, GOOD_TEX, paper_with, snapshot, zip_bytes

# The whole process tree's peak resident memory; the parsing worker's own limit is 2048 MB by default,
# and every case here stays far below it.
TREE_RSS_LIMIT_MB = 1200
TIME_LIMIT_S = 60  # far above what each case needs; a case that hangs or scans quadratically fails it
WORST_CASE_BYTES = 2 * 1024 * 1024
MIB = 1 << 20


# ------------------------------------------------------------------------------------------ running


class Run:
    def __init__(self, code, out, err, seconds, tree_mb):
        self.code, self.out, self.err, self.seconds, self.tree_mb = code, out, err, seconds, tree_mb

    def __repr__(self):
        return f"Run(code={self.code}, {self.seconds:.1f} s, tree {self.tree_mb:.0f} MB, err={self.err[-400:]!r})"


@pytest.fixture()
def cli(tmp_path):
    home, tmpdir = tmp_path / "home", tmp_path / "tmpdir"
    home.mkdir()
    tmpdir.mkdir()

    def run(*args: str, out: Path | None = None) -> Run:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHECKLIST_EVAL_"))}
        env.update(HOME=str(home), TMPDIR=str(tmpdir), COLUMNS="200", CHECKLIST_EVAL_TEX_CACHE=os.environ.get("CHECKLIST_EVAL_TEX_CACHE", ""))
        skip = (tmpdir, out) if out is not None else (tmpdir,)
        before = snapshot(tmp_path, skip)
        peak = [0]
        started = time.perf_counter()
        with open(tmp_path / ".stdout", "w+b") as so, open(tmp_path / ".stderr", "w+b") as se:
            proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", *args], stdout=so, stderr=se,
                                    env=env, cwd=tmp_path, start_new_session=True)
            while proc.poll() is None:
                peak[0] = max(peak[0], tree_rss_kb(proc.pid)[0])
                if time.perf_counter() - started > 3 * TIME_LIMIT_S:
                    os.killpg(proc.pid, 9)  # a hang guard, so the suite ends; the assertion below fails
                time.sleep(0.02)
            seconds = time.perf_counter() - started
            so.seek(0)
            se.seek(0)
            result = Run(proc.returncode, so.read().decode("utf-8", "replace"),
                         se.read().decode("utf-8", "replace"), seconds, peak[0] / 1024)
        after = snapshot(tmp_path, skip)
        for f in (".stdout", ".stderr"):
            before.pop(f, None)
            after.pop(f, None)
        assert "Traceback" not in result.err and "internal error" not in result.err, result
        assert result.seconds < TIME_LIMIT_S, result
        assert result.tree_mb < TREE_RSS_LIMIT_MB, result
        changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
        assert not changed, f"written outside the output folder: {sorted(changed)[:10]}"
        assert not any(tmpdir.iterdir()), f"left in TMPDIR: {list(tmpdir.iterdir())[:5]}"
        return result

    return run


def answers(run: Run) -> int:
    assert run.code == 0, run
    return sum(1 for it in json.loads(run.out)["items"] if it["answer"] in ("Yes", "No", "NA"))


# ------------------------------------------------------------------------------------------ builders


def flate_bomb_pdf(path: Path, n_mib: int) -> None:
    """A small PDF whose one content stream inflates to ``n_mib`` MiB (zlib stream built from a
    repeated full-flush deflate chunk, so it is cheap to build)."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = co.compress(b" " * MIB) + co.flush(zlib.Z_FULL_FLUSH)
    final = zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    adler = 1
    block = b" " * MIB
    for _ in range(n_mib):
        adler = zlib.adler32(block, adler)
    stream = b"\x78\xda" + chunk * n_mib + final + adler.to_bytes(4, "big")
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R >>"]
    path.write_bytes(pdf_bytes(objs, b"1.4"))


def submission(root: Path, name: str, files: dict[str, bytes | str]) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data.encode() if isinstance(data, str) else data)
    return folder


# ------------------------------------------------------------------------------------ isolation class


def test_paper_over_the_time_budget_fails_alone_with_one_line(cli, tmp_path):
    (tmp_path / "slow").mkdir()
    path = worstcases.write_case(tmp_path / "slow", "10,000+ checklist headings", WORST_CASE_BYTES)
    one_error_line(cli("parse", str(path), "--parse-timeout", "0.2"), "paper.tex", "longer than 0.2 s")


def test_latex_over_the_memory_limit_fails_with_one_line(cli, tmp_path):
    (tmp_path / "big").mkdir()
    path = worstcases.write_case(tmp_path / "big", "10,000+ checklist headings", 4 * MIB)
    one_error_line(cli("parse", str(path), "--parse-memory", "60"), "paper.tex", "more than 60 MB")


def test_pdf_over_the_memory_limit_fails_alone_with_one_line(cli, tmp_path):
    path = tmp_path / "bomb.pdf"
    flate_bomb_pdf(path, 2048)
    assert path.stat().st_size < 4 * MIB
    run = cli("parse", str(path), "--parse-memory", "600")
    one_error_line(run, "bomb.pdf")


def test_batch_goes_on_past_papers_that_hang_exhaust_or_fail(cli, tmp_path):
    root = tmp_path / "root"
    submission(root, "good", {"genuine_p.tex": GOOD_TEX})
    slow = worstcases.CASES["10,000+ checklist headings"](WORST_CASE_BYTES)["paper.tex"]
    submission(root, "slow", {"genuine_p.tex": slow})
    (root / "bomb").mkdir()
    flate_bomb_pdf(root / "bomb" / "genuine_p.pdf", 2048)
    submission(root, "later", {"genuine_q.tex": GOOD_TEX})
    out = tmp_path / "results"
    run = cli("batch", str(root), "--out", str(out), "--json", "--parse-timeout", "0.3", "--parse-memory", "600",
              out=out)
    assert run.code == 4, run  # ran to its end, some failed
    counts = json.loads(run.out)
    assert (counts["scored"], counts["failed"]) == (2, 2), counts
    failures = {json.loads(line)["submission_id"]: json.loads(line)["error"]
                for line in (out / "failures.jsonl").read_text().splitlines()}
    assert set(failures) == {"slow", "bomb"}
    assert "longer than 0.3 s" in failures["slow"]
    assert all("\n" not in e and "genuine_p" in e for e in failures.values())


def test_a_worker_killed_by_a_signal_is_reported_and_replaced(tmp_path):
    """The pool itself: a worker that dies mid-parse (as PDFium does with SIGTRAP) fails that paper with
    one line, and the next paper gets a fresh worker."""
    from checklist_eval.reading.isolation import ParserPool

    slow = worstcases.write_case(tmp_path, "self-referencing macros", 6 * MIB)
    good = tmp_path / "good.tex"
    good.write_text(GOOD_TEX)
    with ParserPool(1) as pool:
        pool.load_paper(good)  # warm: the worker exists
        (worker,) = pool._all
        killer = threading.Timer(0.5, os.kill, (worker.process.pid, 5))  # SIGTRAP
        killer.start()
        with pytest.raises(InputError, match=r"crashed on this file \(SIGTRAP;"):
            pool.load_paper(slow)
        killer.join()
        assert not worker.process.is_alive()
        assert sum(1 for it in pool.load_paper(good).checklist.items if it.answer) >= GOOD_ANSWERS
        (idle,) = pool._all
        idle.process.kill()  # dies between papers: the next paper must not be blamed
        idle.process.join()
        assert sum(1 for it in pool.load_paper(good).checklist.items if it.answer) >= GOOD_ANSWERS


def test_a_timed_out_worker_is_killed(tmp_path):
    from checklist_eval.reading.isolation import ParseLimits, ParserPool

    slow = worstcases.write_case(tmp_path, "self-referencing macros", 6 * MIB)
    with ParserPool(1, ParseLimits(timeout_s=0.3)) as pool:
        with pytest.raises(InputError, match="longer than 0.3 s"):
            pool.load_paper(slow)
        assert not pool._all  # retired
    # the killed worker is gone from the process table (not a zombie left running)
    assert all(not Path(f"/proc/{pid}").exists() or "checklist-eval-parser" not in Path(f"/proc/{pid}/cmdline")
               .read_bytes().decode(errors="replace") for pid in descendants(os.getpid())[1:])


def test_pdf_library_never_loaded_in_the_parent():
    code = ("import sys\nfrom checklist_eval.reading.isolation import isolated_load_paper\n"
            f"p = isolated_load_paper({str(Path(__file__).parents[1] / 'fixtures' / 'submissions' / 'team-alpha' / 'genuine_sga.tex')!r})\n"
            "import glob\n"
            "pdfs = sorted(glob.glob(sys.argv[1] + '/**/*.pdf', recursive=True))[:1]\n"
            "[isolated_load_paper(x) for x in pdfs]\n"
            "print('pypdfium2' in sys.modules, len(pdfs))\n")
    shared = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "anchor-sample" / "papers"
    out = subprocess.run([sys.executable, "-c", code, str(shared)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "False", out.stdout


# ----------------------------------------------------------------------------------- linear-time class


@pytest.mark.parametrize("case", sorted(worstcases.CASES))
def test_worst_case_inputs_parse_in_bounded_time(cli, tmp_path, case):
    folder = tmp_path / "case"
    folder.mkdir()
    path = worstcases.write_case(folder, case, WORST_CASE_BYTES)
    # The source evaluator's scanning is what these cases hold to linear time. With TeX on the machine
    # (--tex auto), TeX typesets them too (30,000 headings are a thousand pages), within its share of
    # --parse-timeout: bounded, but not by this harness's 60 s.
    run = cli("parse", str(path), "--json", "--tex", "never")
    if run.code == 2:
        one_error_line(run, str(path.name))
    else:
        assert run.code == 0, run
        assert json.loads(run.out)["items"]


def test_self_referencing_macros_keep_the_answers(cli, tmp_path):
    defs = "\\def\\a{\\a\\a}\\newcommand{\\b}{\\b\\b x}\\newcommand{\\ours}{\\b\\a}\n"
    text = GOOD_TEX.replace("\\begin{document}", defs + "\\begin{document}", 1)
    text = text.replace("We propose", "\\ours{} \\a \\b We propose", 1)
    (tmp_path / "p.tex").write_text(text)
    assert answers(cli("parse", str(tmp_path / "p.tex"), "--json")) == GOOD_ANSWERS


# ------------------------------------------------------------------------------- regular-files class


def test_paper_linking_out_of_the_submission_is_refused(cli, tmp_path):
    secret = tmp_path / "secret.tex"
    secret.write_text(GOOD_TEX)
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "genuine_p.tex").symlink_to(secret)
    one_error_line(cli("validate", str(sub)), "genuine_p.tex", "outside the submission")


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_paper_that_is_a_device_is_not_read(cli, tmp_path, target):
    if not Path(target).exists():
        pytest.skip(f"{target} absent")
    link = tmp_path / "paper.tex"
    link.symlink_to(target)
    one_error_line(cli("parse", str(link)), "paper.tex", "not a regular file")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "genuine_p.pdf").symlink_to(target)
    one_error_line(cli("validate", str(sub)), "genuine_p.pdf")


def test_question_set_that_is_a_fifo_is_not_read(cli, tmp_path):
    os.mkfifo(tmp_path / "questions.json")
    (tmp_path / "p.tex").write_text(GOOD_TEX)
    run = cli("parse", str(tmp_path / "p.tex"), "--questions", str(tmp_path / "questions.json"))
    one_error_line(run, "questions.json", "not a regular file")


def test_fifo_named_like_a_paper_does_not_block(cli, tmp_path):
    fifo = tmp_path / "paper.tex"
    os.mkfifo(fifo)
    one_error_line(cli("parse", str(fifo)), "paper.tex", "not a regular file")
    root = tmp_path / "root"
    submission(root, "good", {"genuine_p.tex": GOOD_TEX})
    (root / "piped").mkdir()
    os.mkfifo(root / "piped" / "genuine_p.tex")
    out = tmp_path / "out"
    run = cli("batch", str(root), "--out", str(out), "--json", out=out)
    assert run.code == 4, run
    assert (json.loads(run.out)["scored"], json.loads(run.out)["failed"]) == (1, 1)
    assert "not a regular file" in (out / "failures.jsonl").read_text()


def test_fifo_and_device_inside_a_project_are_skipped(cli, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.tex").write_text(GOOD_TEX.replace("\\maketitle", "\\maketitle\\input{extra}"))
    os.mkfifo(project / "extra.tex")
    (project / "zero.tex").symlink_to("/dev/zero")
    run = cli("parse", str(project), "--json")
    assert answers(run) == GOOD_ANSWERS


def test_submission_zip_is_read_in_memory(cli, tmp_path):
    long_name = "genuine_" + "x" * 290 + ".tex"
    sub = tmp_path / "team.zip"
    sub.write_bytes(zip_bytes({long_name: GOOD_TEX}))
    run = cli("validate", str(sub), "--json")  # the harness checks TMPDIR stays empty
    assert run.code == 0, run
    assert json.loads(run.out)["papers"]["G"]["answers"]["Yes"] >= 1


# ------------------------------------------------------------------------------- honest-reading class


def test_endinput_ends_the_file(cli, tmp_path):
    all_yes = paper_with().replace("\\answerNA{}", "\\answerYes{}")
    checklist = all_yes[all_yes.index("\\section*{NeurIPS Paper Checklist}"):]
    text = GOOD_TEX.replace("\\end{document}", "\\end{document}\n", 1)
    text = text[: text.index("\\end{document}")] + "\\endinput\n" + checklist
    (tmp_path / "p.tex").write_text(text)
    run = cli("parse", str(tmp_path / "p.tex"), "--json")
    got = [it["answer"] for it in json.loads(run.out)["items"]]
    (tmp_path / "good.tex").write_text(GOOD_TEX)
    want = [it["answer"] for it in json.loads(cli("parse", str(tmp_path / "good.tex"), "--json").out)["items"]]
    assert got == want and "NA" in got


def _raw_zip(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        warnings.simplefilter("ignore")  # "Duplicate name": the point of the test
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


@pytest.mark.parametrize("members,words", [
    ([("main.tex", GOOD_TEX.encode()), ("main.tex", paper_with("x").encode())], ["duplicate", "main.tex"]),
    ([("main.tex", GOOD_TEX.encode()), ("main.tex/x.tex", b"\\section{x}")], ["file and a folder", "main.tex"]),
    ([("a/main.tex", GOOD_TEX.encode()), ("a", b"x")], ["file and a folder", "'a'"]),
])
def test_ambiguous_zip_is_refused(cli, tmp_path, members, words):
    path = tmp_path / "paper.zip"
    path.write_bytes(_raw_zip(members))
    one_error_line(cli("parse", str(path)), "paper.zip", *words)
    sub = tmp_path / "team.zip"
    sub.write_bytes(_raw_zip([("genuine_p/" + n, d) for n, d in members]))
    one_error_line(cli("validate", str(sub)), "team.zip", *words[:1])


def test_corrupt_deflate_member(cli, tmp_path):
    data = bytearray(zip_bytes({"main.tex": GOOD_TEX}))
    start = data.index(b"main.tex") + len("main.tex")
    data[start + 10 : start + 40] = b"\xff" * 30  # inside the compressed data
    path = tmp_path / "paper.zip"
    path.write_bytes(bytes(data))
    one_error_line(cli("parse", str(path)), "paper.zip", "main.tex")


def test_truncated_tar_gz(cli, tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for i in range(3):
            data = (GOOD_TEX + "%" * 20000 + str(i)).encode()
            info = tarfile.TarInfo(f"main{i}.tex")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    path = tmp_path / "paper.tar.gz"
    path.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    one_error_line(cli("parse", str(path)), "paper.tar.gz", "truncated")


def test_utf16_file_is_decoded_with_a_warning(cli, tmp_path):
    path = tmp_path / "p.tex"
    path.write_bytes(GOOD_TEX.encode("utf-16"))
    run = cli("parse", str(path), "--json")
    assert answers(run) == GOOD_ANSWERS
    assert any("UTF-16" in w for w in json.loads(run.out)["warnings"])


def plain_tar(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_tar_named_zip_is_named_as_such(cli, tmp_path):
    path = tmp_path / "team.zip"
    path.write_bytes(plain_tar("genuine_p.tex", GOOD_TEX.encode()))
    one_error_line(cli("validate", str(path)), "team.zip", "tar archive")
    run = cli("parse", str(path), "--json")  # a project: its content decides how it is read
    assert answers(run) == GOOD_ANSWERS


def test_plain_tar_is_recognised_whatever_its_name(cli, tmp_path):
    path = tmp_path / "paper.bin"
    path.write_bytes(plain_tar("main.tex", GOOD_TEX.encode()))
    assert answers(cli("parse", str(path), "--json")) == GOOD_ANSWERS


_NO_MEMORY_TO_SAY_SO = """
import sys
from checklist_eval.reading import isolation

class FullPipe:  # a worker whose every send fails for lack of memory, as one at its limit did in CI
    def send(self, message):
        raise MemoryError

isolation._say_out_of_memory(FullPipe(), ["the reply that did not fit"] * 1000)
print("returned", file=sys.stderr)
"""


def test_a_worker_with_no_memory_to_say_so_exits_quietly_with_the_code_read_as_over_memory():
    """CI caught a parse worker at its --parse-memory limit failing to pickle even the short "memory" reply:
    it printed a traceback and the paper was called a crash ("exit code 1") instead of over the limit."""
    from checklist_eval.reading.isolation import MEMORY_EXIT_CODE, _over_memory

    done = subprocess.run([sys.executable, "-c", _NO_MEMORY_TO_SAY_SO], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (MEMORY_EXIT_CODE, "")
    assert _over_memory(60) == "parsing needed more than 60 MB (--parse-memory); stopped"
