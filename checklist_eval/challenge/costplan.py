"""What a run would spend, before anything is sent (``--dry-run`` on ``check``, ``score``, ``batch``).

Per paper and in total: calls, prompt tokens, the part of them a provider's prefix cache would serve
(every question of a paper shares the paper prefix), completion tokens, and the cost at the price
table's rates. A model the price table does not know has cost ``None``, shown as "price unknown",
never as $0. Prices are read through ``PriceTable`` only.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from checklist_eval.assessors.config import AssessorConfig
from checklist_eval.challenge.results.leaderboard import Failure
from checklist_eval.models import Paper
from checklist_eval.summaries import OptionalParts

TOKEN_FIELDS = ("calls", "prompt_tokens", "cached_tokens", "completion_tokens")
PRICE_UNKNOWN = "price unknown"


class PlannedPaper(OptionalParts):
    """One paper of a dry run: what assessing it would send and cost."""

    paper: str
    source: str
    calls: int
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    truncated: bool | None = None  # LLM: the paper is over the model's context
    # LLM: share of the paper's text a question is given (median, least); below 1 the paper is over the
    # context and each question gets the passages most relevant to it
    body_share: float | None = None
    body_share_min: float | None = None
    reasoning_tokens: int | None = None  # LLM: the estimated part of completion_tokens spent reasoning
    cost_usd: float | None  # None: the model has no price
    items_judged_offline: int | None = None  # heuristic: answers judged without any call


class CostPlan(OptionalParts):
    """``--dry-run --json`` of ``check``, ``score`` and ``batch``: totals, then one entry per paper. A
    heuristic plan and an LLM plan carry different figures; neither prints the other's as null."""

    assessor: str
    model: str | None
    calls: int
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    cost_usd: float | None
    priced: bool
    papers: list[PlannedPaper]
    sent: int
    items_judged_offline: int | None = None
    note: str | None = None
    reasoning_tokens: int | None = None  # LLM: estimated from the model's profile, inside completion_tokens
    max_cost: float | None = None
    already_cached: int | None = None
    failures: list[Failure] | None = None  # batch: submissions that do not parse, as the run records them


def _open_cache(path: Path | None) -> sqlite3.Connection | None:
    """The response cache, read-only (a dry run writes nothing), or None when there is none."""
    if path is None or not Path(path).is_file():
        return None
    from checklist_eval.endpoint.cachefile import open_cache_db

    db = open_cache_db(Path(path), read_only=True, busy_s=10)  # not a database: refused, naming it
    try:
        db.execute("SELECT 1 FROM responses LIMIT 1")
        return db
    except sqlite3.DatabaseError:
        return None


def _as_sent(db: sqlite3.Connection, endpoint: str, model: str, params: dict[str, Any], *, refresh: bool
             ) -> dict[str, Any]:
    """``params`` as a run would send them: less what an earlier run learned this (endpoint, model) refuses
    (its stored lessons, which the run's cache key follows); ``--refresh`` relearns, so it starts from none."""
    if refresh:
        return params
    dropped = _remembered(db, endpoint, model, "dropped")
    gone = {p for p in dropped if isinstance(p, str)} if isinstance(dropped, list) else set()
    return {k: v for k, v in params.items() if k not in gone}


def _remembered(db: sqlite3.Connection, endpoint: str, model: str, field: str) -> Any:
    """One field of what an earlier run stored about (endpoint, model) (``capabilities``), else ""."""
    import json

    try:
        row = db.execute("SELECT quirks_json FROM capabilities WHERE endpoint=? AND model=?",
                         (endpoint, model)).fetchone()
        saved = json.loads(row[0]) if row else {}
    except (sqlite3.Error, ValueError, TypeError):  # no table yet, or a damaged row: nothing was learned
        saved = {}
    found = saved.get(field) if isinstance(saved, dict) else None
    return found if found is not None else ""


def _cache_probe(db: sqlite3.Connection, cfg: AssessorConfig):
    """(strategy, prefix digest, question) -> whether the cache already answers that request, keyed
    exactly as the LLM assessor keys it (same endpoint, model, sampling, prompt version)."""
    from checklist_eval.assessors.llm.grammar import SCHEMA_DIGEST
    from checklist_eval.endpoint.cache import cache_key, endpoint_identity
    from checklist_eval.endpoint.served import keyed_model

    endpoint = endpoint_identity(cfg.resolved_base_url)
    params = _as_sent(db, endpoint, cfg.model or "", cfg.sampling_params(), refresh=cfg.refresh)
    # the model the engine said it serves, as the last run heard it (a dry run asks the engine nothing)
    said = "" if cfg.refresh else _remembered(db, endpoint, cfg.model or "", "identity")
    model = keyed_model(cfg.model or "", said if isinstance(said, str) else "")

    def answered(strategy: str, digest: str, question: str) -> bool:
        key = cache_key(endpoint=endpoint, model=model, prefix_digest=digest, question=question,
                        params=params, strategy=strategy, prompt_version=cfg.prompt_version, schema=SCHEMA_DIGEST)
        return db.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    return answered


