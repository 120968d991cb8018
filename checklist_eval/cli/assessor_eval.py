"""``checklist-eval assessor-eval``: how well an assessor detects untruthful answers (see
checklist_eval.adversary.evaluation for the definition of targets and scores)."""

from __future__ import annotations

import argparse
import sys

from checklist_eval.cli.numbers import CI_LEVELS, number


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "assessor-eval",
        help="evaluate an assessor as a detector of untruthful answers (AUC, pAUC, EER, log score)",
        description="Treat each assessed answer as a detection trial with score 1 - p_correct. Targets "
        "are A's answers that differ from T's (records of GAT submissions), or answers whose ground "
        "truth (0/0.5/1 per question, challenge YAML or JSON) is below --threshold.",
    )
    p.add_argument("inputs", nargs="*", metavar="RESULTS_OR_RECORDS",
                   help="records CSV/JSONL, or a batch results folder holding records.csv")  # fmt: skip
    p.add_argument("--reference-results", action="append", default=[], metavar="DIR",
                   help="the 2024 challenge's outputs (<DIR>/<paper>/paper_checklist.csv); repeatable")  # fmt: skip
    p.add_argument("--ground-truth", nargs="+", metavar="DIR_OR_FILE",
                   help="per-question ground-truth YAML/JSON files or folders of them")  # fmt: skip
    p.add_argument("--threshold", type=number("--threshold"), default=1.0,
                   help="ground truth below this is a target (default 1: 0 and 0.5 are targets)")  # fmt: skip
    p.add_argument("--far-stop", type=number("--far-stop", low=0, low_open=True, high=1),
                   default=0.1, help="FPR for pAUC and TPR@FPR (default 0.1)")
    p.add_argument("--bootstrap", type=number("--bootstrap", kind=int, low=0, high=1_000_000),
                   default=1000, help="bootstrap resamples for CIs (0: none)")
    p.add_argument("--seed", type=number("--seed", kind=int, low=0, high=2**32 - 1),
                   default=0, help="bootstrap seed (default 0)")
    p.add_argument("--by-question", action="store_true", help="also report every question")
    p.add_argument("--out", metavar="DIR", help="write summary.json, trials.csv, per-question CSV and plots")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--ci", action="append", metavar="LEVEL", type=CI_LEVELS,
                   help="log-score (and Brier) interval level(s) printed: 0.90, 0.95, 0.98, 0.99 (repeatable "
                        "or comma list; default 0.95; the JSON holds all four)")  # fmt: skip
    p.add_argument("--prevalence-sweep", action="store_true",
                   help="also the log score at target rates 1-99%% (10 seeded subsets each, TrojAI)")  # fmt: skip
    p.add_argument("--plot", metavar="FILE", help="with --prevalence-sweep: write the sweep's plot (PNG)")
    p.add_argument("--attack-runs", action="append", default=[], metavar="DIR",
                   help="folder of checklist-eval attack runs (each with plants.json and the records of "
                   "scoring it): report plant detection, false flags, R vs accept/reject-everything and "
                   "AUC per strategy; repeatable")  # fmt: skip
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from checklist_eval.adversary import evaluation as ev
    from checklist_eval.errors import InputError

    if args.attack_runs:
        return _run_attacks(args)
    if not args.inputs and not args.reference_results:
        raise InputError(None, "give a records file or results folder, or --reference-results DIR")
    if not 0.0 < args.far_stop <= 1.0:
        raise InputError(None, f"--far-stop must be in (0, 1], got {args.far_stop}")
    if not 0.0 < args.threshold <= 1.0:
        raise InputError(None, f"--threshold must be in (0, 1], got {args.threshold}")
    from checklist_eval.detection import trojai

    levels = trojai.parse_ci_levels(args.ci)
    if args.plot and not args.prevalence_sweep:
        raise InputError(None, "--plot FILE draws the prevalence sweep: add --prevalence-sweep")
    if args.plot:
        from checklist_eval.detection.plots import require_plotting

        require_plotting()
    systems = [ev.load_record_trials(p, args.ground_truth, args.threshold) for p in args.inputs]
    systems += [ev.load_reference_trials(d, args.ground_truth, args.threshold) for d in args.reference_results]
    _unique_names(systems)
    common_note = restrict_to_common_trials(systems)
    if common_note:
        print(f"warning: {common_note}", file=sys.stderr)
    results = [
        ev.evaluate(t, far_stop=args.far_stop, by_question=args.by_question,
                    n_bootstrap=args.bootstrap, seed=args.seed)  # fmt: skip
        for t in systems
    ]
    if common_note:
        for r in results:
            r["notes"].insert(0, common_note)
    for t, r in zip(systems, results, strict=True):
        r["ci_levels"] = list(levels)
        if args.prevalence_sweep:
            y = t.frame["target"].to_numpy(dtype=bool)
            r["prevalence_sweep"] = trojai.sweep(y, t.frame["score"].to_numpy(dtype=float), seed=args.seed)
    if args.plot:
        print(f"wrote {trojai.plot_sweep({r['system']: r['prevalence_sweep'] for r in results}, args.plot)}",
              file=sys.stderr)
    from pydantic import BaseModel, RootModel

    from checklist_eval.cli.output import emit

    reports = [ev.EvaluationReport.model_validate(r) for r in results]
    doc: BaseModel = reports[0] if len(reports) == 1 else RootModel[list[ev.EvaluationReport]](reports)
    emit(doc, args.json, lambda: _print_text(results, args.by_question), indent=2)
    if args.out:
        _write_out(args, systems, results, reports)
    return 0


