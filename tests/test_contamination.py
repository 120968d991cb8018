"""contamination / contamination-eval: each membership score against an independent computation, the
JSONL path, the endpoint path over real HTTP to the loopback server, and the AUC against scikit-learn."""

from __future__ import annotations

import json
import math
import random
import subprocess

import numpy as np
from cli_runner import CliRun, run_cli
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.metrics import roc_auc_score

from checklist_eval.membership import contamination as c
from checklist_eval.testing.completions import is_seen, prompt_logprobs
from checklist_eval.testing import MockServer


def cli(*args: str, timeout: float = 120) -> CliRun:
    return run_cli(*args, timeout=timeout)


def _slope_sklearn(values) -> float:
    x = np.arange(len(values)).reshape(-1, 1)
    return float(LinearRegression().fit(x, np.asarray(values)).coef_[0])


def _synthetic(seed: int, n: int = 60):
    rng = np.random.default_rng(seed)
    lp = np.minimum(-0.05 - rng.exponential(1.5, n) + 0.01 * np.arange(n), -1e-3)
    ngram = np.minimum(lp + rng.normal(0.2, 0.3, n), -1e-3)
    return lp, ngram


# ----------------------------------------------------------------------------------- the methods


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_slopes_and_min_k_match_independent_computations(seed):
    lp, ngram = _synthetic(seed)
    text = c.TokenText("t", [f"w{i}" for i in range(lp.size)], lp, ngram_logprobs=ngram)
    got = c.score_text(text, c.METHODS, k=0.2)
    p, adjusted = np.exp(lp), np.exp(lp) - np.exp(ngram)
    assert got["slope"] == pytest.approx(_slope_sklearn(p), rel=1e-9)
    assert got["slope_ngram"] == pytest.approx(_slope_sklearn(adjusted), rel=1e-9)
    assert got["slope_mean"] == pytest.approx(_slope_sklearn(adjusted) / abs(adjusted.mean()), rel=1e-9)
    assert got["slope_z"] == pytest.approx(_slope_sklearn(adjusted) / adjusted.std(), rel=1e-9)
    lowest = sorted(lp.tolist())[: int(0.2 * lp.size)]
    assert got["min_k"] == pytest.approx(sum(lowest) / len(lowest), rel=1e-12)
    assert got["min_k_pp"] is None  # no vocabulary information given


def test_mean_normalised_slope_keeps_its_sign_when_the_adjusted_mean_is_negative():
    n = 50
    p = 0.2 + 0.004 * np.arange(n)  # rising confidence
    ref = np.full(n, 0.6)  # the n-gram context alone predicts better: adjusted mean < 0
    text = c.TokenText("t", ["x"] * n, np.log(p), ngram_logprobs=np.log(ref))
    got = c.score_text(text, ["slope_ngram", "slope_mean", "slope_z"])
    adjusted = p - ref
    assert adjusted.mean() < 0 and got["slope_ngram"] > 0
    assert got["slope_mean"] > 0 and got["slope_mean"] == pytest.approx(0.004 / abs(adjusted.mean()))
    assert got["slope_z"] == pytest.approx(0.004 / adjusted.std())
    from checklist_eval.membership.slope import perplexity_slope

    assert perplexity_slope(p, reference=ref).mean_normalized > 0


def test_min_k_pp_exact_from_a_full_distribution_and_approximated_from_top_k():
    rng = np.random.default_rng(5)
    n, vocab = 40, 30
    logits = rng.normal(0, 2, (n, vocab))
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    actual = rng.integers(0, vocab, n)
    lp = logp[np.arange(n), actual]
    probs = np.exp(logp)
    mu = (probs * logp).sum(axis=1)
    sigma = np.sqrt((probs * logp**2).sum(axis=1) - mu**2)
    z = (lp - mu) / sigma
    expected = np.sort(z)[: int(0.3 * n)].mean()
    exact = c.TokenText("t", [str(a) for a in actual], lp, vocab_mu=mu, vocab_sigma=sigma)
    assert c.score_text(exact, ["min_k_pp"], k=0.3)["min_k_pp"] == pytest.approx(expected, rel=1e-12)
    # top-5 approximation, computed here by hand: weights over top-5 + actual token, renormalised
    top, approx_z = [], []
    for i in range(n):
        order = np.argsort(-logp[i])[:5]
        top.append({str(j): float(logp[i, j]) for j in order})
        support = set(order.tolist()) | {int(actual[i])}
        lps = np.array([logp[i, j] for j in support])
        w = np.exp(lps) / np.exp(lps).sum()
        m = (w * lps).sum()
        s = math.sqrt((w * (lps - m) ** 2).sum())
        approx_z.append((lp[i] - m) / s)
    approx = c.TokenText("t", [str(a) for a in actual], lp, top_logprobs=top)
    want = np.sort(approx_z)[: int(0.3 * n)].mean()
    assert c.score_text(approx, ["min_k_pp"], k=0.3)["min_k_pp"] == pytest.approx(want, rel=1e-9)


