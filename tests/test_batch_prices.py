"""Batch calls are priced at the batch rate; without batch prices, at the online rate with a warning."""

from __future__ import annotations

import json
import logging

from cli_runner import run_cli
import pytest

from checklist_eval.endpoint.prices import PriceTable
from checklist_eval.models import Usage


def test_batch_rate_and_documented_fallback(tmp_path, caplog):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"models": {
        "with-batch": {"input": 2.0, "cached_input": 0.5, "output": 8.0, "batch_input": 1.0, "batch_output": 4.0},
        "no-batch": {"input": 2.0, "output": 8.0}}}))
    table = PriceTable.load(path)
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000, cached_tokens=500_000)
    assert table.cost("with-batch", usage) == 0.5 * 2.0 + 0.5 * 0.5 + 8.0
    # batch: uncached prompt at batch_input, cached at min(cached_input, batch_input), output at batch_output
    assert table.batch_cost("with-batch", usage) == 0.5 * 1.0 + 0.5 * 0.5 + 4.0
    with caplog.at_level(logging.WARNING):
        assert table.batch_cost("no-batch", usage) == table.cost("no-batch", usage)
        table.batch_cost("no-batch", usage)
    assert [r.getMessage() for r in caplog.records].count(
        "batch price unknown for model 'no-batch': batch calls priced at the online rate "
        "(add batch_input/batch_output with --prices FILE)") == 1


def test_dry_run_of_a_reasoning_model_counts_its_reasoning_tokens(tmp_path, fixtures_dir):
    """gpt-5-mini thinks before it answers: its plan adds the profile's reasoning tokens per call (at output
    price), so it is never priced below gpt-4o-mini, and the estimate is stated as one."""
    import json

    def plan(model, *extra):
        run = run_cli("score", fixtures_dir / "submissions" / "team-alpha", "--dry-run", "--json", "--assessor", "llm",
                      "--model", model, "--cache", tmp_path / "none.sqlite", *extra)
        assert run.returncode == 0, run.stderr
        return json.loads(run.stdout)

    mini4o, mini5 = plan("gpt-4o-mini"), plan("gpt-5-mini")
    low = plan("gpt-5-mini", "--reasoning-effort", "low")
    assert mini4o["reasoning_tokens"] == 0 and mini5["calls"] == mini4o["calls"] > 0
    # by hand from prices.json: 1,200 reasoning tokens per call at gpt-5-mini's default effort, 600 at low
    assert mini5["reasoning_tokens"] == 1200 * mini5["calls"] and low["reasoning_tokens"] == 600 * low["calls"]
    assert mini5["completion_tokens"] == mini4o["completion_tokens"] + mini5["reasoning_tokens"]
    price = {"input": 0.25, "cached_input": 0.025, "output": 2.0}  # gpt-5-mini, USD per 1M tokens
    by_hand = ((mini5["prompt_tokens"] - mini5["cached_tokens"]) * price["input"]
               + mini5["cached_tokens"] * price["cached_input"] + mini5["completion_tokens"] * price["output"]) / 1e6
    assert mini5["cost_usd"] == pytest.approx(by_hand, abs=2e-6 * len(mini5["papers"]))
    assert mini5["cost_usd"] > mini4o["cost_usd"]
    assert "estimated 1,200 reasoning tokens per call" in mini5["note"] and "estimate" in mini5["note"]
