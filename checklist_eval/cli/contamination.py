"""``checklist-eval contamination`` (has a model seen this paper?) and ``contamination-eval`` (how well
the membership scores separate known members from non-members). See checklist_eval.membership.contamination."""

from __future__ import annotations

import argparse
import sys

from checklist_eval.cli.numbers import MAX_TIMEOUT_S, number

_NGRAM_METHODS = ("slope_ngram", "slope_mean", "slope_z")


def _endpoint_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("endpoint (OpenAI-compatible completions with echo + logprobs, e.g. vLLM)")
    g.add_argument("--model", help="model name on the endpoint")
    g.add_argument("--base-url", help="endpoint base URL, e.g. http://127.0.0.1:8000/v1")
    g.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="NAME",
                   help="environment variable holding the key (default OPENAI_API_KEY; "
                        "local servers need none)")  # fmt: skip
    g.add_argument("--timeout", type=number("--timeout", low=0, low_open=True, high=MAX_TIMEOUT_S),
                   default=120.0, metavar="S", help="per request (default 120)")
    g.add_argument("--top-k", type=number("--top-k", kind=int, low=0, high=20), default=5, metavar="K",
                   help="top log-probabilities per token, for Min-K%%++ (default 5, at most 20)")  # fmt: skip
    g.add_argument("--ngram", type=number("--ngram", kind=int, low=0, high=64), default=1, metavar="N",
                   help="context length of the n-gram reference (default 1; 0: no n-gram requests)")  # fmt: skip


def _method_args(p: argparse.ArgumentParser) -> None:
    from checklist_eval.membership.methods import METHODS

    p.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated, from {','.join(METHODS)}")
    p.add_argument("--k", type=number("--k", low=0, low_open=True, high=1),
                   default=0.2, help="share of lowest tokens for min_k/min_k_pp (default 0.2)")
    p.add_argument("--json", action="store_true", help="print JSON")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "contamination",
        help="has the model seen this paper? perplexity slope, Min-K%%, Min-K%%++ (higher = more likely seen)",
        description="Token log-probabilities of the paper's text (in chunks) from a completions endpoint, or "
        "of any texts from a JSONL file (--logprobs), scored by each membership method.",
    )
    p.add_argument("paper", nargs="?", metavar="PAPER", help="paper: .tex, LaTeX folder, archive or PDF")
    p.add_argument("--logprobs", metavar="FILE",
                   help="JSONL of {id, tokens, logprobs[, top_logprobs, ngram_logprobs, label]} "
                        "instead of a paper")  # fmt: skip
    p.add_argument("--chunk-words", type=number("--chunk-words", kind=int, low=1, high=1_000_000),
                   default=128, metavar="N", help="words per chunk (default 128)")
    p.add_argument("--max-chunks", type=number("--max-chunks", kind=int, low=1, high=1_000_000),
                   default=200, metavar="N", help="score at most N chunks (default 200)")
    _method_args(p)
    _endpoint_args(p)
    from checklist_eval.cli.flags import add_limit_args

    add_limit_args(p)
    p.set_defaults(func=run)

    e = subparsers.add_parser(
        "contamination-eval",
        help="AUC (bootstrap CI), TPR at low FPR and ROC of each membership method on labelled texts",
        description="Each DATASET is JSONL with label 1 (member) or 0: WikiMIA-style {\"input\", \"label\"} "
        "lines are scored through the endpoint, logprob lines as they are. Label 1 is the positive class.",
    )
    e.add_argument("datasets", nargs="+", metavar="DATASET.jsonl")
    e.add_argument("--bootstrap", type=number("--bootstrap", kind=int, low=0, high=1_000_000),
                   default=1000, help="bootstrap resamples for the AUC CI (default 1000)")
    e.add_argument("--seed", type=number("--seed", kind=int, low=0, high=2**32 - 1),
                   default=0, help="bootstrap seed (default 0)")
    e.add_argument("--plot", metavar="FILE", help="write the ROC curves (PNG; needs matplotlib)")
    _method_args(e)
    _endpoint_args(e)
    e.set_defaults(func=run_eval)


