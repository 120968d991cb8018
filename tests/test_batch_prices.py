"""Batch calls are priced at the batch rate; without batch prices, at the online rate with a warning."""

from __future__ import annotations

import json
import logging

from checklist_eval.assessors.ledger import PriceTable
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