def test_min_k_takes_int_k_n_tokens_as_the_published_implementations(tmp_path):
    """Seven tokens at k = 0.2: int(1.4) = 1 token, as both references take (ceil would take 2).

    By hand: log p = -1..-7, the lowest one is -7.0 (ceil: (-7 - 6) / 2 = -6.5); with mu = -2 and
    sigma = 1, z = log p + 2 and the lowest is -5.0 (ceil: -4.5). Fewer than 1/k tokens still keep one."""
    line = {"id": "seven", "tokens": list("abcdefg"), "logprobs": [-3, -7, -1, -5, -2, -6, -4],
            "vocab_mu": [-2] * 7, "vocab_sigma": [1] * 7}
    path = tmp_path / "seven.jsonl"
    path.write_text(json.dumps(line) + "\n")
    run = cli("contamination", "--logprobs", str(path), "--methods", "min_k,min_k_pp", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["texts"][0]["scores"] == {"min_k": -7.0, "min_k_pp": -5.0}
    three = c.TokenText("t", list("abc"), np.array([-1.0, -2.0, -3.0]))
    assert c.score_text(three, ["min_k"], k=0.2)["min_k"] == -3.0  # int(0.6) = 0: at least one


def test_scores_that_cannot_be_computed_are_none():
    one = c.TokenText("t", ["a"], np.array([-1.0]))
    got = c.score_text(one)
    assert got["slope"] is None and got["slope_z"] is None and got["min_k"] == -1.0
    flat = c.TokenText("t", ["a", "b", "c"], np.log([0.5, 0.5, 0.5]))
    assert c.score_text(flat, ["slope", "slope_z"]) == {"slope": 0.0, "slope_z": None}


# ------------------------------------------------------------------------------------- JSONL path


def _jsonl(tmp_path, rows, name="lp.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_logprob_jsonl_json_output_has_the_contract_shape_and_values(tmp_path):
    lp0, ng0 = _synthetic(3, 30)
    lp1, _ = _synthetic(4, 25)
    rows = [
        {"id": "a", "tokens": [f"t{i}" for i in range(30)], "logprobs": lp0.tolist(), "ngram_logprobs": ng0.tolist()},
        {"id": "b", "tokens": ["<s>"] + [f"u{i}" for i in range(25)], "logprobs": [None] + lp1.tolist(),
         "top_logprobs": [None] + [{f"u{i}": float(v), "other": math.log(max(1e-9, 1 - math.exp(v)))}
                                   for i, v in enumerate(lp1)]},
    ]  # fmt: skip
    out = cli("contamination", "--logprobs", str(_jsonl(tmp_path, rows)), "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert set(doc) == {"texts"}
    assert [set(t) for t in doc["texts"]] == [{"id", "n_tokens", "scores"}] * 2
    a, b = doc["texts"]
    assert (a["id"], a["n_tokens"], b["id"], b["n_tokens"]) == ("a", 30, "b", 25)
    assert list(a["scores"]) == list(c.METHODS)
    assert a["scores"]["slope"] == pytest.approx(_slope_sklearn(np.exp(lp0)), rel=1e-9)
    assert a["scores"]["slope_ngram"] == pytest.approx(_slope_sklearn(np.exp(lp0) - np.exp(ng0)), rel=1e-9)
    assert a["scores"]["min_k_pp"] is None and b["scores"]["slope_ngram"] is None
    assert b["scores"]["min_k_pp"] is not None
    pb = np.exp(lp1)  # no n-gram values: the normalised slopes use the raw probabilities
    assert b["scores"]["slope_mean"] == pytest.approx(_slope_sklearn(pb) / abs(pb.mean()), rel=1e-9)
    assert b["scores"]["slope_z"] == pytest.approx(_slope_sklearn(pb) / pb.std(), rel=1e-9)
    assert "approximated from the top-k" in out.stderr
    picked = cli("contamination", "--logprobs", str(tmp_path / "lp.jsonl"), "--json", "--methods", "min_k,slope",
                 "--k", "0.5")  # fmt: skip
    scores = json.loads(picked.stdout)["texts"][0]["scores"]
    assert list(scores) == ["min_k", "slope"]
    assert scores["min_k"] == pytest.approx(np.sort(lp0)[:15].mean())


@pytest.mark.parametrize("line,problem", [
    ('{"id": 1, "tokens": ["a", "b"], "logprobs": [-1.0]}', "1 entries for 2 tokens"),
    ('{"id": 1, "tokens": ["a"], "logprobs": [0.5]}', "<= 0"),
    ('{"id": 1, "tokens": ["a"], "logprobs": ["x"]}', "finite numbers"),
    ("not json", "not JSON"),
])  # fmt: skip
def test_bad_logprob_lines_are_one_clear_line_and_exit_2(tmp_path, line, problem):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    out = cli("contamination", "--logprobs", str(path))
    assert out.returncode == 2 and out.stdout == ""
    assert problem in out.stderr and "bad.jsonl: line 1" in out.stderr and len(out.stderr.splitlines()) == 1
    unknown = cli("contamination", "--logprobs", str(path), "--methods", "slope,bogus")
    assert unknown.returncode == 2 and "bogus" in unknown.stderr


# ---------------------------------------------------------------------------------- endpoint path

WORDS = ("the model of data and paper results we show that our method improves over baselines on several "
         "tasks while training large networks with careful ablations").split()


def _text(seed: int, n_words: int) -> str:
    rnd = random.Random(seed)
    return " ".join(rnd.choice(WORDS) for _ in range(n_words))


def test_paper_scored_through_the_loopback_completions_endpoint(tmp_path):
    body = _text(1, 300)
    tex = tmp_path / "paper.tex"
    tex.write_text("\\documentclass{article}\n\\begin{document}\n" + body + "\n\\end{document}\n")
    with MockServer() as server:
        out = cli("contamination", str(tex), "--model", "m", "--base-url", server.base_url, "--json",
                  "--chunk-words", "100", "--ngram", "1")  # fmt: skip
        requests = server.stats.by_status.get(200, 0)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    chunks = c.chunk_words(body, 100)
    assert [t["id"] for t in doc["texts"]] == ["chunk-0", "chunk-1", "chunk-2"]
    assert requests == 6  # per chunk: the echo request, and one batch of n-gram contexts
    for chunk, row in zip(chunks, doc["texts"]):
        tokens, lps = prompt_logprobs(chunk)  # what the mock model computes, independently of HTTP
        p = np.exp(np.array(lps[1:]))
        assert row["n_tokens"] == len(tokens) - 1
        assert row["scores"]["slope"] == pytest.approx(_slope_sklearn(p), rel=1e-6)
        ref = np.exp([prompt_logprobs(tokens[i - 1] + tokens[i])[1][-1] for i in range(1, len(tokens))])
        assert row["scores"]["slope_ngram"] == pytest.approx(_slope_sklearn(p - ref), rel=1e-6)
    weights = np.array([t["n_tokens"] for t in doc["texts"]])
    slopes = np.array([t["scores"]["slope"] for t in doc["texts"]])
    assert doc["paper_scores"]["slope"] == pytest.approx((weights * slopes).sum() / weights.sum())
    assert set(doc["meanings"]) == set(c.METHODS) and doc["notes"]


def test_hosted_openai_is_refused_in_one_line(tmp_path):
    tex = tmp_path / "p.tex"
    tex.write_text("\\begin{document}hello world\\end{document}")
    for extra in (["--base-url", "https://api.openai.com/v1"], []):
        out = cli("contamination", str(tex), "--model", "gpt-4o", *extra)
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
        assert "cannot return prompt log-probabilities" in out.stderr
    data = _jsonl(tmp_path, [{"input": "some text", "label": 1}])
    out = cli("contamination-eval", str(data), "--model", "gpt-4o", "--base-url", "https://api.openai.com/v1")
    assert out.returncode == 2 and "cannot return prompt log-probabilities" in out.stderr


# ------------------------------------------------------------------------------ contamination-eval


def test_eval_auc_equals_sklearn_on_the_same_scores(tmp_path):
    rng = np.random.default_rng(11)
    rows = []
    for i in range(60):
        label = i % 2
        lp = np.minimum(-rng.exponential(1.0 if label else 1.6, 40) + 0.01 * label * np.arange(40), -1e-3)
        rows.append({"id": f"x{i}", "tokens": [f"t{j}" for j in range(40)], "logprobs": lp.tolist(), "label": label})
    path = _jsonl(tmp_path, rows, "set.jsonl")
    out = cli("contamination-eval", str(path), "--json", "--methods", "slope,min_k,slope_z")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["n"] == 60 and list(doc["methods"]) == ["slope", "min_k", "slope_z"]
    texts = c.read_logprob_jsonl(path)
    y = [t.label for t in texts]
    for m, fig in doc["methods"].items():
        scores = [c.score_text(t, [m])[m] for t in texts]
        assert fig["auc"] == pytest.approx(roc_auc_score(y, scores), abs=1e-12)
        lo, hi = fig["ci"]
        assert lo <= fig["auc"] <= hi and hi - lo < 0.5
        assert set(fig["tpr_at_fpr"]) == {"0.01", "0.05"}


def test_eval_of_a_wikimia_style_set_through_the_loopback_server(tmp_path):
    texts = [_text(100 + i, 60 + i % 40) for i in range(40)]
    rows = [{"input": t, "label": int(is_seen(t))} for t in texts]
    assert 5 < sum(r["label"] for r in rows) < 35
    path = _jsonl(tmp_path, rows, "wiki.jsonl")
    with MockServer() as server:
        out = cli("contamination-eval", str(path), "--model", "m", "--base-url", server.base_url, "--json",
                  "--bootstrap", "200")  # fmt: skip
        table = cli("contamination-eval", str(path), "--model", "m", "--base-url", server.base_url,
                    "--bootstrap", "200", "--plot", str(tmp_path / "roc.png"))  # fmt: skip
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["n"] == 40 and set(doc["methods"]) == set(c.METHODS)
    assert doc["methods"]["min_k"]["auc"] > 0.8 and doc["methods"]["slope"]["auc"] > 0.6
    assert table.returncode == 0 and "| Method" in table.stdout and "wiki" in table.stdout
    assert (tmp_path / "roc.png").stat().st_size > 1000
    no_endpoint = cli("contamination-eval", str(path))
    assert no_endpoint.returncode == 2 and "needs an endpoint" in no_endpoint.stderr


def test_a_wrong_key_is_one_line_exit_2_without_the_key(tmp_path):
    path = _jsonl(tmp_path, [{"input": _text(7, 30), "label": 1}, {"input": _text(8, 30), "label": 0}])
    import os

    env = {**os.environ, "MY_KEY": "sk-wrong-0123456789abcdef"}
    with MockServer(require_api_key="sk-right-0123456789abcdef") as server:
        out = run_cli("contamination-eval", str(path), "--model", "m", "--base-url", server.base_url, "--api-key-env", "MY_KEY", env=env)  # fmt: skip
    assert out.returncode == 2 and "HTTP 401" in out.stderr and "MY_KEY" in out.stderr
    assert "0123456789abcdef" not in out.stderr + out.stdout and len(out.stderr.strip().splitlines()) == 1


def test_loopback_completions_echo_prompt_logprobs_with_the_real_client():
    import openai

    seen = next(t for t in (_text(200 + i, 120) for i in range(50)) if is_seen(t))
    unseen = next(t for t in (_text(300 + i, 120) for i in range(50)) if not is_seen(t))
    with MockServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        reply = client.completions.create(model="m", prompt=[seen, unseen], echo=True, logprobs=3, max_tokens=0)
        again = client.completions.create(model="m", prompt=seen, echo=True, logprobs=3, max_tokens=0)
        with pytest.raises(openai.BadRequestError):
            client.completions.create(model="m", prompt=seen, echo=True, logprobs=99, max_tokens=0)
    a, b = sorted(reply.choices, key=lambda ch: ch.index)
    assert "".join(a.logprobs.tokens) == seen and a.text == seen
    assert a.logprobs.token_logprobs[0] is None and a.logprobs.top_logprobs[0] is None
    assert again.choices[0].logprobs.token_logprobs == a.logprobs.token_logprobs  # deterministic
    assert a.logprobs.text_offset[5] == len("".join(a.logprobs.tokens[:5]))
    for top in a.logprobs.top_logprobs[1:]:
        assert len(top) == 3 and list(top.values()) == sorted(top.values(), reverse=True)
        assert math.fsum(math.exp(v) for v in top.values()) <= 1 + 1e-9
    p_seen, p_unseen = np.exp(a.logprobs.token_logprobs[1:]), np.exp(b.logprobs.token_logprobs[1:])
    quarter = len(p_seen) // 4
    assert p_seen[-quarter:].mean() > p_seen[:quarter].mean()  # rising confidence along a seen text
    assert _slope_sklearn(p_seen) > _slope_sklearn(p_unseen)


def test_ngram_target_value_sums_its_pieces_and_refuses_a_merged_token():
    from types import SimpleNamespace

    from checklist_eval.membership.prompt_logprobs import _echo_view, _target_logprob

    def echoed(tokens, logprobs, offsets, generated=0):
        return _echo_view(SimpleNamespace(tokens=tokens, token_logprobs=logprobs, text_offset=offsets,
                                          top_logprobs=None), generated)  # fmt: skip

    # context " the" (4 characters) + target " model", echoed as pieces " mod" + "el"
    assert _target_logprob(echoed([" the", " mod", "el"], [None, -1.5, -0.25], [0, 4, 8]), 4) == pytest.approx(-1.75)
    with_generated = echoed([" the", " mod", "el", "!"], [None, -1.5, -0.25, -3.0], [0, 4, 8, 10], generated=1)
    assert _target_logprob(with_generated, 4) == pytest.approx(-1.75)  # the generated token is not the target's
    merged = echoed([" the mod", "el"], [None, -0.5], [0, 8])
    assert math.isnan(_target_logprob(merged, 4))  # the tokenizer joined target and context
    assert math.isnan(_target_logprob(echoed([" the"], [None], [0]), 4))


def test_max_tokens_0_is_never_sent_and_the_generated_token_is_dropped():
    # 0 is refused by some servers and read by llama-cpp-python's as "until the context is full"
    from checklist_eval.membership.prompt_logprobs import LogprobClient

    rows = [{"input": _text(400 + i, 50)} for i in range(6)]
    scores = {}
    with MockServer() as server:
        for model in ("m", "m-max-tokens-1"):
            client = LogprobClient(model, server.base_url)
            try:
                texts = [client.fetch(r["input"][:10], r["input"], ngram=1) for r in rows]
            finally:
                client.close()
            scores[model] = [c.score_text(t) for t in texts]
            assert [t.n_tokens for t in texts] == [len(prompt_logprobs(r["input"])[0]) - 1 for r in rows]
        statuses = dict(server.stats.by_status)
    assert scores["m"] == scores["m-max-tokens-1"] and statuses.get(400) is None


def test_missing_ngram_values_count_as_not_adjusted_and_are_reported(tmp_path):
    lp, ng = _synthetic(9, 20)
    ng_list = ng.tolist()
    ng_list[3] = ng_list[7] = None
    path = _jsonl(tmp_path, [{"id": "a", "tokens": [f"t{i}" for i in range(20)], "logprobs": lp.tolist(),
                              "ngram_logprobs": ng_list}])  # fmt: skip
    out = cli("contamination", "--logprobs", str(path), "--json", "--methods", "slope_ngram")
    adjusted = np.exp(lp) - np.exp(ng)
    adjusted[[3, 7]] = 0.0
    assert json.loads(out.stdout)["texts"][0]["scores"]["slope_ngram"] == pytest.approx(_slope_sklearn(adjusted))
    assert "2 of 20 tokens (10.0%) have no n-gram value" in out.stderr


def test_a_real_challenge_pdf_is_scored_through_the_loopback_server(shared_dir):
    pdf = next((shared_dir / "corpus" / "anchor-sample" / "pair-submission").glob("*.pdf"))
    with MockServer() as server:
        out = cli("contamination", str(pdf), "--model", "m", "--base-url", server.base_url, "--max-chunks", "2",
                  "--json", "--methods", "slope,min_k")  # fmt: skip
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [t["id"] for t in doc["texts"]] == ["chunk-0", "chunk-1"] and all(t["n_tokens"] > 100 for t in doc["texts"])
    assert set(doc["paper_scores"]) == {"slope", "min_k"} and doc["paper_scores"]["min_k"] < 0
    assert any("past --max-chunks 2" in n for n in doc["notes"])


def test_an_endpoint_without_echo_logprobs_is_read_through_vllm_prompt_logprobs():
    from checklist_eval.membership.prompt_logprobs import LogprobClient

    texts = [_text(500 + i, 60) for i in range(4)]
    got = {}
    with MockServer() as server:
        for model in ("m", "m-prompt-logprobs-only"):
            client = LogprobClient(model, server.base_url, top_k=3)
            try:
                got[model] = [client.fetch(str(i), t, ngram=1) for i, t in enumerate(texts)]
            finally:
                client.close()
    for echo, vllm in zip(got["m"], got["m-prompt-logprobs-only"]):
        assert vllm.tokens == echo.tokens
        np.testing.assert_allclose(vllm.logprobs, echo.logprobs)
        np.testing.assert_allclose(vllm.ngram_logprobs, echo.ngram_logprobs)
        assert not np.isnan(vllm.ngram_logprobs).any()
        for tok, v_top, e_top in zip(vllm.tokens, vllm.top_logprobs, echo.top_logprobs):
            assert set(v_top) - set(e_top) <= {tok}  # vLLM also lists the prompt token itself
        assert c.score_text(vllm) == pytest.approx(c.score_text(echo))


def test_an_oversized_input_is_refused_before_any_request(tmp_path):
    path = _jsonl(tmp_path, [{"input": "word " * 30_000, "label": 1}])
    with MockServer() as server:
        out = cli("contamination-eval", str(path), "--model", "m", "--base-url", server.base_url)
        requests = server.stats.requests
    assert out.returncode == 2 and "line 1: input longer than 100,000 characters" in out.stderr and requests == 0


def test_several_datasets_make_one_column_each(tmp_path):
    rng = np.random.default_rng(3)
    paths = []
    for name, shift in (("books", 0.8), ("wiki", 0.2)):
        rows = [{"id": f"{name}{i}", "tokens": ["t"] * 30,
                 "logprobs": np.minimum(-rng.exponential(1.5 - shift * (i % 2), 30), -1e-3).tolist(), "label": i % 2}
                for i in range(40)]  # fmt: skip
        paths.append(str(_jsonl(tmp_path, rows, f"{name}.jsonl")))
    table = cli("contamination-eval", *paths, "--methods", "min_k,slope", "--bootstrap", "100")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert [c.strip() for c in lines[1].split("|")[1:4]] == ["Method", "books", "wiki"]
    min_k_row = next(x for x in lines if x.startswith("| min_k"))
    assert min_k_row.count("(") == 2  # an AUC with its interval per dataset
    doc = json.loads(cli("contamination-eval", *paths, "--json", "--methods", "min_k", "--bootstrap", "100").stdout)
    assert set(doc) == {"datasets"} and set(doc["datasets"]) == {"books", "wiki"}
    assert doc["datasets"]["books"]["methods"]["min_k"]["auc"] > doc["datasets"]["wiki"]["methods"]["min_k"]["auc"]


def _labelled_logprob_lines(n: int, with_ngram: int) -> list[dict]:
    rng = np.random.default_rng(11)
    out = []
    for i in range(n):
        lp = (-rng.exponential(1.0 + (i % 2), 30) - 0.01).tolist()
        line = {"id": f"t{i}", "tokens": ["w"] * 30, "logprobs": lp, "label": i % 2}
        if i < with_ngram:
            line["ngram_logprobs"] = (np.array(lp) - 0.3).tolist()
        out.append(line)
    return out


def test_eval_says_when_a_method_is_evaluated_on_fewer_texts(tmp_path):
    """12 texts, only 8 with n-gram log-probabilities: slope_ngram is evaluated on 8 (4 members) and says so."""
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in _labelled_logprob_lines(12, 8)))
    out = cli("contamination-eval", str(path), "--methods", "slope,slope_ngram", "--bootstrap", "0")
    assert out.returncode == 0, out.stderr
    assert "set: slope_ngram evaluated on 8 of 12 texts (4 of 6 members)" in out.stderr
    assert "slope evaluated" not in out.stderr  # slope has a value on every text
    assert "[8 of 12 texts]" in out.stdout and "(on 8 of 12 texts)" in out.stdout
    doc = json.loads(cli("contamination-eval", str(path), "--methods", "slope,slope_ngram", "--bootstrap", "0",
                         "--json").stdout)  # fmt: skip
    assert doc["n"] == 12 and doc["methods"]["slope_ngram"]["n"] == 8 and doc["methods"]["slope"]["n"] == 12


def _without_matplotlib(tmp_path) -> dict:
    """An environment where ``import matplotlib`` fails as on an install without the plot extra."""
    import os

    shim = tmp_path / "shim" / "matplotlib"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'matplotlib'\", name='matplotlib')\n")
    return {**os.environ, "PYTHONPATH": str(shim.parent)}