def _trial_key(t) -> tuple[str, str, str]:
    return (t.paper, t.role, t.question_id)


def restrict_to_common_trials(systems) -> str | None:
    """Systems compared on different answers are not comparable: keep the trials every system has and
    say so. Returns the note to show, or None when the sets already agree."""
    if len(systems) < 2:
        return None
    keys = [{_trial_key(t) for t in s.rows} for s in systems]
    common = set.intersection(*keys)
    if all(len(k) == len(common) for k in keys):
        return None
    sizes = ", ".join(f"{t.system}: {len(k)}" for t, k in zip(systems, keys, strict=True))
    if not common:
        return (f"the systems were scored on different trials ({sizes}) and share none: each is reported on its "
                "own set, which makes them not comparable")
    for s in systems:
        s.rows = [t for t in s.rows if _trial_key(t) in common]
    return (f"the systems were scored on different trials ({sizes}); every figure below is on the "
            f"{len(common)} trials they all share")


def _run_attacks(args: argparse.Namespace) -> int:
    from checklist_eval.adversary import attack_eval
    from checklist_eval.cli.output import dump_json, emit
    from checklist_eval.errors import InputError

    if args.inputs or args.reference_results:
        raise InputError(None, "--attack-runs reads its own records: give no other inputs")
    runs = [run for root in args.attack_runs for run in attack_eval.run_folders(root)]
    trials = [t for run in runs for t in attack_eval.trials_of_run(run)]
    honest = [x for run in runs for x in attack_eval.honest_set_of_run(run)]
    summary = attack_eval.summarize(trials, n_bootstrap=args.bootstrap, seed=args.seed, honest_set=honest)
    doc = attack_eval.AttackSummary.model_validate(summary)
    emit(doc, args.json, lambda: print("\n".join(attack_eval.text_lines(summary))), indent=2)
    if args.out:
        from pathlib import Path

        from checklist_eval.fsutil import atomic_write_text

        atomic_write_text(Path(args.out) / "attack_summary.json", dump_json(doc, indent=2) + "\n")
    return 0


def _unique_names(systems) -> None:
    seen: dict[str, int] = {}
    for t in systems:
        if t.system in seen:
            seen[t.system] += 1
            t.renamed(f"{t.system}#{seen[t.system]}")
        else:
            seen[t.system] = 1


def _print_text(results: list[dict], by_question: bool) -> None:
    from checklist_eval.adversary import evaluation as ev

    for r in results:
        print("\n".join(ev.overall_lines(r)))
        for note in r["notes"]:
            print(f"  note: {note}")
        if by_question:
            print(ev.question_table(r), end="")
        if "prevalence_sweep" in r:
            from checklist_eval.detection.trojai import sweep_table

            print(sweep_table(r["prevalence_sweep"]), end="")


def _write_out(args, systems, results, reports) -> None:
    from pathlib import Path

    from checklist_eval.adversary import evaluation as ev
    from checklist_eval.errors import InputError
    from checklist_eval.fsutil import atomic_write_text

    out = Path(args.out)
    from pydantic import RootModel

    from checklist_eval.cli.output import dump_json

    atomic_write_text(out / "summary.json", dump_json(RootModel[list[ev.EvaluationReport]](reports), indent=2) + "\n")
    atomic_write_text(out / "trials.csv", ev.trials_csv_text(systems))
    if args.by_question:
        text = "".join(f"# {r['system']}\n{ev.question_table(r)}" for r in results)
        atomic_write_text(out / "by_question.txt", text)
    curves = {
        t.system: (t.frame["target"].to_numpy(dtype=bool), t.frame["score"].to_numpy(dtype=float))
        for t in systems
        if 0 < t.frame["target"].sum() < len(t.frame)
    }
    if not curves:
        return
    try:
        from checklist_eval.detection.plots import plot_det, plot_roc

        plot_roc(curves, out / "roc.png", far_stop=args.far_stop, title="Assessor ROC (target = untruthful)")
        plot_det(curves, out / "det.png", title="Assessor DET")
    except InputError as err:  # matplotlib missing: the figures are written, the plots are skipped
        print(f"warning: {err}", file=sys.stderr)
