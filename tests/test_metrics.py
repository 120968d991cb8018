"""checklist_eval.detection.metrics against scikit-learn (test-only) and against values worked out by hand."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score, roc_curve

from checklist_eval.detection import metrics as m

TOL = 1e-12


def _data(seed: int, n: int, decimals: int | None):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = rng.normal(size=n) + 0.7 * y
    if decimals is not None:
        s = np.round(s, decimals)  # many ties
    return y, s


CASES = [(seed, n, dec) for seed, n, dec in [(0, 50, None), (1, 500, None), (2, 300, 1), (3, 1000, 0),
                                              (4, 40, 2), (5, 7, None), (6, 2000, 1)]]  # fmt: skip


def _mann_whitney(y, s) -> float:
    pos, neg = s[y == 1], s[y == 0]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return wins / (pos.size * neg.size)


@pytest.mark.parametrize("seed,n,dec", CASES)
def test_auc_matches_sklearn_and_mann_whitney(seed, n, dec):
    y, s = _data(seed, n, dec)
    assert abs(m.auc(y, s) - roc_auc_score(y, s)) < TOL
    assert abs(m.auc(y, s) - _mann_whitney(y, s)) < TOL


@pytest.mark.parametrize("seed,n,dec", CASES)
@pytest.mark.parametrize("max_fpr", [0.01, 0.1, 0.25, 0.5, 0.999, 1.0])
def test_partial_auc_mcclish_matches_sklearn(seed, n, dec, max_fpr):
    y, s = _data(seed, n, dec)
    assert abs(m.partial_auc_mcclish(y, s, max_fpr) - roc_auc_score(y, s, max_fpr=max_fpr)) < TOL


@pytest.mark.parametrize("seed,n,dec", CASES)
def test_roc_points_match_sklearn_without_dropping(seed, n, dec):
    y, s = _data(seed, n, dec)
    fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
    roc = m.roc_points(y, s)
    np.testing.assert_allclose(roc.fpr, fpr, rtol=0, atol=TOL)
    np.testing.assert_allclose(roc.tpr, tpr, rtol=0, atol=TOL)
    np.testing.assert_array_equal(roc.thresholds[1:], thr[1:])
    assert roc.thresholds[0] == np.inf
    assert roc.tp[-1] == roc.n_pos and roc.fp[-1] == roc.n_neg


@pytest.mark.parametrize("seed,n,dec", CASES)
def test_brier_and_log_loss_match_sklearn(seed, n, dec):
    y, s = _data(seed, n, dec)
    p = 1 / (1 + np.exp(-s))  # inside (1e-12, 1 - 1e-12): no clipping difference with sklearn
    assert abs(m.brier(y, p) - brier_score_loss(y, p)) < TOL
    assert abs(m.cross_entropy(y, p) - log_loss(y, p, labels=[0, 1])) < TOL


def test_summarize_agrees_with_the_single_functions():
    y, s = _data(9, 300, 1)
    p = 1 / (1 + np.exp(-s))
    out = m.summarize(y, p, far_stop=0.2)
    assert out["n"] == 300 and out["n_target"] == int(y.sum())
    assert abs(out["auc"] - roc_auc_score(y, p)) < TOL
    assert abs(out["pauc_mcclish"] - roc_auc_score(y, p, max_fpr=0.2)) < TOL
    assert out["pauc"] == pytest.approx(m.partial_auc(y, p, 0.2), abs=TOL)
    assert out["tpr_at_fpr"] == m.tpr_at_fpr(y, p, 0.2)
    assert out["eer"] == m.eer(y, p) and out["eer_interp"] == m.eer(y, p, rule="interpolated")
    assert abs(out["brier"] - brier_score_loss(y, p)) < TOL


# ------------------------------------------------------------------------------------- hand values


def test_constant_score():
    y, s = [1, 0, 1, 0, 0], [0.3] * 5
    assert m.auc(y, s) == 0.5
    roc = m.roc_points(y, s)
    assert roc.fpr.tolist() == [0, 1] and roc.tpr.tolist() == [0, 1]
    assert m.eer(y, s) == 0.5 and m.eer(y, s, rule="interpolated") == 0.5
    assert m.tpr_at_fpr(y, s, 0.1, rule="nist") == pytest.approx(0.1)  # on the diagonal segment
    assert m.tpr_at_fpr(y, s, 0.1) == 0.0  # no threshold reaches it without FPR 1
    assert m.partial_auc(y, s, 0.2) == pytest.approx(0.02)  # area under the diagonal to 0.2


def test_single_class_raises_a_clear_error_and_summarize_gives_nan():
    with pytest.raises(m.SingleClassError, match="3 targets and 0 non-targets"):
        m.auc([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="both targets and non-targets"):
        m.eer([0, 0], [0.1, 0.2])
    out = m.summarize([0, 0, 0], [0.1, 0.2, 0.9])
    assert math.isnan(out["auc"]) and math.isnan(out["eer"]) and math.isnan(out["tpr_at_fpr"])
    assert out["brier"] == pytest.approx((0.01 + 0.04 + 0.81) / 3)


def test_bad_inputs_are_value_errors():
    with pytest.raises(ValueError, match="0/1"):
        m.auc([0, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="finite"):
        m.auc([0, 1], [0.1, float("nan")])
    with pytest.raises(ValueError, match="entries"):
        m.auc([0, 1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        m.brier([0, 1], [0.1, 1.2])
    with pytest.raises(ValueError, match="no trials"):
        m.auc([], [])


def test_log_score_on_exact_zero_one_predictions():
    # right and sure: -log(1 - 1e-12) ~ 1e-12; wrong and sure: -log(1e-12) = 27.631...
    assert m.cross_entropy([1, 0], [1.0, 0.0]) == pytest.approx(1e-12, rel=1e-3)
    assert m.cross_entropy([1], [0.0]) == pytest.approx(-math.log(1e-12), rel=1e-12)
    assert m.cross_entropy([0], [1.0]) == pytest.approx(27.631021115928547, rel=1e-4)
    assert m.cross_entropy([1, 0], [0.5, 0.5]) == pytest.approx(math.log(2))
    np.testing.assert_allclose(m.cross_entropy_elementwise([1, 0], [0.8, 0.8]), [-math.log(0.8), -math.log(0.2)])


# y = [1, 0, 1, 1, 0] by descending score: ROC (0,0) (0,1/3) (.5,1/3) (.5,2/3) (.5,1) (1,1);
# a vertical run at FPR 0.5 from TPR 1/3 to 1.
VERT_Y, VERT_S = [1, 0, 1, 1, 0], [5, 4, 3, 2, 1]


def test_vertical_roc_segment_and_tpr_at_fpr_rules():
    roc = m.roc_points(VERT_Y, VERT_S)
    np.testing.assert_allclose(roc.fpr, [0, 0, 0.5, 0.5, 0.5, 1])
    np.testing.assert_allclose(roc.tpr, [0, 1 / 3, 1 / 3, 2 / 3, 1, 1])
    assert m.tpr_at_fpr(VERT_Y, VERT_S, 0.5, rule="nist") == pytest.approx(1 / 3)  # lowest of the run
    assert m.tpr_at_fpr(VERT_Y, VERT_S, 0.5) == 1.0  # the default: top of the vertical step
    assert m.tpr_at_fpr(VERT_Y, VERT_S, 0.25) == pytest.approx(1 / 3)  # flat segment
    assert m.tpr_at_fpr(VERT_Y, VERT_S, 0.0) == pytest.approx(1 / 3)  # (0, 1/3) has FPR 0
    assert m.tpr_at_fpr(VERT_Y, VERT_S, 0.0, rule="nist") == 0.0
    assert m.tpr_at_fpr(VERT_Y, VERT_S, 0.75) == 1.0
    assert m.auc(VERT_Y, VERT_S) == pytest.approx(4 / 6)
    assert m.partial_auc(VERT_Y, VERT_S, 0.5) == pytest.approx(0.5 / 3)
    assert m.partial_auc(VERT_Y, VERT_S, 0.75) == pytest.approx(0.5 / 3 + 0.25)


def test_tpr_at_fpr_interpolates_along_a_tie():
    # scores tie one target with one non-target: a diagonal from (0, .5) to (.5, 1)
    y, s = [1, 1, 0, 0], [3, 2, 2, 1]
    assert m.tpr_at_fpr(y, s, 0.25, rule="nist") == pytest.approx(0.75)
    assert m.tpr_at_fpr(y, s, 0.25) == pytest.approx(0.5)


def test_partial_auc_truncation_rule_of_nist():
    y, s = [1, 1, 0, 0], [3, 2, 2, 1]
    # interpolated: 0.25 * (0.5 + 0.75) / 2; truncated: nothing right of FPR 0 ends before 0.25
    assert m.partial_auc(y, s, 0.25) == pytest.approx(0.15625)
    assert m.partial_auc(y, s, 0.25, interpolate=False) == 0.0
    assert m.partial_auc(y, s, 0.5, interpolate=False) == pytest.approx(0.375)


def test_eer_rules_differ_where_the_curve_crosses_between_points():
    # ROC (0,0) (0,.5) (1/3,.5) (2/3,.5) (1,.5) (1,1): FNR - FPR = 1, .5, 1/6, -1/6, -.5, -1
    y, s = [1, 0, 0, 0, 1], [5, 4, 3, 2, 1]
    # EER is where FPR = FNR (NIST GenAI plan 6.4): the crossing at 0.5, not the nearest point's 5/12
    assert m.eer(y, s) == pytest.approx(0.5) == m.eer(y, s, rule="interpolated")
    assert m.eer(y, s, rule="nearest") == pytest.approx(5 / 12)  # nearest point (1/3, 1/2): mean of the two
    out = m.summarize(y, s)
    assert out["eer"] == pytest.approx(0.5) and out["eer_nearest"] == pytest.approx(5 / 12)
    with pytest.raises(ValueError, match="unknown EER rule"):
        m.eer(y, s, rule="bogus")


def test_perfect_and_inverted_detectors():
    y, s = [0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9]
    assert m.auc(y, s) == 1.0 and m.eer(y, s) == 0.0 and m.tpr_at_fpr(y, s, 0.0, rule="max") == 1.0
    assert m.partial_auc_mcclish(y, s, 0.1) == 1.0
    assert m.auc(y, [-v for v in s]) == 0.0 and m.eer(y, [-v for v in s]) == 1.0


def test_det_points_are_probits_of_the_error_rates():
    det = m.det_points(VERT_Y, VERT_S)
    np.testing.assert_allclose(det.fnr, 1 - m.roc_points(VERT_Y, VERT_S).tpr)
    assert det.x[0] == -np.inf and det.y[-1] == -np.inf
    assert det.x[2] == pytest.approx(0.0, abs=1e-15)  # FPR 0.5


def test_probit_matches_the_standard_library_inverse_normal():
    nd = NormalDist()
    ps = np.r_[1e-300, 1e-100, 1e-20, 1e-9, 1e-5, 0.001, 0.02425, np.linspace(0.0005, 0.9995, 999),
               0.97575, 0.999, 1 - 1e-9, 1 - 1e-15]  # fmt: skip
    ours = m.probit(ps)
    ref = np.array([nd.inv_cdf(p) for p in ps])
    np.testing.assert_allclose(ours, ref, rtol=1e-13, atol=1e-13)
    assert m.probit(0.5) == 0.0
    assert m.probit(0.0) == -np.inf and m.probit(1.0) == np.inf and math.isnan(m.probit(1.5))


def test_ci_half_widths_are_trojai_z_times_standard_error():
    v = np.array([0.1, 0.5, 2.0, 0.3])
    se = np.std(v) / 2.0  # ddof=0, sqrt(4) = 2
    out = m.ci_half_widths(v)
    assert out == {90: 1.64 * se, 95: 1.96 * se, 98: 2.33 * se, 99: 2.58 * se}
    with pytest.raises(ValueError, match="levels"):
        m.ci_half_widths(v, levels=(80,))


# ---------------------------------------------------------------------------------------- bootstrap


def _naive_bootstrap(y, s, k, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(k):
        idx = rng.integers(0, y.size, y.size)
        out.append(roc_auc_score(y[idx], s[idx]))
    return np.array(out)


@pytest.mark.parametrize("dec", [1, None])  # the cell (multinomial) path and the position path
def test_bootstrap_auc_has_the_distribution_of_index_resampling(dec):
    y, s = _data(11, 2000, dec)
    ci = m.bootstrap_auc(y, s, 300, 0.9, seed=1)
    naive = _naive_bootstrap(y, s, 250, seed=2)
    assert ci.estimate == pytest.approx(roc_auc_score(y, s), abs=TOL)
    assert ci.samples.mean() == pytest.approx(naive.mean(), abs=0.004)
    assert ci.samples.std() == pytest.approx(naive.std(), rel=0.2)
    assert ci.low < ci.estimate < ci.high
    lo, hi = np.quantile(naive, [0.05, 0.95])
    assert ci.low == pytest.approx(lo, abs=0.01) and ci.high == pytest.approx(hi, abs=0.01)


def test_bootstrap_auc_is_reproducible_and_drops_single_class_resamples():
    y, s = _data(12, 200, 1)
    a = m.bootstrap_auc(y, s, 50, seed=7)
    b = m.bootstrap_auc(y, s, 50, seed=7)
    np.testing.assert_array_equal(a.samples, b.samples)
    tiny = m.bootstrap_auc([1, 0], [0.9, 0.1], 200, seed=0)  # half the resamples have one class
    assert 50 < tiny.n_invalid < 150 and tiny.low == tiny.high == 1.0


def test_bootstrap_ranking_gives_each_figure_an_interval():
    y, s = _data(13, 300, 1)
    cis = m.bootstrap_ranking(y, s, 0.1, 200, 0.95, seed=0)
    assert set(cis) == {"auc", "pauc", "pauc_mcclish", "tpr_at_fpr", "eer", "eer_interp"}
    for c in cis.values():
        assert c.low <= c.estimate <= c.high
    generic = m.bootstrap_ci(m.auc, y, s, 200, 0.95, seed=0)  # same stream: same AUC samples
    np.testing.assert_allclose(generic.samples, cis["auc"].samples, atol=TOL)


# ---------------------------------------------------------------------------------- prevalence sweep


def _trojai_greedy(n_pos, n_neg, rate):
    """TrojAI's build, one item at a time, on counts."""
    a = b = 0
    while True:
        share = 0 if a + b == 0 else a / (a + b)
        if share < rate:
            if a == n_pos:
                return a, b
            a += 1
        else:
            if b == n_neg:
                return a, b
            b += 1