def _fetcher(args, methods):
    """``fetch(id, text) -> TokenText`` through the endpoint, or None without --model/--base-url."""
    from checklist_eval.errors import InputError
    from checklist_eval.membership.prompt_logprobs import LogprobClient, refuse_hosted_openai

    if not args.model and not args.base_url:
        return None, None
    refuse_hosted_openai(args.base_url)
    if not args.model:
        raise InputError(None, "--model is required with --base-url")
    if args.ngram < 0:
        raise InputError(None, f"--ngram must be >= 0, got {args.ngram}")
    client = LogprobClient(args.model, args.base_url, api_key_env=args.api_key_env, timeout=args.timeout,
                           top_k=args.top_k)  # fmt: skip
    ngram = args.ngram if any(m in methods for m in _NGRAM_METHODS) else 0

    def fetch(text_id: str, text: str):
        return client.fetch(text_id, text, ngram)

    return fetch, client


def _notes(texts, methods) -> list[str]:
    import numpy as np

    from checklist_eval.membership.contamination import TOPK_NOTE, uses_topk_approximation

    notes = []
    if uses_topk_approximation(texts, methods):
        notes.append(TOPK_NOTE)
    if any(m in methods for m in _NGRAM_METHODS) and any(t.ngram_logprobs is None for t in texts):
        notes.append("no n-gram log-probabilities: slope_ngram is empty and slope_mean/slope_z use the raw "
                     "probabilities")  # fmt: skip
    refs = [t.ngram_logprobs for t in texts if t.ngram_logprobs is not None]
    missing = sum(int(np.isnan(r).sum()) for r in refs)
    total = sum(r.size for r in refs)
    if total and missing:
        notes.append(f"{missing} of {total} tokens ({100 * missing / total:.1f}%) have no n-gram value (the "
                     "endpoint's tokens did not line up with the text): they count as not adjusted")  # fmt: skip
    return notes


def run(args: argparse.Namespace) -> int:
    from checklist_eval.errors import InputError
    from checklist_eval.membership import contamination as c

    methods = c.parse_methods(args.methods)
    c.check_k(args.k)
    if bool(args.paper) == bool(args.logprobs):
        raise InputError(None, "give either a PAPER (with --model and --base-url) or --logprobs FILE")
    if args.logprobs:
        texts = c.read_logprob_jsonl(args.logprobs)
        rows = [c.TextScores(id=t.id, n_tokens=t.n_tokens, scores=c.score_text(t, methods, args.k)) for t in texts]
        return _report(c.ContaminationReport(texts=rows), methods, _notes(texts, methods), args)
    if args.chunk_words < 1 or args.max_chunks < 1:
        raise InputError(None, "--chunk-words and --max-chunks must be at least 1")
    fetch, client = _fetcher(args, methods)
    if fetch is None:
        raise InputError(None, "scoring a paper needs --model and --base-url (a completions endpoint)")
    try:
        chunks, skipped = _paper_chunks(args, args.chunk_words, args.max_chunks)
        texts = [fetch(f"chunk-{i}", chunk) for i, chunk in enumerate(chunks)]
    finally:
        client.close()
    rows = [c.TextScores(id=t.id, n_tokens=t.n_tokens, scores=c.score_text(t, methods, args.k)) for t in texts]
    notes = _notes(texts, methods)
    if skipped:
        notes.append(f"{skipped} chunk(s) past --max-chunks {args.max_chunks} not scored")
    payload = c.ContaminationReport(
        paper=args.paper, model=args.model, chunk_words=args.chunk_words, k=args.k, ngram=args.ngram, texts=rows,
        paper_scores=c.weighted_scores([(r.n_tokens, r.scores) for r in rows], methods),
        n_tokens=sum(r.n_tokens for r in rows), meanings={m: c.MEANINGS[m] for m in methods}, notes=notes)
    return _report(payload, methods, notes, args)