def plan_papers(labelled: list[tuple[str, Paper]], config: AssessorConfig) -> CostPlan:
    """The plan of the assessor ``config`` describes over (label, paper) pairs; answers already in the
    cache a real run would read cost nothing and are left out (a resumed run's plan)."""
    if config.assessor == "heuristic":
        rows = [PlannedPaper(paper=label, source=p.source, **dict.fromkeys(TOKEN_FIELDS, 0), cost_usd=0.0,
                             items_judged_offline=sum(1 for it in p.checklist.items if it.is_answered))
                for label, p in labelled]
        return _plan("heuristic", None, rows, priced=True)
    from checklist_eval.assessors import estimate
    from checklist_eval.endpoint.prices import PriceTable

    prices = PriceTable.load(config.prices)
    price = prices.lookup(config.model)
    options: dict[str, Any] = {"model": config.model, "prompt_version": config.prompt_version,
                               "prices": config.prices, "reasoning_effort": config.reasoning_effort,
                               "context_tokens": config.context_tokens, "max_tokens": config.max_tokens}
    db = _open_cache(cache_read_by(config))
    try:
        if db is not None:
            options["in_cache"] = _cache_probe(db, config)
        est = estimate([p for _, p in labelled], options)
    finally:
        if db is not None:
            db.close()
    rows = []
    for (label, paper), per in zip(labelled, est["papers"], strict=False):
        cost = None if price is None else round(price.cost(
            per["prompt_tokens"], per["completion_tokens"], per["cached_tokens"]), 6)
        rows.append(PlannedPaper(paper=label, source=paper.source, **{k: per[k] for k in TOKEN_FIELDS},
                                 truncated=per["truncated"], body_share=per["body_share"],
                                 body_share_min=per["body_share_min"], reasoning_tokens=per["reasoning_tokens"],
                                 cost_usd=cost))
    return _plan(config.assessor, config.model, rows, priced=price is not None, max_cost=config.max_cost,
                 already_cached=est["already_cached"], reasoning_per_call=est["reasoning_per_call"])


def _plan(assessor: str, model: str | None, rows: list[PlannedPaper], *, priced: bool,
          reasoning_per_call: int = 0, **extra: Any) -> CostPlan:
    total = {k: sum(getattr(r, k) for r in rows) for k in TOKEN_FIELDS}
    cost = round(sum(r.cost_usd or 0.0 for r in rows), 6) if priced else None
    if assessor == "heuristic":
        extra["items_judged_offline"] = sum(r.items_judged_offline or 0 for r in rows)
    else:
        extra["note"] = ("tokens ~ characters/4; cached = the shared paper prefix a provider's prompt cache "
                         "serves after each paper's first question; answers already in our cache and "
                         "repeated identical requests are not counted: a run does not send them")
        extra["reasoning_tokens"] = sum(r.reasoning_tokens or 0 for r in rows)
        if reasoning_per_call:
            extra["note"] += (f"; completion includes an estimated {reasoning_per_call:,} reasoning tokens per "
                              "call, from the model's profile in the price table (an estimate: the real count "
                              "varies)")
    return CostPlan(assessor=assessor, model=model, **total, cost_usd=cost, priced=priced, papers=rows, sent=0,
                    **extra)


def cache_read_by(config: AssessorConfig) -> Path | None:
    """The cache a real run of ``config`` would read answers from (None when it reads none)."""
    if config.no_cache or config.refresh:
        return None
    return config.cache_path


def _share(r: PlannedPaper) -> str:
    if r.body_share is None or r.body_share_min is None:
        return ""
    return "all" if r.body_share_min >= 1.0 else f"{r.body_share:.0%} ({r.body_share_min:.0%})"


def usd(cost: float | None) -> str:
    """A cost for people: "price unknown" when the model has no price, never $0."""
    return PRICE_UNKNOWN if cost is None else f"${cost:.4f}"


def print_plan(plan: CostPlan) -> None:
    """The plan as a table on stdout (rich), one row per paper and a total."""
    from rich.table import Table

    from checklist_eval.redact import terminal_console

    who = plan.assessor + (f" / {plan.model}" if plan.model else "")
    table = Table(title=f"Dry run: {who}: nothing is sent", title_justify="left")
    table.add_column("paper", overflow="fold")
    for col in ("calls", "prompt tokens", "cached", "completion", "cost"):
        table.add_column(col, justify="right")
    cut = [r for r in plan.papers if r.body_share is not None and r.body_share < 1.0]
    if cut:
        table.add_column("text sent", justify="right")
    for r in plan.papers:
        table.add_row(r.paper, *(f"{getattr(r, k):,}" for k in TOKEN_FIELDS), usd(r.cost_usd),
                      *([_share(r)] if cut else []))
    table.add_row("total", *(f"{getattr(plan, k):,}" for k in TOKEN_FIELDS), usd(plan.cost_usd), *([""] if cut else []),
                  style="bold")
    console = terminal_console()
    console.print(table)
    if cut:
        console.print(f"{len(cut)} paper(s) over the model's context: each question is given the passages most "
                      "relevant to it; 'text sent' is the share of the paper's text (median, least)",
                      markup=False, highlight=False)
    for f in plan.failures or []:
        console.print(f"not planned: {f.submission_id}: {f.error}", markup=False, highlight=False)
    if plan.already_cached:
        console.print(f"{plan.already_cached} answers are already in the cache: not counted, not asked again",
                      markup=False, highlight=False)
    if not plan.priced:
        console.print(f"{PRICE_UNKNOWN}: {plan.model} is not in the price table; give its price with "
                      "--prices FILE", markup=False, highlight=False)
    elif plan.assessor != "heuristic":
        console.print(f"estimated cost {usd(plan.cost_usd)} ({plan.note}); nothing was sent.",
                      markup=False, highlight=False)
        cap = plan.max_cost
        if cap is not None and plan.cost_usd is not None and plan.cost_usd > cap:
            console.print(f"the estimate passes --max-cost ${cap:.4f}: the run would stop early (exit 3) and "
                          "can be resumed with a higher cap", markup=False, highlight=False)
    else:
        console.print("the heuristic assessor calls no model: nothing to spend.", highlight=False)
