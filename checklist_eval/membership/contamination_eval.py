"""How well each membership score separates known members from non-members.

A dataset is JSONL, one text per line, with ``label`` 1 (member: the model saw it) or 0. A line is
either a WikiMIA-style ``{"input": text, "label": ...}``, scored through a completions endpoint, or a
logprob line (``tokens``, ``logprobs``, ...; see :mod:`checklist_eval.membership.contamination`). Label 1 is the
positive class and every score is oriented higher = member, so an AUC above 0.5 means the score works.

Per method: AUC with a percentile bootstrap interval (:func:`checklist_eval.detection.metrics.bootstrap_auc`),
and TPR at low FPR under the ``max`` rule (the best TPR a threshold reaches without exceeding that FPR,
as membership-inference papers report it). Texts on which a method has no value (for instance
``slope_ngram`` without n-gram log-probabilities) are left out of that method's figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from checklist_eval.detection import metrics
from checklist_eval.errors import InputError
from checklist_eval.membership.contamination import (
    TokenText,
    iter_jsonl,
    score_text,
    text_from_object,
)
from checklist_eval.models import Model

LOW_FPRS = (0.01, 0.05)
MAX_INPUT_CHARS = 100_000  # per text sent to the endpoint: one echo request and one n-gram prompt per token


def load_dataset(path: str | Path, fetch=None) -> list[TokenText]:
    """Every labelled text of a dataset. ``fetch(id, text) -> TokenText`` scores WikiMIA-style lines
    through an endpoint; without it such lines are refused (the caller asks for --model/--base-url)."""
    texts: list[TokenText] = []
    for n, obj in iter_jsonl(path):
        where = (path, f"line {n}")
        if "tokens" in obj:
            t = text_from_object(obj, where, f"line-{n}")
        elif "input" in obj:
            if not isinstance(obj["input"], str) or not obj["input"].strip():
                raise InputError(path, f"line {n}: input must be a non-empty string")
            if len(obj["input"]) > MAX_INPUT_CHARS:
                raise InputError(path, f"line {n}: input longer than {MAX_INPUT_CHARS:,} characters: "
                                       "split it (membership sets hold passages, not books)")  # fmt: skip
            if fetch is None:
                raise InputError(path, f"line {n}: a text line needs an endpoint to score it: give --model "
                                       "and --base-url (or a logprob JSONL)")  # fmt: skip
            t = fetch(str(obj.get("id", f"line-{n}")), obj["input"])
            t.label = _label_of(obj, path, n)
        else:
            raise InputError(path, f"line {n}: expected 'input' (text) or 'tokens' + 'logprobs'")
        if t.label is None:
            raise InputError(path, f"line {n}: no label (1 = member, 0 = non-member)")
        texts.append(t)
    if not texts:
        raise InputError(path, "no texts")
    labels = {t.label for t in texts}
    if labels != {0, 1}:
        raise InputError(path, f"needs members (label 1) and non-members (label 0); all labels are {labels.pop()}")
    return texts


def _label_of(obj: dict, path, n: int) -> int:
    v = obj.get("label")
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v in (0, 1):
        return int(v)
    raise InputError(path, f"line {n}: label must be 0 or 1, got {str(v)[:20]!r}")


def evaluate(texts: list[TokenText], methods, *, k: float = 0.2, n_bootstrap: int = 1000,
             level: float = 0.95, seed: int = 0) -> dict:
    """``{"n": ..., "methods": {METHOD: {"auc", "ci", "n", "n_member", "tpr_at_fpr", ...}}}``."""
    scored = [score_text(t, methods, k) for t in texts]
    labels = np.array([t.label for t in texts], dtype=bool)
    out: dict = {"n": len(texts), "n_member": int(labels.sum()), "positive": "label 1 (member)",
                 "level": level, "methods": {}}  # fmt: skip
    for m in methods:
        keep = np.array([s[m] is not None for s in scored])
        y = labels[keep]
        s = np.array([sc[m] for sc, ok in zip(scored, keep, strict=True) if ok], dtype=np.float64)
        out["methods"][m] = _method_figures(y, s, n_bootstrap, level, seed)
    return out


def _method_figures(y: np.ndarray, s: np.ndarray, n_bootstrap: int, level: float, seed: int) -> dict:
    fig: dict = {"auc": None, "ci": [None, None], "n": int(y.size), "n_member": int(y.sum()),
                 "tpr_at_fpr": {f"{f:g}": None for f in LOW_FPRS}}  # fmt: skip
    if y.size == 0 or y.all() or not y.any():
        fig["note"] = "no value on members and non-members alike: not evaluated"
        return fig
    fig["auc"] = metrics.auc(y, s)
    if n_bootstrap > 0:
        ci = metrics.bootstrap_auc(y, s, n_bootstrap, level, seed)
        fig["ci"] = [ci.low, ci.high]
    roc = metrics.roc_points(y, s)
    fig["tpr_at_fpr"] = {f"{f:g}": metrics.tpr_on_roc(roc, f, "max") for f in LOW_FPRS}
    fig["roc"] = roc
    return fig


class DatasetEvaluation(Model):
    """``contamination-eval --json`` of one dataset (``{"datasets": {NAME: ...}}`` for several): the
    figures per method, a NaN figure as null so the document is strict JSON."""

    n: int
    n_member: int
    positive: str
    level: float
    methods: dict[str, dict[str, Any]]


class DatasetsEvaluation(Model):
    datasets: dict[str, DatasetEvaluation]


def public(result: dict) -> DatasetEvaluation:
    """The result without the ROC objects kept for plotting."""
    return DatasetEvaluation.model_validate(
        {**result, "methods": {m: {k: v for k, v in f.items() if k != "roc"} for m, f in result["methods"].items()}})


def coverage_notes(results: dict[str, dict]) -> list[str]:
    """One line per method evaluated on fewer texts than its dataset holds (it has no value on some)."""
    out = []
    for d, res in results.items():
        for m, fig in res["methods"].items():
            if fig["n"] < res["n"]:
                out.append(f"{d}: {m} evaluated on {fig['n']} of {res['n']} texts ({fig['n_member']} of "
                           f"{res['n_member']} members): it has no value on the other {res['n'] - fig['n']}")
    return out


def _cell(fig: dict, total: int) -> str:
    if fig["auc"] is None:
        return "-"
    lo, hi = fig["ci"]
    short = f" [{fig['n']} of {total} texts]" if fig["n"] < total else ""
    return f"{fig['auc']:.3f}" + (f" ({lo:.3f}, {hi:.3f})" if lo is not None else "") + short


def table(results: dict[str, dict], methods) -> str:
    """The reference document's table: one row per method, one column per dataset, AUC (CI); a method
    evaluated on fewer texts than the dataset holds says on how many."""
    names = list(results)
    head = ["Method", *names]
    rows = [[m, *(_cell(results[d]["methods"][m], results[d]["n"]) for d in names)] for m in methods]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = "| " + " | ".join(f"{{:<{w}}}" for w in widths) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([fmt.format(*head), sep, *(fmt.format(*r) for r in rows)]) + "\n"


def low_fpr_lines(results: dict[str, dict], methods) -> list[str]:
    out = []
    for d, res in results.items():
        out.append(f"{d}: {res['n']} texts, {res['n_member']} members; TPR at "
                   + ", ".join(f"FPR {f:g}" for f in LOW_FPRS))  # fmt: skip
        for m in methods:
            tp = res["methods"][m]["tpr_at_fpr"]
            vals = "  ".join("-" if v is None else f"{v:.3f}" for v in tp.values())
            n = res["methods"][m]["n"]
            out.append(f"  {m:<12} {vals}" + (f"  (on {n} of {res['n']} texts)" if n < res["n"] else ""))
    return out


def plot(results: dict[str, dict], methods, path: str | Path) -> Path:
    """ROC curves of every method, one panel per dataset."""
    from checklist_eval.detection.plots import pyplot, save_png

    plt = pyplot()
    fig, axes = plt.subplots(1, len(results), figsize=(5.2 * len(results), 5), dpi=110, squeeze=False)
    for ax, (d, res) in zip(axes[0], results.items(), strict=True):
        ax.plot([0, 1], [0, 1], ls=":", color="grey", lw=1)
        for m in methods:
            f = res["methods"][m]
            if f.get("roc") is not None:
                ax.plot(f["roc"].fpr, f["roc"].tpr, lw=1.5, label=f"{m} (AUC {f['auc']:.3f})")
        ax.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="False positive rate", ylabel="True positive rate",
               title=f"{d} (positive: member)")  # fmt: skip
        ax.legend(loc="lower right", fontsize=8)
    return save_png(fig, plt, path)
