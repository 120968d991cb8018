"""Every scalar metric of one system at once, as the evaluation tables report them."""

from __future__ import annotations

from checklist_eval.detection.metrics.calibration import brier, cross_entropy
from checklist_eval.detection.metrics.ranking import eer_on_roc, ranking_metrics, roc_points
from checklist_eval.detection.metrics.trials import SingleClassError, _pair, _scores


def summarize(
    y_true: object,
    y_score: object,
    y_prob: object | None = None,
    *,
    far_stop: float = 0.1,
) -> dict[str, float | int]:
    """Every scalar metric of one system, with NaN for ranking metrics on single-class input.

    ``y_prob`` (probability of a target) feeds Brier and cross-entropy; when omitted the scores are
    used if they all lie in [0, 1], otherwise those two are NaN.
    """
    y, s = _pair(y_true, y_score)
    n_pos = int(y.sum())
    out: dict[str, float | int] = {"n": int(y.size), "n_target": n_pos, "n_nontarget": y.size - n_pos}
    nan = float("nan")
    try:
        roc = roc_points(y, s)
        out.update(ranking_metrics(roc, far_stop))
        out["eer_nearest"] = eer_on_roc(roc, "nearest")
    except SingleClassError:
        out.update(auc=nan, pauc=nan, pauc_mcclish=nan, tpr_at_fpr=nan, eer=nan, eer_interp=nan, eer_nearest=nan)
    p = s if y_prob is None else _scores(y_prob, y.size, "probabilities")
    if ((p >= 0) & (p <= 1)).all():
        out.update(brier=brier(y, p), cross_entropy=cross_entropy(y, p))
    else:
        out.update(brier=nan, cross_entropy=nan)
    return out
