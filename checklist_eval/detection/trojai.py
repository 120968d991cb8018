"""TrojAI's log-score reporting: confidence intervals at 90/95/98/99 % and the prevalence sweep.

* **Interval**: the log score (mean clipped cross-entropy) +- z * std(per-trial cross-entropy) /
  sqrt(n), the low end cut at 0 (no log score is negative), with TrojAI's z values 1.64, 1.96, 2.33,
  2.58 (:data:`checklist_eval.detection.metrics.Z_VALUES`).
* **Prevalence sweep**: the log score on subsets whose share of targets runs from 1 % to 99 %, each
  built 10 times from a different random draw (seeded), to show how a detector's figure depends on the
  share of targets it faces. Built by :func:`checklist_eval.detection.metrics.prevalence_sweep`; here it is
  summarised per rate (mean, standard deviation, min and max over the repetitions) and drawn.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from checklist_eval.detection import metrics
from checklist_eval.errors import InputError


def parse_ci_levels(values: list[str] | None, default: tuple[int, ...] = (95,)) -> tuple[int, ...]:
    """``--ci 0.90 --ci 0.95,0.99`` (also 90, 95 or 90%) to sorted integer percents."""
    if not values:
        return default
    out = set()
    for text in ",".join(values).split(","):
        t = text.strip().rstrip("%")
        if not t:
            continue
        try:
            x = float(t)
        except ValueError:
            raise InputError(None, f"--ci: {text.strip()!r} is not a confidence level") from None
        pct = round(x * 100) if x < 1 else round(x)
        if pct not in metrics.Z_VALUES:
            raise InputError(None, f"--ci: {text.strip()} is not one of 0.90, 0.95, 0.98, 0.99 (TrojAI's levels)")
        out.add(pct)
    if not out:
        raise InputError(None, "--ci: no level given")
    return tuple(sorted(out))


def log_score_intervals(y, p, levels: tuple[int, ...]) -> dict[str, float]:
    """``cross_entropy_ci{L}`` (the half-width), ``..._low`` and ``..._high`` per level."""
    ce = metrics.cross_entropy_elementwise(y, p)
    mean = float(ce.mean())
    out: dict[str, float] = {}
    for lv, half in metrics.ci_half_widths(ce, levels).items():
        out[f"cross_entropy_ci{lv}"] = half
        out[f"cross_entropy_ci{lv}_low"] = max(0.0, mean - half)  # a log score is never below 0
        out[f"cross_entropy_ci{lv}_high"] = mean + half
    return out


def sweep(y, p, *, reps: int = 10, seed: int = 0) -> dict:
    """The sweep summarised per rate: ``{"reps", "seed", "rows": [{"rate", "n", "n_target",
    "cross_entropy": {"mean", "std", "min", "max"}, "brier", "auc"}]}``."""
    y = np.asarray(y, dtype=bool)
    if y.all() or not y.any():
        raise InputError(None, "--prevalence-sweep needs targets and non-targets")
    sw = metrics.prevalence_sweep(y, p, reps=reps, seed=seed)
    rows = []
    for rate in np.unique(sw.rate):
        at = sw.rate == rate
        ce = sw.cross_entropy[at]
        auc = sw.auc[at]
        rows.append({
            "rate": float(rate), "n": int(sw.n[at][0]), "n_target": int(sw.n_target[at][0]),
            "cross_entropy": {"mean": float(ce.mean()), "std": float(ce.std()), "min": float(ce.min()),
                              "max": float(ce.max())},
            "brier": float(sw.brier[at].mean()),
            "auc": float(np.nanmean(auc)) if np.isfinite(auc).any() else float("nan"),
        })  # fmt: skip
    return {"reps": reps, "seed": seed, "rows": rows}


def sweep_table(result: dict) -> str:
    """Pipe-separated: one row per rate."""
    lines = [f"# prevalence sweep: log score on subsets at each target rate, {result['reps']} random subsets "
             f"per rate (seed {result['seed']})",
             "rate|n|targets|log_score_mean|log_score_std|log_score_min|log_score_max|brier|auc"]  # fmt: skip
    for r in result["rows"]:
        ce = r["cross_entropy"]
        vals = [ce["mean"], ce["std"], ce["min"], ce["max"], r["brier"], r["auc"]]
        lines.append("|".join([f"{r['rate']:.2f}", str(r["n"]), str(r["n_target"])] + [f"{v:.4f}" for v in vals]))
    return "\n".join(lines) + "\n"


def sweep_points(result: dict) -> tuple[np.ndarray, ...]:
    """What the sweep plot draws: x is the share of targets the subsets reached (in %), not the rate
    asked for (with few targets or non-targets a subset cannot reach it); then the log score's mean,
    sd, min and max at each."""
    rows = result["rows"]
    share = np.array([100 * r["n_target"] / r["n"] for r in rows])
    ce = {k: np.array([r["cross_entropy"][k] for r in rows]) for k in ("mean", "std", "min", "max")}
    return share, ce["mean"], ce["std"], ce["min"], ce["max"]


def plot_sweep(curves: dict[str, dict], path: str | Path) -> Path:
    """Mean log score per target rate, with a band of +- one standard deviation and the min-max range."""
    from checklist_eval.detection.plots import pyplot, save_png

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.5), dpi=120)
    for label, result in curves.items():
        rate, mean, std, lo, hi = sweep_points(result)
        line = ax.plot(rate, mean, lw=1.8, label=label)[0]
        ax.fill_between(rate, mean - std, mean + std, color=line.get_color(), alpha=0.25)
        ax.fill_between(rate, lo, hi, color=line.get_color(), alpha=0.08)
    ax.set(xlim=(0, 100), xlabel="Share of targets in the subset (%)", ylabel="Log score (cross-entropy)",
           title="Prevalence sweep (band: +-1 sd; light: min-max over subsets)")  # fmt: skip
    ax.legend(loc="upper right", fontsize=8)
    return save_png(fig, plt, path)
