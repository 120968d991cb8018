#!/usr/bin/env python
"""How the shared papers fit a local model's context: at 8k, 16k, 32k and 128k tokens, how many papers go
whole, what share of the text a question is given when one does not, and how the assessor's forecast of a
prompt's tokens compares with the engine's own tokenizer.

Every prompt is built by the assessor's own code (``messages.prefix_messages``, ``facts.question_for``) as a
run with ``--context-tokens N`` and the default ``--max-tokens`` would send it; nothing is assessed. With
``--base-url`` of a llama.cpp server the longest prompt of each paper and window is put through the
engine's chat template (``POST /apply-template``) and tokenizer (``POST /tokenize``): the table then shows
the real tokens beside the forecast and counts the prompts the engine would refuse (over the window less
the reply's budget); the target is none.

    python scripts/bench_context.py [--papers ../shared/corpus/papers-latex] [--base-url http://127.0.0.1:18081/v1]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checklist_eval.assessors.config import CHARS_PER_TOKEN, LLMConfig  # noqa: E402
from checklist_eval.assessors.llm.facts import question_for  # noqa: E402
from checklist_eval.assessors.llm.messages import prefix_messages  # noqa: E402
from checklist_eval.assessors.llm.prompts import PromptSet  # noqa: E402
from checklist_eval.models import Paper  # noqa: E402

CONTEXTS = (8_192, 16_384, 32_768, 131_072)
Messages = list[dict[str, str]]


@dataclass
class PaperFit:
    source: str
    fits: bool
    shares: list[float]  # one per answered question
    longest: Messages  # the longest prompt a question of it sends
    forecast: int  # its tokens as the assessor forecasts them (characters / CHARS_PER_TOKEN)
    real: int | None = None  # as the engine tokenizes it, chat template included


@dataclass
class WindowRow:
    context: int
    papers: list[PaperFit] = field(default_factory=list)

    def figures(self, max_tokens: int) -> dict[str, object]:
        cut = [p for p in self.papers if not p.fits]
        per_paper = [statistics.median(p.shares) for p in cut]
        real = [p for p in self.papers if p.real is not None]
        return {
            "context": self.context, "papers": len(self.papers), "whole": len(self.papers) - len(cut),
            "share_median": statistics.median(per_paper) if per_paper else 1.0,
            "share_min": min((min(p.shares) for p in cut), default=1.0),
            "forecast_max": max((p.forecast for p in self.papers), default=0),
            "real_max": max((p.real for p in real if p.real is not None), default=None) if real else None,
            "real_per_forecast": (statistics.median(p.real / p.forecast for p in real if p.real) if real else None),
            "over_window": sum(1 for p in real if p.real is not None and p.real + max_tokens > self.context),
        }


def load_papers(folder: Path) -> list[Paper]:
    from checklist_eval.reading.parsing import load_paper

    papers = []
    for entry in sorted(p for p in folder.iterdir() if p.is_dir()):
        try:
            papers.append(load_paper(entry))
        except Exception as err:  # noqa: BLE001 - a paper the parser refuses is reported, not measured
            print(f"skipped {entry.name}: {err}", file=sys.stderr)
    return papers


def fit_paper(paper: Paper, context: int, prompts: PromptSet, max_tokens: int = 800) -> PaperFit:
    """Every answered question's prompt at ``context``, as the assessor builds it."""
    budget = LLMConfig(model="bench", context_tokens=context, max_tokens=max_tokens).prompt_char_budget
    whole = prefix_messages(prompts, paper, budget)
    shares, longest, chars = [], whole.messages, 0
    for item in paper.checklist.items:
        if not item.is_answered:
            continue
        prefix = whole if whole.share >= 1.0 else prefix_messages(prompts, paper, budget, item=item)
        messages = [*prefix.messages, {"role": "user", "content": question_for(prompts, paper, item)}]
        size = sum(len(m["content"]) for m in messages)
        shares.append(prefix.share)
        if size > chars:
            longest, chars = messages, size
    return PaperFit(paper.source, whole.share >= 1.0, shares or [1.0], longest, chars // CHARS_PER_TOKEN)


def engine_tokenizer(base_url: str, timeout: float = 120.0) -> Callable[[Messages], int]:
    """Tokens of a chat prompt as a llama.cpp server counts them: its chat template, then its tokenizer."""
    import httpx2

    root = base_url.rstrip("/").removesuffix("/v1")

    def count(messages: Messages) -> int:
        prompt = httpx2.post(f"{root}/apply-template", json={"messages": messages}, timeout=timeout).json()["prompt"]
        tokens = httpx2.post(f"{root}/tokenize", json={"content": prompt, "add_special": True},
                             timeout=timeout).json()["tokens"]
        return len(tokens)

    return count


def measure(papers: list[Paper], contexts: tuple[int, ...] = CONTEXTS,
            tokenize: Callable[[Messages], int] | None = None, max_tokens: int = 800,
            prompt_version: str | None = None) -> list[dict[str, object]]:
    """The table's rows (see the module docstring); ``tokenize`` counts a prompt's real tokens."""
    prompts = PromptSet.load(prompt_version or LLMConfig(model="bench").prompt_version)
    rows = []
    for context in contexts:
        row = WindowRow(context)
        for paper in papers:
            fit = fit_paper(paper, context, prompts, max_tokens)
            if tokenize is not None:
                fit.real = tokenize(fit.longest)
            row.papers.append(fit)
        rows.append(row.figures(max_tokens))
    return rows


def print_rows(rows: list[dict[str, object]]) -> None:
    head = f"{'context':>8} {'papers':>6} {'whole':>5} {'share med':>9} {'share min':>9} {'forecast max':>12} " \
           f"{'real max':>8} {'real/forecast':>13} {'refused':>7}"
    print(head)
    for r in rows:
        real_max = "-" if r["real_max"] is None else f"{r['real_max']:,}"
        ratio = "-" if r["real_per_forecast"] is None else f"{r['real_per_forecast']:.2f}"
        refused = "-" if r["real_max"] is None else str(r["over_window"])
        print(f"{r['context']:>8,} {r['papers']:>6} {r['whole']:>5} {r['share_median']:>9.0%} {r['share_min']:>9.0%} "
              f"{r['forecast_max']:>12,} {real_max:>8} {ratio:>13} {refused:>7}")
    print("share: of the paper's text a question is given, over the papers that do not fit whole (median of "
          "their per-paper medians; least of any question). forecast: characters/4. real: the engine's chat "
          "template and tokenizer on each paper's longest prompt; refused: real + 800 reply tokens over the "
          "window (target 0)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=Path, default=ROOT.parent / "shared" / "corpus" / "papers-latex")
    ap.add_argument("--base-url", default=None, help="a llama.cpp server to count real tokens with")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    papers = load_papers(args.papers)
    rows = measure(papers, tokenize=engine_tokenizer(args.base_url) if args.base_url else None)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print_rows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