def test_plot_without_matplotlib_fails_before_any_work(tmp_path, files_for_plots):
    from types import SimpleNamespace

    from helpers import one_error_line

    env = _without_matplotlib(tmp_path)

    def run(*args):  # a process of its own: what it lacks is an installed module
        import sys

        p = subprocess.run([sys.executable, "-m", "checklist_eval", *args], capture_output=True, text=True,
                           timeout=120, env=env)  # fmt: skip
        return SimpleNamespace(code=p.returncode, err=p.stderr, out=p.stdout)

    data = tmp_path / "set.jsonl"
    data.write_text("".join(json.dumps(x) + "\n" for x in _labelled_logprob_lines(12, 12)))
    r = run("contamination-eval", str(data), "--plot", str(tmp_path / "roc.png"), "--bootstrap", "0")
    one_error_line(r, "matplotlib")
    assert r.out == "" and not (tmp_path / "roc.png").exists()
    out = tmp_path / "scores"
    r = run("detection", "score", *files_for_plots, "--plot", "roc", "--out", str(out), "--bootstrap", "0")
    one_error_line(r, "matplotlib")
    assert r.out == "" and not out.exists()  # neither scores.txt nor scores.json
    r = run("detection", "score", *files_for_plots, "--prevalence-sweep", "--plot", str(tmp_path / "sw.png"))
    one_error_line(r, "matplotlib")
    assert r.out == "" and not (tmp_path / "sw.png").exists()


