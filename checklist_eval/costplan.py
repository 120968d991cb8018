"""What a run would spend, before anything is sent (``--dry-run`` on ``check``, ``score``, ``batch``).

Per paper and in total: calls, prompt tokens, the part of them a provider's prefix cache would serve
(every question of a paper shares the paper prefix), completion tokens, and the cost at the price
table's rates. A model the price table does not know has cost ``None``, shown as "price unknown",
never as $0. Prices are read through ``PriceTable`` only.
"""

from __future__ import annotations

from typing import Any

from checklist_eval.models import Paper, Usage

TOKEN_FIELDS = ("calls", "prompt_tokens", "cached_tokens", "completion_tokens")
PRICE_UNKNOWN = "price unknown"


def plan_papers(labelled: list[tuple[str, Paper]], args: Any) -> dict[str, Any]:
    """The plan of an assessor described by command-line ``args`` over (label, paper) pairs."""
    if getattr(args, "assessor", "heuristic") == "heuristic":
        rows = [{"paper": label, "source": p.source, **dict.fromkeys(TOKEN_FIELDS, 0), "cost_usd": 0.0,
                 "items_judged_offline": sum(1 for it in p.checklist.items if it.is_answered)}
                for label, p in labelled]
        return _plan("heuristic", None, rows, priced=True)
    from checklist_eval.assessors import estimate
    from checklist_eval.assessors.ledger import PriceTable

    prices = PriceTable.load(args.prices)
    price = prices.lookup(args.model)
    est = estimate([p for _, p in labelled], {"model": args.model, "prompt_version": args.prompt_version,
                                              "prices": args.prices})
    rows = []
    for (label, paper), per in zip(labelled, est["papers"]):
        row = {"paper": label, "source": paper.source, **{k: per[k] for k in TOKEN_FIELDS},
               "truncated": per["truncated"]}
        row["cost_usd"] = None if price is None else round(price.cost(
            row["prompt_tokens"], row["completion_tokens"], row["cached_tokens"]), 6)
        rows.append(row)
    plan = _plan(args.assessor, args.model, rows, priced=price is not None)
    plan["max_cost"] = getattr(args, "max_cost", None)
    return plan


def _plan(assessor: str, model: str | None, rows: list[dict[str, Any]], *, priced: bool) -> dict[str, Any]:
    total = {k: sum(r[k] for r in rows) for k in TOKEN_FIELDS}
    cost = round(sum(r["cost_usd"] for r in rows), 6) if priced else None
    plan: dict[str, Any] = {"assessor": assessor, "model": model, **total, "cost_usd": cost, "priced": priced,
                            "papers": rows, "sent": 0}
    if assessor == "heuristic":
        plan["items_judged_offline"] = sum(r["items_judged_offline"] for r in rows)
    else:
        plan["note"] = ("tokens ~ characters/4; cached = the shared paper prefix a provider's prompt cache "
                        "serves after each paper's first question; an upper estimate: answers already in "
                        "our cache, or identical between papers, are not asked again")
    return plan


def usd(cost: float | None) -> str:
    """A cost for people: "price unknown" when the model has no price, never $0."""
    return PRICE_UNKNOWN if cost is None else f"${cost:.4f}"


def usage_cost(usage: Usage, priced: bool) -> str:
    return usd(usage.cost_usd if priced else None)


def print_plan(plan: dict[str, Any], failures: list[dict[str, str]] | None = None) -> None:
    """The plan as a table on stdout (rich), one row per paper and a total."""
    from rich.console import Console
    from rich.table import Table

    who = plan["assessor"] + (f" / {plan['model']}" if plan.get("model") else "")
    table = Table(title=f"Dry run: {who}: nothing is sent", title_justify="left")
    table.add_column("paper", overflow="fold")
    for col in ("calls", "prompt tokens", "cached", "completion", "cost"):
        table.add_column(col, justify="right")
    for r in plan["papers"]:
        table.add_row(r["paper"], *(f"{r[k]:,}" for k in TOKEN_FIELDS), usd(r["cost_usd"]))
    table.add_row("total", *(f"{plan[k]:,}" for k in TOKEN_FIELDS), usd(plan["cost_usd"]), style="bold")
    console = Console()
    console.print(table)
    for f in failures or []:
        console.print(f"not planned: {f['submission_id']}: {f['error']}", markup=False, highlight=False)
    if not plan["priced"]:
        console.print(f"{PRICE_UNKNOWN}: {plan['model']} is not in the price table; give its price with "
                      "--prices FILE", markup=False, highlight=False)
    elif plan["assessor"] != "heuristic":
        console.print(f"estimated cost {usd(plan['cost_usd'])} ({plan['note']}); nothing was sent.",
                      markup=False, highlight=False)
        cap = plan.get("max_cost")
        if cap is not None and plan["cost_usd"] > cap:
            console.print(f"the estimate passes --max-cost ${cap:.4f}: the run would stop early (exit 3) and "
                          "can be resumed with a higher cap", markup=False, highlight=False)
    else:
        console.print("the heuristic assessor calls no model: nothing to spend.", highlight=False)