@pytest.mark.parametrize("n_pos,n_neg", [(30, 70), (5, 200), (200, 3), (1, 1), (50, 50)])
def test_sweep_counts_follow_the_trojai_greedy_build(n_pos, n_neg):
    for pct in range(1, 100):
        assert m.sweep._sweep_counts(n_pos, n_neg, pct) == _trojai_greedy(n_pos, n_neg, pct / 100), pct


def test_prevalence_sweep_rows():
    y, s = _data(14, 400, None)
    p = 1 / (1 + np.exp(-s))
    sw = m.prevalence_sweep(y, p, rates=[1, 10, 50, 90, 99], reps=3, seed=0)
    assert sw.rate.tolist() == [r / 100 for r in (1, 10, 50, 90, 99) for _ in range(3)]
    share = sw.n_target / sw.n
    assert np.all(np.abs(share - sw.rate) < 0.05)
    # different random subsets per repetition at 50 %, same sizes
    at50 = sw.rate == 0.5
    assert len(set(sw.auc[at50].round(12))) > 1 and len(set(sw.n[at50])) == 1
    again = m.prevalence_sweep(y, p, rates=[1, 10, 50, 90, 99], reps=3, seed=0)
    np.testing.assert_array_equal(sw.cross_entropy, again.cross_entropy)
    full = m.prevalence_sweep(y, p, rates=[50], reps=1)
    n_pos = int(y.sum())
    k_pos, k_neg = _trojai_greedy(n_pos, y.size - n_pos, 0.5)
    assert (full.n[0], full.n_target[0]) == (k_pos + k_neg, k_pos)


