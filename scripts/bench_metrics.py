"""Time AUC, EER and a bootstrap CI of AUC against scikit-learn on the same seeded data.

    python scripts/bench_metrics.py [--n 1000000] [--resamples 1000] [--decimals 3] [--json]

The data: n trials, half targets, scores normal with a 0.5 shift for targets, rounded to --decimals
places so that ties are plentiful (the NIST plan's scores are often coarse). scikit-learn's bootstrap
is timed on --sk-resamples index resamples (roc_auc_score each) and extrapolated to --resamples.
Also times the tie-free path of the bootstrap (unrounded scores) on a few resamples, extrapolated.
Exits 1 if our AUC differs from scikit-learn's by 1e-12 or more.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


def _timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def run(n: int, resamples: int, sk_resamples: int, decimals: int, seed: int) -> dict:
    from sklearn.metrics import roc_auc_score

    from checklist_eval.detection import metrics

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(bool)
    raw = rng.normal(size=n) + 0.5 * y
    s = np.round(raw, decimals)

    ours_auc, t_auc = _timed(metrics.auc, y, s)
    sk_auc, t_sk = _timed(roc_auc_score, y, s)
    _, t_eer = _timed(metrics.eer, y, s)
    ci, t_boot = _timed(metrics.bootstrap_auc, y, s, resamples, 0.95, seed)

    def sk_bootstrap(k: int) -> None:
        r = np.random.default_rng(seed)
        for _ in range(k):
            idx = r.integers(0, n, n)
            roc_auc_score(y[idx], s[idx])

    _, t_sk_few = _timed(sk_bootstrap, sk_resamples)
    t_sk_boot = t_sk_few / sk_resamples * resamples

    few = max(1, min(10, resamples))
    _, t_untied_few = _timed(metrics.bootstrap_auc, y, raw, few, 0.95, seed)
    return {
        "n": n,
        "resamples": resamples,
        "decimals": decimals,
        "distinct_scores": int(np.unique(s).size),
        "auc_ours": ours_auc,
        "auc_sklearn": sk_auc,
        "auc_abs_diff": abs(ours_auc - sk_auc),
        "ci95": [ci.low, ci.high],
        "seconds": {
            "ours_auc": t_auc,
            "sklearn_auc": t_sk,
            "ours_eer": t_eer,
            "ours_bootstrap": t_boot,
            "ours_auc_eer_bootstrap": t_auc + t_eer + t_boot,
            "sklearn_bootstrap_extrapolated": t_sk_boot,
            "sklearn_auc_plus_bootstrap": t_sk + t_sk_boot,
            "ours_bootstrap_untied_extrapolated": t_untied_few / few * resamples,
        },
        "sklearn_resamples_timed": sk_resamples,
    }


def table(r: dict) -> str:
    t = r["seconds"]
    rows = [
        ("AUC", t["ours_auc"], t["sklearn_auc"]),
        (f"bootstrap CI of AUC ({r['resamples']} resamples)", t["ours_bootstrap"],
         t["sklearn_bootstrap_extrapolated"]),  # fmt: skip
        ("AUC + EER + bootstrap", t["ours_auc_eer_bootstrap"], t["sklearn_auc_plus_bootstrap"]),
    ]
    out = [f"n = {r['n']:,} trials, {r['distinct_scores']:,} distinct scores; sklearn bootstrap "
           f"extrapolated from {r['sklearn_resamples_timed']} resamples", "",
           f"{'task':<44}{'ours (s)':>12}{'sklearn (s)':>14}{'speed-up':>10}"]  # fmt: skip
    for name, ours, sk in rows:
        out.append(f"{name:<44}{ours:>12.3f}{sk:>14.3f}{sk / ours:>9.1f}x")
    out += [
        f"{'EER (ours only)':<44}{t['ours_eer']:>12.3f}",
        f"{'bootstrap, tie-free scores (extrapolated)':<44}{t['ours_bootstrap_untied_extrapolated']:>12.3f}",
        "",
        f"AUC ours {r['auc_ours']:.15f}  sklearn {r['auc_sklearn']:.15f}  |diff| {r['auc_abs_diff']:.1e}",
        f"95% bootstrap CI of AUC: [{r['ci95'][0]:.6f}, {r['ci95'][1]:.6f}]",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--sk-resamples", type=int, default=10, help="sklearn resamples actually timed")
    ap.add_argument("--decimals", type=int, default=3, help="score rounding, which makes ties")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    r = run(args.n, args.resamples, args.sk_resamples, args.decimals, args.seed)
    print(json.dumps(r, indent=2) if args.json else table(r))
    if r["auc_abs_diff"] >= 1e-12:
        print("AUC differs from scikit-learn", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