@pytest.fixture()
def files_for_plots(tmp_path):
    """-r REF -x INDEX -s SYSOUT of 40 trials, half targets."""
    rng = np.random.default_rng(2)
    index, ref, sysout = tmp_path / "idx.csv", tmp_path / "ref.csv", tmp_path / "sys_cutoff-50.csv"
    index.write_text("DatasetID|TaskID|FileID\n" + "".join(f"d|detection|f{i}\n" for i in range(40)))
    ref.write_text("DatasetID|TaskID|TopicID|FileID|GeneratorID|IsTarget\n"
                   + "".join(f"d|detection|t|f{i}|G|{'Y' if i % 2 else 'N'}\n" for i in range(40)))
    sysout.write_text("DatasetID|TaskID|DiscriminatorID|ModelVersion|FileID|ConfidenceScore\n"
                      + "".join(f"d|detection|D|v|f{i}|{rng.uniform(0.3 * (i % 2), 0.7 + 0.3 * (i % 2)):.3f}\n"
                                for i in range(40)))  # fmt: skip
    return ["-r", str(ref), "-x", str(index), "-s", str(sysout)]


def test_prevalence_sweep_plot_x_is_the_share_reached(files_for_plots):
    """20 targets and 20 non-targets cannot make a 1 % subset: the plot's x is what the subsets hold."""
    from checklist_eval.detection.trojai import sweep_points

    out = cli("detection", "score", *files_for_plots, "--prevalence-sweep", "--json", "--bootstrap", "0")
    assert out.returncode == 0, out.stderr
    sweep = json.loads(out.stdout)["prevalence_sweep"]
    x = sweep_points(sweep)[0]
    want = [100 * r["n_target"] / r["n"] for r in sweep["rows"]]
    np.testing.assert_allclose(x, want, rtol=0, atol=1e-12)
    asked = np.array([100 * r["rate"] for r in sweep["rows"]])
    assert np.abs(x - asked).max() > 1  # the requested rate is not what was reached here
