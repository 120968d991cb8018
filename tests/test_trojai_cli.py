"""TrojAI reporting through the CLI: the log score's interval at 90/95/98/99 % (TrojAI's z values) and
the prevalence sweep (1-99 %, 10 seeded subsets per rate) on detection score and assessor-eval."""

from __future__ import annotations

import json
import math

import numpy as np
from cli_runner import CliRun, run_cli
import pytest

from checklist_eval.detection import metrics

N = 60
Z = {90: 1.64, 95: 1.96, 98: 2.33, 99: 2.58}  # the TrojAI document's values


def cli(*args: str) -> CliRun:
    return run_cli(*args)


@pytest.fixture()
def nist(tmp_path):
    rng = np.random.default_rng(8)
    y = rng.integers(0, 2, N).astype(bool)
    s = np.clip(rng.normal(0.35 + 0.3 * y, 0.2), 0.001, 0.999).round(3)
    index = tmp_path / "index.csv"
    index.write_text("DatasetID|TaskID|FileID\n" + "".join(f"set1|detection|f{i}.txt\n" for i in range(N)))
    ref = tmp_path / "ref.csv"
    ref.write_text("DatasetID|TaskID|TopicID|FileID|GeneratorID|IsTarget\n"
                   + "".join(f"set1|detection|t|f{i}.txt|G|{'Y' if y[i] else 'N'}\n" for i in range(N)))  # fmt: skip
    sysout = tmp_path / "sys_cutoff-50.csv"
    sysout.write_text("DatasetID|TaskID|DiscriminatorID|ModelVersion|FileID|ConfidenceScore\n"
                      + "".join(f"set1|detection|D|v1|f{i}.txt|{s[i]}\n" for i in range(N)))  # fmt: skip
    return ["-r", str(ref), "-x", str(index), "-s", str(sysout)], y, s


def _ce(y, s):
    return -(y * np.log(s) + (1 - y) * np.log(1 - s))


def test_detection_score_prints_the_log_score_with_each_requested_interval(nist):
    files, y, s = nist
    ce = _ce(y, s)
    se = ce.std() / math.sqrt(N)
    out = cli("detection", "score", *files, "--bootstrap", "0", "--json", "--ci", "0.90,0.99", "--ci", "0.98")
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)["metrics"]
    for lv in (90, 98, 99):
        assert m[f"cross_entropy_ci{lv}"] == pytest.approx(Z[lv] * se, rel=1e-9)
        assert m[f"cross_entropy_ci{lv}_low"] == pytest.approx(ce.mean() - Z[lv] * se, rel=1e-9)
        assert m[f"cross_entropy_ci{lv}_high"] == pytest.approx(ce.mean() + Z[lv] * se, rel=1e-9)
    assert "cross_entropy_ci95" not in m and m["auc"] is not None  # the existing keys stay
    table = cli("detection", "score", *files, "--bootstrap", "0").stdout  # default: the 95 % interval
    rows = dict(line.split("|") for line in table.splitlines()[1:])
    assert float(rows["CrossEntropy95CI"]) == pytest.approx(1.96 * se, abs=1e-6)
    assert float(rows["CrossEntropy_CI95_low"]) == pytest.approx(ce.mean() - 1.96 * se, abs=1e-6)
    bad = cli("detection", "score", *files, "--ci", "0.80")
    assert bad.returncode == 2 and "0.90, 0.95, 0.98, 0.99" in bad.stderr and not bad.stdout


def test_detection_score_prevalence_sweep_with_plot(nist, tmp_path):
    pytest.importorskip("matplotlib")
    files, y, s = nist
    png = tmp_path / "sweep.png"
    out = cli("detection", "score", *files, "--bootstrap", "0", "--json", "--prevalence-sweep", "--seed", "4",
              "--plot", str(png))  # fmt: skip
    assert out.returncode == 0, out.stderr
    sweep = json.loads(out.stdout)["prevalence_sweep"]
    assert sweep["reps"] == 10 and sweep["seed"] == 4
    assert [r["rate"] for r in sweep["rows"]] == pytest.approx([k / 100 for k in range(1, 100)])
    # independently: the library sweep with the same seed, summarised here
    ref = metrics.prevalence_sweep(y, s, reps=10, seed=4)
    for r in sweep["rows"][::7]:
        at = np.isclose(ref.rate, r["rate"])
        assert r["cross_entropy"]["mean"] == pytest.approx(ref.cross_entropy[at].mean())
        assert r["cross_entropy"]["std"] == pytest.approx(ref.cross_entropy[at].std())
        assert r["n_target"] / r["n"] == pytest.approx(r["rate"], abs=0.05)
    assert any(r["cross_entropy"]["std"] > 0 for r in sweep["rows"])  # subsets differ between draws
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = cli("detection", "score", *files, "--bootstrap", "0", "--prevalence-sweep").stdout
    assert "rate|n|targets|log_score_mean|log_score_std" in text and "\n0.99|" in text
    wrong = cli("detection", "score", *files, "--plot", str(png))
    assert wrong.returncode == 2 and "--prevalence-sweep" in wrong.stderr


def _records(path):
    rng = np.random.default_rng(2)
    rows = ["submission_id,role,question_id,answer,correct,p_correct,assessor,model,source"]
    truth = {}
    for k in range(40):
        sid, q = f"s{k // 8}", str(k % 8 + 1)
        t = "Yes" if rng.random() < 0.6 else "No"
        a = t if rng.random() < 0.6 else ("No" if t == "Yes" else "Yes")
        p = float(np.clip(rng.normal(0.7 if a == t else 0.4, 0.15), 0.01, 0.99).round(3))
        truth[(sid, q)] = (a != t, 1 - p)
        rows.append(f"{sid},A,{q},{a},{int(p >= 0.5)},{p},heuristic,,papers/{sid}_adversarial.pdf")
        rows.append(f"{sid},T,{q},{t},1,0.9,heuristic,,papers/{sid}_truth.pdf")
    path.write_text("\n".join(rows) + "\n")
    y = np.array([v[0] for v in truth.values()])
    return path, y, np.array([v[1] for v in truth.values()])


def test_assessor_eval_ci_levels_and_prevalence_sweep(tmp_path):
    records, y, s = _records(tmp_path / "records.csv")
    se = _ce(y, s).std() / math.sqrt(y.size)
    out = cli("assessor-eval", str(records), "--bootstrap", "0", "--ci", "0.90", "--ci", "0.99,0.95")
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if "Cross-entropy" in x)
    assert line.endswith(f"± {1.64 * se:.3f} (90%), ± {1.96 * se:.3f} (95%), ± {2.58 * se:.3f} (99%)")
    js = json.loads(cli("assessor-eval", str(records), "--bootstrap", "0", "--json", "--prevalence-sweep").stdout)
    assert js["overall"]["cross_entropy_ci"]["98"] == pytest.approx(2.33 * se)  # existing key kept
    rows = js["prevalence_sweep"]["rows"]
    assert len(rows) == 99 and rows[0]["rate"] == 0.01 and rows[-1]["rate"] == 0.99
    assert all(r["cross_entropy"]["min"] <= r["cross_entropy"]["mean"] <= r["cross_entropy"]["max"] for r in rows)
    refused = cli("assessor-eval", str(records), "--plot", str(tmp_path / "x.png"))
    assert refused.returncode == 2 and "--prevalence-sweep" in refused.stderr
