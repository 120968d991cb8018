"""--via batch-api / jsonl, ingest and batch-status: the CLI as typed, against the loopback server's
/v1/files and /v1/batches through the real openai client, compared with the online path."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import openai
import pandas as pd
from cli_runner import run_cli
import pytest

from checklist_eval.testing import MockServer

MODEL = "mock-model"
VERDICT_COLUMNS = ["submission_id", "role", "question_id", "answer", "correct", "p_correct", "review"]


@pytest.fixture()
def root(submissions_copy):
    return submissions_copy


@pytest.fixture(scope="module")
def prices(tmp_path_factory):
    path = tmp_path_factory.mktemp("prices") / "prices.json"
    path.write_text(json.dumps({"models": {MODEL: {"input": 2.0, "output": 8.0, "batch_input": 1.0,
                                                   "batch_output": 4.0}}}))
    return path


@pytest.fixture()
def server():
    with MockServer() as s:
        s.batches.delay = 0.3
        yield s


def cli(*args, env=None, timeout=120):
    return run_cli(*args, env={**os.environ, "OPENAI_API_KEY": "", **(env or {})}, timeout=timeout)


def llm_flags(server, prices):
    return ["--assessor", "llm", "--model", MODEL, "--base-url", server.base_url, "--prices", prices]


def verdicts(out):
    recs = pd.read_csv(out / "records.csv", dtype=str, keep_default_na=False)
    return recs[VERDICT_COLUMNS].sort_values(["submission_id", "role", "question_id"]).reset_index(drop=True)


def scores(out):
    return pd.read_csv(out / "scores.csv", dtype={"submission_id": str}).drop(columns=["warnings"])


@pytest.fixture(scope="module")
def online(tmp_path_factory, fixtures_dir, prices):
    """The online run the other paths are compared with, made once and only read: on a server of its own
    (the loopback server's verdicts follow from the request alone, and a test's server counts only its
    own requests)."""
    tmp = tmp_path_factory.mktemp("online")
    shutil.copytree(fixtures_dir / "submissions", tmp / "subs")
    out = tmp / "online"
    with MockServer() as server:
        r = cli("batch", tmp / "subs", "--out", out, "--quiet", *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    return out


def ledger_cost(out):
    return json.loads((out / "summary.json").read_text())["usage_total"]["cost_usd"]


def test_batch_api_equals_online_split_files_and_batch_prices(root, tmp_path, server, prices, online):
    server.batches.failure_rate = 0.15  # those lines come back 500 and are retried online (the default)
    out = tmp_path / "batched"
    r = cli("batch", root, "--out", out, "--via", "batch-api", "--batch-max-requests", "40",
            *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    assert "created" in r.stderr and "completed" in r.stderr  # the progress lines
    pd.testing.assert_frame_equal(verdicts(out), verdicts(online))
    pd.testing.assert_frame_equal(scores(out), scores(online))
    # files split at the count limit, one batch per file, each within the limit
    batches = list(server.batches.batches.values())
    assert server.batches.uploads == len(batches) >= 3
    assert all(len(b.lines) <= 40 for b in batches)
    assert sum(b.failed for b in batches) > 0  # partial failures happened and were recovered
    # the ledger: batch-served calls at the batch rate, so the run costs less than online
    assert 0 < ledger_cost(out) < ledger_cost(online)
    # a rerun asks nothing: everything is cached, nothing is uploaded
    uploads, chats = server.batches.uploads, server.stats.chat_requests
    r = cli("batch", root, "--out", out, "--via", "batch-api", "--json", *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    assert (server.batches.uploads, server.stats.chat_requests) == (uploads, chats)
    assert json.loads(r.stdout)["resumed"] == 3


def _job_row(cache_path):
    if not cache_path.exists():
        return None
    try:
        db = sqlite3.connect(cache_path, timeout=5)
        try:
            return db.execute("SELECT batch_id, input_file_id FROM batch_jobs WHERE batch_id IS NOT NULL").fetchone()
        finally:
            db.close()
    except sqlite3.OperationalError:  # table not there yet
        return None


def test_killed_between_upload_and_download_resumes_without_resubmitting(root, tmp_path, server, prices, online):
    server.batches.delay = 3600  # the batch will not finish while the first process runs
    out = tmp_path / "killed"
    args = [sys.executable, "-m", "checklist_eval", "batch", str(root), "--out", str(out), "--via", "batch-api",
            "--quiet", *map(str, llm_flags(server, prices))]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "OPENAI_API_KEY": ""})
    try:
        deadline = time.monotonic() + 60
        while _job_row(out / "cache.sqlite") is None:
            assert proc.poll() is None, "the run ended before its batch was recorded"
            assert time.monotonic() < deadline, "no batch recorded within 60 s"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert not (out / "scores.csv").exists()
    assert server.batches.uploads == 1 and len(server.batches.batches) == 1
    # the organizer comes back: status shows the batch still running
    r = cli("batch-status", out, "--json")
    assert r.returncode == 0, r.stderr
    jobs = json.loads(r.stdout)
    assert [j["status"] for j in jobs] == ["in_progress"] and jobs[0]["downloaded"] is False
    server.batches.delay = 0.0
    r = cli("batch", root, "--out", out, "--via", "batch-api", *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    assert server.batches.uploads == 1 and len(server.batches.batches) == 1  # resumed, not resubmitted
    pd.testing.assert_frame_equal(verdicts(out), verdicts(online))
    pd.testing.assert_frame_equal(scores(out), scores(online))


def test_submit_only_then_status_then_finish(root, tmp_path, server, prices, online):
    out = tmp_path / "later"
    r = cli("batch", root, "--out", out, "--via", "batch-api", "--submit-only", *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    assert "batch-status" in r.stdout and not (out / "scores.csv").exists()
    time.sleep(0.4)  # past the batch delay
    r = cli("batch-status", out, "--json")
    assert r.returncode == 0, r.stderr
    (job,) = json.loads(r.stdout)
    assert job["status"] == "completed" and job["downloaded"] is True
    chat_before = server.stats.chat_requests
    r = cli("batch", root, "--out", out, "--via", "batch-api", *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    assert server.batches.uploads == 1 and server.stats.chat_requests == chat_before  # only scoring left
    pd.testing.assert_frame_equal(scores(out), scores(online))


def test_expired_batch_goes_to_a_follow_up_batch(root, tmp_path, server, prices, online):
    server.batches.expire = 1  # the first batch runs out of time with half its lines done
    out = tmp_path / "expired"
    r = cli("batch", root, "--out", out, "--via", "batch-api", "--retry-via", "batch-api",
            *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    statuses = [b.status for b in sorted(server.batches.batches.values(), key=lambda b: b.seq)]
    assert statuses[0] == "expired" and statuses[-1] == "completed" and len(statuses) >= 2
    assert server.stats.chat_requests == sum(b.completed for b in server.batches.batches.values())  # none online
    pd.testing.assert_frame_equal(verdicts(out), verdicts(online))
    pd.testing.assert_frame_equal(scores(out), scores(online))


def _run_batch_like_vllm(server, requests_path, results_path, drop=0):
    """What vllm's run_batch does with a requests file: each body to /v1/chat/completions, one output
    line per request in the OpenAI batch output format."""
    client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    lines = [json.loads(x) for x in requests_path.read_text().splitlines()]
    with results_path.open("w") as fh:
        for n, line in enumerate(lines[drop:]):
            assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
            body = client.post("/chat/completions", body=line["body"], cast_to=object)
            fh.write(json.dumps({"id": f"vllm-{n}", "custom_id": line["custom_id"],
                                 "response": {"status_code": 200, "request_id": f"vllm-batch-{n}", "body": body},
                                 "error": None}) + "\n")
    return lines


def test_jsonl_then_ingest_run_batch_output(root, tmp_path, server, prices, online):
    out = tmp_path / "offline"
    requests = tmp_path / "requests.jsonl"
    r = cli("batch", root, "--out", out, "--via", "jsonl", "--requests-out", requests, *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    assert "ingest" in r.stdout and not (out / "scores.csv").exists()
    lines = _run_batch_like_vllm(server, requests, tmp_path / "results.jsonl", drop=1)
    assert {json.loads(x)["body"]["model"] for x in requests.read_text().splitlines()} == {MODEL}
    # one request unanswered: its submission waits, and a follow-up requests file says what is left
    r = cli("ingest", out, "--responses", tmp_path / "results.jsonl", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["answers"]["ok"] == len(lines) - 1 and summary["followup_requests"] == 1
    # the submissions that share the unanswered request wait for it; none failed
    assert summary["failed"] == 0 and summary["waiting"] >= 1 and summary["scored"] + summary["waiting"] == 3
    followup = tmp_path / "followup-results.jsonl"
    from pathlib import Path

    _run_batch_like_vllm(server, Path(summary["followup_file"]), followup)
    r = cli("ingest", out, "--responses", followup, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["followup_requests"] == 0
    pd.testing.assert_frame_equal(verdicts(out), verdicts(online))
    pd.testing.assert_frame_equal(scores(out), scores(online))


def test_bad_inputs_exit_2_with_one_line(root, tmp_path, server, prices):
    r = cli("batch", root, "--out", tmp_path / "h", "--via", "batch-api")
    assert r.returncode == 2 and "needs --assessor llm" in r.stderr and "Traceback" not in r.stderr
    r = cli("batch", root, "--out", tmp_path / "j", "--via", "jsonl", *llm_flags(server, prices))
    assert r.returncode == 2 and "--requests-out" in r.stderr
    r = cli("ingest", tmp_path / "nothing", "--responses", tmp_path / "none.jsonl")
    assert r.returncode == 2 and "batch_run.json" in r.stderr
    out = tmp_path / "j2"
    r = cli("batch", root, "--out", out, "--via", "jsonl", "--requests-out", tmp_path / "q.jsonl",
            *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"custom_id": "not-ours", "response": {"status_code": 200, "body": {}}}\nnot json\n')
    r = cli("ingest", out, "--responses", junk)
    assert r.returncode == 2 and "junk.jsonl" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    huge = tmp_path / "huge.jsonl"
    huge.write_bytes(b'{"custom_id": "' + b"x" * (17 << 20) + b'"}\n')
    r = cli("ingest", out, "--responses", huge)
    assert r.returncode == 2 and "longer than" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = cli("batch-status", tmp_path / "nowhere")
    assert r.returncode == 2 and "no cache file" in r.stderr


def test_mock_refuses_a_mixed_model_file(server):
    client = openai.OpenAI(base_url=server.base_url, api_key="x")
    lines = [{"custom_id": str(i), "method": "POST", "url": "/v1/chat/completions",
              "body": {"model": f"m{i}", "messages": [{"role": "user", "content": "hi"}]}} for i in range(2)]
    f = client.files.create(file=("r.jsonl", "".join(json.dumps(x) + "\n" for x in lines).encode()), purpose="batch")
    b = client.batches.create(input_file_id=f.id, endpoint="/v1/chat/completions", completion_window="24h")
    assert b.status == "failed" and b.errors.data[0].code == "mixed_models"
    b = client.batches.cancel(b.id)
    assert b.status == "failed"


def test_score_via_batch_api_equals_online(root, tmp_path, server, prices):
    flags = [*llm_flags(server, prices), "--cache", tmp_path / "c-online.sqlite"]
    r = cli("score", root / "team-alpha", "--json", *flags)
    assert r.returncode == 0, r.stderr
    online = json.loads(r.stdout)
    flags = [*llm_flags(server, prices), "--cache", tmp_path / "c-batch.sqlite"]
    r = cli("score", root / "team-alpha", "--json", "--via", "batch-api", *flags)
    assert r.returncode == 0, r.stderr
    batched = json.loads(r.stdout)
    assert server.batches.uploads == 1
    keys = ("case", "C_G", "C_A", "C_T", "R", "S")
    assert {k: batched[k] for k in keys} == {k: online[k] for k in keys}
    assert 0 < batched["usage"]["cost_usd"] < online["usage"]["cost_usd"]


def test_no_secret_in_requests_run_file_or_cache(root, tmp_path, server, prices):
    key, password = "sk-test-SECRET-KEY-0123456789", "p4ssw0rd-SECRET"
    url = server.base_url.replace("http://", f"http://organizer:{password}@")
    out, requests = tmp_path / "s", tmp_path / "req.jsonl"
    r = cli("batch", root, "--out", out, "--via", "jsonl", "--requests-out", requests, "--assessor", "llm",
            "--model", MODEL, "--base-url", url, "--prices", prices, env={"OPENAI_API_KEY": key})
    assert r.returncode == 0, r.stderr
    files = [requests, *(p for p in out.rglob("*") if p.is_file())]
    assert any(p.name == "batch_run.json" for p in files) and any(p.name == "cache.sqlite" for p in files)
    for path in files:
        data = path.read_bytes()
        assert key.encode() not in data and password.encode() not in data, path
    for stream in (r.stdout, r.stderr):
        assert key not in stream and password not in stream


def test_resumed_batch_api_run_with_a_changed_flag_is_refused_then_finished_without_a_second_job(
        root, tmp_path, server, prices, online):
    """Submit a batch-api run, try to finish it with another temperature (refused, one line, nothing
    sent), or online (refused: --via), then finish it with the command minus --via: the one job is used."""
    from types import SimpleNamespace

    from helpers import one_error_line

    out = tmp_path / "run"
    r = cli("batch", root, "--out", out, "--via", "batch-api", "--submit-only", *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    settings = json.loads((out / "run_settings.json").read_text())
    assert settings == {"assessor": "llm", "model": MODEL, "endpoint": f"127.0.0.1:{server.port}/v1",
                        "prompt_version": "assess-v1", "via": "batch-api", "temperature": 0.0, "seed": None,
                        "reasoning_effort": None, "tex": "auto"}
    sent = (server.batches.uploads, len(server.batches.batches), server.stats.chat_requests)
    assert sent[:2] == (1, 1)
    time.sleep(0.4)  # the batch finishes on the provider's side
    for extra, words in ((["--via", "batch-api", "--temperature", "0.5"], ["--temperature 0.5 (recorded 0)"]),
                         (["--via", "online"], ["--via online (recorded batch-api)"]),
                         (["--seed", "7"], ["--seed 7 (recorded none)", "--new-settings"])):
        r = cli("batch", root, "--out", out, *llm_flags(server, prices), *extra)
        one_error_line(SimpleNamespace(code=r.returncode, err=r.stderr), "run_settings.json", *words)
        assert (server.batches.uploads, len(server.batches.batches), server.stats.chat_requests) == sent
    assert not (out / "scores.csv").exists()
    r = cli("batch", root, "--out", out, "--json", *llm_flags(server, prices))  # no --via: the recorded path
    assert r.returncode == 0, r.stderr
    assert (server.batches.uploads, len(server.batches.batches)) == (1, 1)  # no second job
    (batch,) = server.batches.batches.values()
    assert server.stats.chat_requests == sent[2] + len(batch.lines)  # only the batch's own lines ran
    pd.testing.assert_frame_equal(scores(out), scores(online))
    results = [json.loads(p.read_text()) for p in (out / "submissions").glob("*/result.json")]
    assert len(results) == 3 and all(res["settings"] == settings for res in results)


def test_online_finish_of_a_batch_api_run_uses_its_jobs(root, tmp_path, server, prices, online):
    """--new-settings --via online on a batch-api folder: the submitted job is waited for and used;
    nothing already in it is asked online."""
    out = tmp_path / "run"
    r = cli("batch", root, "--out", out, "--via", "batch-api", "--submit-only", *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    (batch,) = server.batches.batches.values()
    chats = server.stats.chat_requests
    r = cli("batch", root, "--out", out, "--via", "online", "--new-settings", "--json", *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    assert (server.batches.uploads, len(server.batches.batches)) == (1, 1)
    assert server.stats.chat_requests == chats + len(batch.lines)  # the batch ran them; none went online
    assert json.loads((out / "run_settings.json").read_text())["via"] == "online"
    pd.testing.assert_frame_equal(scores(out), scores(online))


def test_new_settings_scores_the_changed_submissions_again(root, tmp_path, server, prices):
    out = tmp_path / "run"
    r = cli("batch", root, "--out", out, "--json", *llm_flags(server, prices))
    assert r.returncode == 0 and json.loads(r.stdout)["scored"] == 3, r.stderr
    r = cli("batch", root, "--out", out, "--json", "--seed", "3", "--new-settings", *llm_flags(server, prices))
    assert r.returncode == 0 and json.loads(r.stdout)["scored"] == 3, r.stderr  # all made with seed none
    records = pd.read_csv(out / "records.csv", dtype=str, keep_default_na=False)
    asked = records[records["calls"] != "0"]  # TODO or missing answers are not asked: no sampling to record
    assert len(asked) > 0 and set(asked["seed"]) == {"3"}
    r = cli("batch", root, "--out", out, "--json", "--seed", "3", *llm_flags(server, prices))
    assert r.returncode == 0 and json.loads(r.stdout)["resumed"] == 3, r.stderr


def test_ingest_counts_failed_submissions_as_failed_and_exits_4(root, tmp_path, server, prices):
    (root / "team-broken").mkdir()
    (root / "team-broken" / "genuine_x.tex").write_text("no checklist here\n")
    out, requests = tmp_path / "offline", tmp_path / "requests.jsonl"
    r = cli("batch", root, "--out", out, "--via", "jsonl", "--requests-out", requests, *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    _run_batch_like_vllm(server, requests, tmp_path / "results.jsonl")
    r = cli("ingest", out, "--responses", tmp_path / "results.jsonl", "--json")
    assert r.returncode == 4, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["scored"], summary["failed"], summary["waiting"]) == (3, 1, 0)
    r = cli("ingest", out, "--responses", tmp_path / "results.jsonl")
    assert r.returncode == 4 and "1 failed, 0 waiting for answers" in r.stdout, r


def test_jsonl_finish_of_a_batch_api_run_waits_for_its_jobs(root, tmp_path, server, prices, online):
    """--new-settings --via jsonl on a batch-api folder: the submitted job is waited for and used, so no
    request of it goes into the requests file or online, and with nothing else to ask the run scores."""
    out, requests = tmp_path / "run", tmp_path / "requests.jsonl"
    server.batches.delay = 2.0  # still running on the provider's side when the jsonl run starts
    r = cli("batch", root, "--out", out, "--via", "batch-api", "--submit-only", *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    (batch,) = server.batches.batches.values()
    chats = server.stats.chat_requests
    r = cli("batch", root, "--out", out, "--via", "jsonl", "--requests-out", requests, "--new-settings", "--json",
            *llm_flags(server, prices))
    assert r.returncode == 0, r.stderr
    assert (server.batches.uploads, len(server.batches.batches)) == (1, 1)
    assert server.stats.chat_requests == chats + len(batch.lines)  # the batch ran them; none went online
    assert not requests.exists()  # nothing was left to ask
    pd.testing.assert_frame_equal(scores(out), scores(online))
    # Answered by the batch, at the batch price (half the online one here), and the job is downloaded.
    assert ledger_cost(out) == pytest.approx(ledger_cost(online) / 2)
    r = cli("batch-status", out, "--json")
    assert r.returncode == 0, r.stderr
    assert [job["downloaded"] for job in json.loads(r.stdout)] == [True]


def test_jsonl_flow_as_the_readme_types_it_needs_no_key_and_names_the_real_folder(root, tmp_path, server, prices,
                                                                                   online):
    """The offline-engine flow sends nothing, so it asks for no API key (none is set here, no --base-url),
    and its next step names the results folder as typed (quoted for the shell), not a literal RESULTS."""
    out = tmp_path / "offline results"
    requests = tmp_path / "requests.jsonl"
    r = cli("batch", root, "--out", out, "--via", "jsonl", "--requests-out", requests, "--assessor", "llm",
            "--model", MODEL, "--prices", prices)
    assert r.returncode == 0, r.stderr
    assert "RESULTS" not in r.stdout and f"`checklist-eval ingest '{out}' --responses results.jsonl`" in r.stdout
    _run_batch_like_vllm(server, requests, tmp_path / "results.jsonl")
    r = cli("ingest", out, "--responses", tmp_path / "results.jsonl", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["scored"] == 3
    pd.testing.assert_frame_equal(scores(out), scores(online))
