"""Detection metrics on NIST GenAI and TrojAI conventions, numpy only.

Conventions, everywhere in this package:

* ``y_true`` holds 1 for a *target* (positive: AI-generated text, an untruthful answer, a trojaned
  model) and 0 for a non-target. Booleans are accepted.
* ``y_score`` is a real number per trial; a **higher score means more likely a target**. Scores need not
  be probabilities for the ranking metrics (ROC, AUC, pAUC, TPR@FPR, DET, EER); the calibration metrics
  (Brier, cross-entropy) need probabilities of the target in [0, 1].
* A threshold ``t`` declares every trial with ``score >= t`` a target.

Single-class rule: every ranking metric needs at least one target and one non-target. Given one class
only they raise :class:`SingleClassError` (a ``ValueError``) naming the counts. :func:`summarize`, which
reports many metrics at once, catches it and reports ``nan`` for the ranking metrics instead, so a
per-question table with a question that has no target still prints. Brier and cross-entropy are defined
on one class and are always computed.

The metrics live in one module per concern, all re-exported here: :mod:`.trials` (input checks),
:mod:`.ranking` (ROC, AUC, partial AUC, TPR@FPR, EER), :mod:`.det` (probit and DET points),
:mod:`.calibration` (Brier, log score, TrojAI intervals), :mod:`.bootstrap`, :mod:`.sweep` (TrojAI
prevalence sweep) and :mod:`.summary` (everything at once).
"""

from checklist_eval.detection.metrics.bootstrap import BootstrapCI, bootstrap_auc, bootstrap_ci, bootstrap_ranking
from checklist_eval.detection.metrics.calibration import (
    EPS,
    Z_VALUES,
    brier,
    ci_half_widths,
    cross_entropy,
    cross_entropy_elementwise,
)
from checklist_eval.detection.metrics.det import Det, det_points, probit
from checklist_eval.detection.metrics.ranking import (
    Roc,
    auc,
    eer,
    eer_on_roc,
    partial_auc,
    partial_auc_mcclish,
    ranking_metrics,
    roc_points,
    tpr_at_fpr,
    tpr_on_roc,
)
from checklist_eval.detection.metrics.summary import summarize
from checklist_eval.detection.metrics.sweep import Sweep, prevalence_sweep
from checklist_eval.detection.metrics.trials import SingleClassError

__all__ = [
    "EPS", "Z_VALUES", "BootstrapCI", "Det", "Roc", "SingleClassError", "Sweep",
    "auc", "bootstrap_auc", "bootstrap_ci", "bootstrap_ranking", "brier", "ci_half_widths", "cross_entropy",
    "cross_entropy_elementwise", "det_points", "eer", "eer_on_roc", "partial_auc", "partial_auc_mcclish",
    "prevalence_sweep", "probit", "ranking_metrics", "roc_points", "summarize", "tpr_at_fpr", "tpr_on_roc",
]  # fmt: skip