def _paper_chunks(args: argparse.Namespace, chunk_words: int, max_chunks: int) -> tuple[list[str], int]:
    from checklist_eval.cli.flags import parse_limits
    from checklist_eval.errors import InputError
    from checklist_eval.membership.contamination import chunk_words as split
    from checklist_eval.membership.contamination import paper_text

    chunks = split(paper_text(args.paper, parse_limits(args)), chunk_words)
    if not chunks:
        raise InputError(args.paper, "no text to score")
    return chunks[:max_chunks], max(0, len(chunks) - max_chunks)


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.5g}"


def _report(payload, methods, notes, args) -> int:
    from checklist_eval.cli.output import emit

    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return emit(payload, args.json, lambda: _print_report(payload, methods, args), indent=2)


def _print_report(payload, methods, args) -> None:
    from checklist_eval.membership.contamination import MEANINGS

    lines = []
    if payload.paper_scores is not None:
        lines.append(f"{args.paper}: {len(payload.texts)} chunk(s) of up to {args.chunk_words} words, "
                     f"{payload.n_tokens} tokens, model {args.model}")  # fmt: skip
        lines.append("Paper scores (token-weighted mean of the chunks; higher = more likely seen):")
        for m in methods:
            lines.append(f"  {m:<12} {_fmt(payload.paper_scores[m]):>12}  {MEANINGS[m]}")
        lines.append("")
    else:
        lines.append("Scores per text (higher = more likely seen):")
    head = ["id", "tokens", *methods]
    rows = [[r.id, str(r.n_tokens), *(_fmt(r.scores[m]) for m in methods)] for r in payload.texts]
    widths = [max(len(x[i]) for x in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        lines.append("  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(r, widths, strict=True))))
    if payload.paper_scores is None:
        lines += ["", *(f"{m}: {MEANINGS[m]}" for m in methods)]
    print("\n".join(lines))


def run_eval(args: argparse.Namespace) -> int:
    from pathlib import Path

    from checklist_eval.cli.output import emit
    from checklist_eval.errors import InputError
    from checklist_eval.membership import contamination as c
    from checklist_eval.membership import contamination_eval as ce

    methods = c.parse_methods(args.methods)
    c.check_k(args.k)
    if args.bootstrap < 0:
        raise InputError(None, f"--bootstrap must be >= 0, got {args.bootstrap}")
    if args.plot:
        from checklist_eval.detection.plots import require_plotting

        require_plotting()
    fetch, client = _fetcher(args, methods)
    results: dict[str, dict] = {}
    all_texts = []
    try:
        for path in args.datasets:
            texts = ce.load_dataset(path, fetch)
            all_texts += texts
            name = _unique(Path(path).stem, results)
            results[name] = ce.evaluate(texts, methods, k=args.k, n_bootstrap=args.bootstrap, seed=args.seed)
    finally:
        if client is not None:
            client.close()
    for note in _notes(all_texts, methods) + ce.coverage_notes(results):
        print(f"note: {note}", file=sys.stderr)
    if args.plot:
        print(f"wrote {ce.plot(results, methods, args.plot)}", file=sys.stderr)
    public = {d: ce.public(r) for d, r in results.items()}
    doc = next(iter(public.values())) if len(public) == 1 else ce.DatasetsEvaluation(datasets=public)
    return emit(doc, args.json, lambda: _print_eval(results, methods, args), indent=2)


def _print_eval(results, methods, args) -> None:
    from checklist_eval.membership import contamination_eval as ce

    print(f"AUC ({int(100 * next(iter(results.values()))['level'])}% bootstrap interval, {args.bootstrap} "
          "resamples; positive class: label 1 = member)")  # fmt: skip
    print(ce.table(results, methods), end="")
    print("\n".join(ce.low_fpr_lines(results, methods)))


def _unique(name: str, taken: dict) -> str:
    out, k = name, 1
    while out in taken:
        k += 1
        out = f"{name}#{k}"
    return out
