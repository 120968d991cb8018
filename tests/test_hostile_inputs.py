"""One guarded door per kind of input (issue 22, items 2-5 and 9): each case is the hostile input the
issue names, at the size it names, through the CLI as a user types it. Each asserts the exit code, the
one-line message (or the result a user relies on), a hang guard on the wall time and the peak memory of
the whole process tree (the run itself plus its largest child: parse workers).

The loopback server plays the hostile endpoint (``checklist_eval.testing.misbehave`` modes; batch
faults in ``checklist_eval.testing.batches``), with the real ``openai`` client over real HTTP.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest
from helpers import one_error_line, run_measured

from checklist_eval.testing import MockServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "submissions"
PAPER = FIXTURES / "team-alpha" / "genuine_sga.tex"
HANG_GUARD_S = 120  # far above what a bounded run takes; the unbounded ones ran for minutes or forever
RSS_BOUND_MB = 600
KEY = "sk-test-doors-0123456789abcdef"


def run(tmp_path, *args, hang_guard_s: float = HANG_GUARD_S, rss_mb: float = RSS_BOUND_MB, **env):
    result = run_measured(args, cwd=tmp_path, env_extra={"OPENAI_API_KEY": KEY, **env}, hang_guard_s=600)
    assert result.wall_s < hang_guard_s, result
    assert result.rss_mb < rss_mb, result
    return result


def llm(server, *more: str) -> list[str]:
    return ["--assessor", "llm", "--model", "gpt-4o-mini", "--base-url", server.base_url, *more]


# ------------------------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(("flag", "value", "words"), [
    ("--max-cost", "nan", ["--max-cost nan", "finite"]),  # hung forever: the budget check never passed
    ("--temperature", "nan", ["--temperature", "finite"]),  # internal error: not JSON compliant
    ("--timeout", "nan", ["--timeout", "finite"]),  # internal error: deadline must not be NaN
    ("--rpm", "nan", ["--rpm", "finite"]),
    ("--tpm", "inf", ["--tpm", "finite"]),
    ("--parse-timeout", "nan", ["--parse-timeout", "finite"]),
    ("--timeout", "-1", ["--timeout -1", "above 0"]),
    ("--max-cost", "-5", ["--max-cost -5", "at least 0"]),
    ("--concurrency", "9" * 30, ["--concurrency", "at most"]),
])
def test_a_numeric_flag_not_finite_or_out_of_range_is_one_line_before_any_request(tmp_path, flag, value, words):
    with MockServer() as server:
        r = run(tmp_path, "check", PAPER, *llm(server, "--no-cache"), flag, value)
        assert server.stats.chat_requests == 0
    one_error_line(r, *words)


@pytest.mark.parametrize(("price", "words"), [
    ("NaN", ["prices.json", "gpt-4o-mini", "'input'", "finite"]),  # hung forever under --max-cost
    ("-1", ["prices.json", "gpt-4o-mini", "'input'", "at least 0"]),  # switched the cap off
    ("1e400", ["prices.json", "'input'", "finite"]),
])
def test_a_price_that_is_not_a_finite_non_negative_number_is_refused(tmp_path, price, words):
    prices = tmp_path / "prices.json"
    prices.write_text('{"gpt-4o-mini": {"input": %s, "output": 0.6}}' % price)
    with MockServer() as server:
        r = run(tmp_path, "check", PAPER, *llm(server, "--no-cache", "--prices", prices, "--max-cost", "1"))
        assert server.stats.chat_requests == 0
    one_error_line(r, *words)


def test_usage_claiming_1e300_tokens_is_clamped_and_the_records_read_back(tmp_path):
    """Online (misbehave huge-usage) and from a provider batch job (batch fault huge-usage): the
    records hold clamped figures that rescore and leaderboard read. One submission: every call of it
    claims the huge usage, so more submissions would only repeat the same clamp."""
    shutil.copytree(FIXTURES / "team-alpha", tmp_path / "subs" / "team-alpha")
    with MockServer(misbehave="huge-usage") as server:
        online = run(tmp_path, "batch", tmp_path / "subs", "--out", tmp_path / "online", *llm(server, "--no-cache"))
    with MockServer() as server:
        server.batches.fault = "huge-usage"
        batched = run(tmp_path, "batch", tmp_path / "subs", "--out", tmp_path / "batched", "--via", "batch-api",
                      *llm(server, "--cache", tmp_path / "batch-cache.sqlite"))
    for r, out in ((online, "online"), (batched, "batched")):
        assert r.code == 0, r
        assert (tmp_path / out / "failures.jsonl").read_text() == ""
        rows = list(csv.DictReader((tmp_path / out / "records.csv").open()))
        assert rows and max(int(row["prompt_tokens"]) for row in rows) == 10**12
        assert run(tmp_path, "rescore", tmp_path / out).code == 0
        board = run(tmp_path, "leaderboard", tmp_path / out, "--json")
        assert board.code == 0 and [r["submission_id"] for r in json.loads(board.out)] == ["team-alpha"], board


# ---------------------------------------------------------------------------------------------- HTTP


@pytest.mark.parametrize(("mode", "words"), [
    ("drip", ["APITimeoutError", "within the 2 s deadline"]),  # held far past --timeout by a second client
    ("huge-announce", ["2147483648 bytes announced", "16 MiB cap"]),
    ("huge-stream", ["larger than the 16 MiB cap"]),  # a 2 GB reply took it to 1.27 GB
    ("json-array", ["MalformedResponse", "not a completions object"]),
])
def test_contamination_goes_through_the_one_bounded_client(tmp_path, mode, words):
    with MockServer(misbehave=mode) as server:
        r = run(tmp_path, "contamination", PAPER, "--model", "m", "--base-url", server.base_url, "--timeout", "2",
                "--max-chunks", "2", hang_guard_s=60, rss_mb=300)
    line = one_error_line(r, *words)
    assert KEY not in line and KEY not in r.out


def test_an_endpoint_dripping_every_reply_stops_the_run_once_it_failed_the_same_way(tmp_path):
    """--timeout 2 --max-attempts 2 against three submissions: every other question kept trying (146 s
    measured before); the breaker stops every request once the attempts in flight all timed out."""
    shutil.copytree(FIXTURES, tmp_path / "subs")
    with MockServer(misbehave="drip") as server:
        r = run(tmp_path, "batch", tmp_path / "subs", "--out", tmp_path / "out", "--json",
                *llm(server, "--no-cache", "--timeout", "2", "--max-attempts", "2", "--concurrency", "8"),
                hang_guard_s=45, rss_mb=400)
    assert r.code == 4, r  # every submission listed in failures.jsonl
    failures = [json.loads(line) for line in (tmp_path / "out" / "failures.jsonl").read_text().splitlines()]
    assert sorted(f["submission_id"] for f in failures) == ["team-alpha", "team-beta", "team-gamma"]
    # stopped by the breaker (EndpointDown) or, once the adaptive limit fell to one request in flight, by
    # the attempts running out on the same timeout: either way one line naming the timeout
    assert all("\n" not in f["error"] and "APITimeoutError" in f["error"] and "deadline" in f["error"]
               for f in failures), failures
    with MockServer(misbehave="drip") as server:
        check = run(tmp_path, "check", PAPER, *llm(server, "--no-cache", "--timeout", "2", "--max-attempts", "2",
                                                   "--concurrency", "8"), hang_guard_s=45)  # once the limit fell to 1, the breaker follows it: 5 timeouts, not 8
    one_error_line(check, "within the 2 s deadline")


def test_a_batch_reported_complete_at_creation_is_downloaded_not_paid_again(tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "subs")
    with MockServer() as server:
        server.batches.fault = "complete-at-create"
        r = run(tmp_path, "batch", tmp_path / "subs", "--out", tmp_path / "out", "--via", "batch-api", "--json",
                *llm(server, "--cache", tmp_path / "cache.sqlite"))
        online = server.stats.chat_requests - sum(len(b.lines) for b in server.batches.batches.values())
    assert r.code == 0, r
    assert json.loads(r.out)["scored"] == 3
    assert online == 0  # every request was paid again online (98 requests) before


def test_garbage_from_the_batches_endpoint_is_one_line(tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "subs")
    with MockServer() as server:
        server.batches.fault = "garbage"
        r = run(tmp_path, "batch", tmp_path / "subs", "--out", tmp_path / "out", "--via", "batch-api", "--quiet",
                *llm(server, "--cache", tmp_path / "cache.sqlite"))
    one_error_line(r, "batch create", "not a file or batch object")


# ------------------------------------------------------------------------------------------- console


def test_a_24_mb_name_with_escape_sequences_reaches_the_terminal_cut_and_inert(tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "subs")
    assert run(tmp_path, "batch", tmp_path / "subs", "--out", tmp_path / "out").code == 0
    name = "\x1b]0;owned\x07\x1b[2J" + "n" * (24 << 20) + "\u202e"
    # results.sqlite is what every reader reads (failures.jsonl is an export, set aside when edited): the
    # hostile name is put where a reader takes it from, as a hand-edited or hostile database would hold it
    import sqlite3

    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        run_id = db.execute("SELECT max(id) FROM runs").fetchone()[0]
        db.execute("INSERT INTO failures (run_id, submission_id, source, error) VALUES (?, ?, ?, ?)",
                   (run_id, name, name, f"{name}: not a submission"))
    for args in ((), ("--json",)):
        r = run(tmp_path, "leaderboard", tmp_path / "out", *args, rss_mb=1024)
        assert r.code == 0, r
        shown = r.out + r.err
        assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
        assert "\\u001b]0;owned\\u0007" in shown
        if not args:
            assert len(r.out) < 100_000, len(r.out)  # cut, not a 24 MB table cell


def test_escape_sequences_in_an_error_line_are_shown_inert(tmp_path):
    bad = tmp_path / "team-\x1b[31m\u202eevil"
    bad.mkdir()
    (bad / "notes.tex").write_text("x")
    r = run(tmp_path, "validate", bad)
    line = one_error_line(r, "genuine_")
    assert "\x1b" not in line and "\u202e" not in line and "\\u001b[31m\\u202eevil" in line


# -------------------------------------------------------------------------------------- JSON, caches


def _deep(tmp_path: Path, name: str, wrap: str = "{}") -> Path:
    path = tmp_path / name
    path.write_text(wrap.replace("{}", "[" * 100_000 + "]" * 100_000))
    return path


def test_deeply_nested_json_is_one_line_in_every_reader(tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "subs")
    assert run(tmp_path, "batch", tmp_path / "subs", "--out", tmp_path / "out").code == 0
    one_error_line(run(tmp_path, "check", PAPER, "--assessor", "llm", "--model", "m", "--dry-run", "--prices",
                       _deep(tmp_path, "prices.json")), "prices.json", "nested deeper than 64 levels")
    one_error_line(run(tmp_path, "contamination", "--logprobs",
                       _deep(tmp_path, "lp.jsonl", '{"id": "a", "tokens": {}}\n')), "lp.jsonl", "nested")
    one_error_line(run(tmp_path, "parse", PAPER, "--questions", _deep(tmp_path, "q.json")), "nested")
    (tmp_path / "out" / "batch_run.json").write_text('{"options": ' + "[" * 100_000 + "]" * 100_000 + "}")
    one_error_line(run(tmp_path, "ingest", tmp_path / "out", "--responses", tmp_path / "lp.jsonl"),
                   "batch_run.json", "nested deeper than 64 levels")
    (tmp_path / "out" / "records.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    (tmp_path / "out" / "records.csv").unlink()
    # beside its database an edited export decides nothing: set aside, the scores read from results.sqlite
    beside = run(tmp_path, "rescore", tmp_path / "out")
    assert beside.code == 0 and "set aside" in beside.err, beside
    (tmp_path / "lone").mkdir()  # a lone ledger is read as a ledger: the nesting is one line
    shutil.copy(tmp_path / "out" / "records.jsonl", tmp_path / "lone" / "records.jsonl")
    one_error_line(run(tmp_path, "rescore", tmp_path / "lone" / "records.jsonl"), "records.jsonl", "nested")


@pytest.mark.parametrize("kind", ["text", "folder", "fifo"])
def test_a_cache_that_is_not_a_database_is_named_in_one_line(tmp_path, kind):
    cache = tmp_path / "cache.sqlite"
    if kind == "text":
        cache.write_text("not a database, just text " * 40)
    elif kind == "folder":
        cache.mkdir()
    else:
        os.mkfifo(cache)
    with MockServer() as server:
        r = run(tmp_path, "check", PAPER, *llm(server, "--cache", cache), hang_guard_s=60)
        assert server.stats.chat_requests == 0
    one_error_line(r, str(cache), {"text": "not an SQLite database", "folder": "folder", "fifo": "FIFO"}[kind])
    one_error_line(run(tmp_path, "logs", "--cache", cache, hang_guard_s=60), str(cache))


def test_half_a_surrogate_pair_in_replies_is_kept_as_a_replacement_character(tmp_path):
    with MockServer(misbehave="lone-surrogate") as server:
        r = run(tmp_path, "check", PAPER, "--out", tmp_path / "out", "--json", *llm(server, "--no-cache"))
    assert r.code == 0, r
    reviews = [it["review"] for it in json.loads(r.out)["items"]]
    assert reviews and all("\ufffd" in review for review in reviews)
    assert (tmp_path / "out" / "check.json").is_file()


# ----------------------------------------------------------------------------------------- results


def test_other_archives_in_a_batch_root_are_reported_not_skipped(tmp_path):
    root = tmp_path / "subs"
    shutil.copytree(FIXTURES, root)
    shutil.make_archive(str(root / "team-delta"), "gztar", root, "team-alpha")
    (root / "team-eps.rar").write_bytes(b"Rar!\x1a\x07\x00" + b"\0" * 64)
    r = run(tmp_path, "batch", root, "--out", tmp_path / "out", "--json")
    assert r.code == 4 and json.loads(r.out)["failed"] == 2, r  # 4: ran to its end, some failed
    failures = {f["submission_id"]: f["error"] for f in
                map(json.loads, (tmp_path / "out" / "failures.jsonl").read_text().splitlines())}
    assert set(failures) == {"team-delta", "team-eps"}
    assert all("must be a .zip file" in error for error in failures.values())


def test_leaderboard_lists_a_run_in_which_every_submission_failed(tmp_path):
    for team in ("a", "b"):
        (tmp_path / "subs" / team).mkdir(parents=True)
        (tmp_path / "subs" / team / "notes.txt").write_text("no paper")
    assert run(tmp_path, "batch", tmp_path / "subs", "--out", tmp_path / "out").code == 4
    r = run(tmp_path, "leaderboard", tmp_path / "out", "--csv", tmp_path / "board.csv")
    assert r.code == 0, r
    rows = list(csv.DictReader((tmp_path / "board.csv").open()))
    assert [(row["submission_id"], row["status"].split(":")[0]) for row in rows] == [("a", "failed"), ("b", "failed")]


def test_score_with_out_inside_the_submission_reruns(tmp_path):
    """``--out`` inside the submission scored is refused in one line (its files would sit among the papers
    read: issue 43); beside it, a second run reads its own folder and gives the same scores."""
    sub = tmp_path / "team"
    shutil.copytree(FIXTURES / "team-alpha", sub)
    one_error_line(run(tmp_path, "score", sub, "--out", sub / "results", "--json"), "among the papers")
    assert not (sub / "results").exists()
    first = run(tmp_path, "score", sub, "--out", tmp_path / "results", "--json")
    second = run(tmp_path, "score", sub, "--out", tmp_path / "results", "--json")
    assert first.code == 0 and second.code == 0, second
    assert json.loads(first.out)["S"] == json.loads(second.out)["S"]


def test_conflicting_override_rows_are_refused_naming_both(tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "subs")
    assert run(tmp_path, "batch", tmp_path / "subs", "--out", tmp_path / "out").code == 0
    question = next(csv.DictReader((tmp_path / "out" / "records.csv").open()))["question_id"]
    overrides = tmp_path / "overrides.csv"
    overrides.write_text("submission_id,role,question_id,correct\n"
                         f"team-alpha,G,{question},1\nteam-beta,G,{question},1\nteam-alpha,g,{question},0\n")
    for command in ("rescore", "leaderboard"):
        one_error_line(run(tmp_path, command, tmp_path / "out", "--overrides", overrides),
                       "overrides.csv", "row 2 and row 4", f"team-alpha/G/{question}")


def test_long_team_names_differing_in_case_are_both_scored_under_short_ids(tmp_path):
    root = tmp_path / "subs"
    names = ["T" + "eam" * 84, "t" + "eam" * 84]  # 253 characters: room for no suffix on most file systems
    for name in names:
        shutil.copytree(FIXTURES / "team-gamma", root / name)
    r = run(tmp_path, "batch", root, "--out", tmp_path / "out", "--json")
    assert r.code == 0 and json.loads(r.out)["scored"] == 2, r
    ids = sorted(p.name for p in (tmp_path / "out" / "submissions").iterdir())
    assert len(ids) == 2 and ids[0].lower() != ids[1].lower() and all(len(i) <= 64 for i in ids)
