"""ROC and DET plots of a detector's scores (matplotlib, the ``[plot]`` extra), written as PNG files.

Shared by the NIST discriminator scoring, the TrojAI-style assessor evaluation and the contamination
evaluation; matplotlib is imported only when a plot is asked for.
"""

from __future__ import annotations

from pathlib import Path

from checklist_eval.errors import InputError


def require_plotting() -> None:
    """Fail on a missing matplotlib before a command does any work or writes any file."""
    pyplot()


def pyplot():
    try:
        import matplotlib
    except ModuleNotFoundError:
        raise InputError(None, "plots need matplotlib: pip install 'checklist-eval[plot]'") from None
    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    return plt


def plot_roc(curves: dict[str, tuple], path: str | Path, *, far_stop: float = 0.1, title: str = "ROC") -> Path:
    """ROC curves, one per label: ``curves[label] = (y, score)``. Shades the pAUC of the first curve
    up to ``far_stop`` and marks its TPR there."""
    import numpy as np

    from checklist_eval.detection import metrics

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5), dpi=120)
    ax.plot([0, 1], [0, 1], ls=":", color="grey", lw=1, label="chance")
    for k, (label, (y, s)) in enumerate(curves.items()):
        roc = metrics.roc_points(y, s)
        a = metrics.auc(y, s)
        line = ax.plot(roc.fpr, roc.tpr, lw=1.8, label=f"{label} (AUC {a:.3f})")[0]
        if k == 0:
            keep = roc.fpr <= far_stop
            xs = np.r_[roc.fpr[keep], far_stop]
            tpr_stop = metrics.tpr_on_roc(roc, far_stop, "max")
            ys = np.r_[roc.tpr[keep], np.interp(far_stop, roc.fpr, roc.tpr)]
            ax.fill_between(xs, 0, ys, color=line.get_color(), alpha=0.2, label=f"pAUC to FPR {far_stop:g}")
            ax.plot([far_stop], [tpr_stop], "o", color=line.get_color())
    ax.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="False positive rate", ylabel="True positive rate", title=title)
    ax.legend(loc="lower right", fontsize=8)
    return save_png(fig, plt, path)


_DET_TICKS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 0.98, 0.99)


def plot_det(curves: dict[str, tuple], path: str | Path, *, title: str = "DET") -> Path:
    """DET curves on normal-deviate axes; rates of exactly 0 or 1 (infinite deviates) are left out."""
    import numpy as np

    from checklist_eval.detection import metrics

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5), dpi=120)
    for label, (y, s) in curves.items():
        det = metrics.det_points(y, s)
        x, yy = det.x, det.y
        ok = np.isfinite(x) & np.isfinite(yy)
        e = metrics.eer(y, s)
        line = ax.plot(x[ok], yy[ok], lw=1.8, label=f"{label} (EER {e:.3f})")[0]
        if 0 < e < 1:
            ax.plot([metrics.probit(e)], [metrics.probit(e)], "o", color=line.get_color())
    ticks = metrics.probit(np.array(_DET_TICKS))
    labels = [f"{100 * t:g}" for t in _DET_TICKS]
    lim = (ticks[0], ticks[-1])
    ax.plot(lim, lim, ls=":", color="grey", lw=1)
    ax.set_xticks(ticks, labels, fontsize=7)
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.set(xlim=lim, ylim=lim, xlabel="False positive rate (%)", ylabel="False negative rate (%)", title=title)
    ax.legend(loc="upper right", fontsize=8)
    return save_png(fig, plt, path)


def save_png(fig, plt, path: str | Path) -> Path:
    import io

    from checklist_eval.fsutil import atomic_write_bytes

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue())