def test_prevalence_sweep_single_class_subset_gives_nan_auc():
    sw = m.prevalence_sweep([1, 0, 0, 0], [0.9, 0.1, 0.2, 0.3], rates=[1], reps=1)
    assert sw.n_target[0] == 1  # the first pick is a target, then non-targets until exhausted
    sw = m.prevalence_sweep([1, 1, 1, 1], [0.9, 0.8, 0.7, 0.6], rates=[50], reps=1)
    assert math.isnan(sw.auc[0]) and sw.cross_entropy[0] > 0


# ------------------------------------------------------------------------- perplexity slope (stretch)


def test_perplexity_slope_on_synthetic_sequences():
    from checklist_eval.membership.slope import least_squares_line, perplexity_slope, probabilities_from_logprobs

    p = 0.2 + 0.001 * np.arange(100)
    out = perplexity_slope(p)
    assert out.slope == pytest.approx(0.001, abs=1e-15) and out.intercept == pytest.approx(0.2, abs=1e-13)
    assert out.mean_normalized == pytest.approx(0.001 / p.mean())
    assert out.z_normalized == pytest.approx(0.001 / p.std())
    rng = np.random.default_rng(0)
    noisy = np.clip(0.3 + 0.002 * np.arange(200) + rng.normal(0, 0.05, 200), 0, 1)
    slope, intercept = least_squares_line(noisy)
    ref_slope, ref_intercept = np.polyfit(np.arange(200), noisy, 1)
    assert slope == pytest.approx(ref_slope, abs=1e-12) and intercept == pytest.approx(ref_intercept, abs=1e-12)
    assert perplexity_slope(noisy[::-1]).slope == pytest.approx(-slope)
    # n-gram reference: a reference rising as fast as p leaves no slope
    assert perplexity_slope(p, reference=p - 0.1).slope == pytest.approx(0.0, abs=1e-15)
    flat = perplexity_slope([0.5, 0.5, 0.5])
    assert flat.slope == 0.0 and math.isnan(flat.z_normalized)
    np.testing.assert_allclose(probabilities_from_logprobs([0.0, math.log(0.25)]), [1.0, 0.25])
    with pytest.raises(ValueError, match="at least 2"):
        perplexity_slope([0.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        perplexity_slope([0.5, 1.5])
    with pytest.raises(ValueError, match="<= 0"):
        probabilities_from_logprobs([0.1])
