"""``checklist-eval detection validate|score|package``: NIST GenAI discriminator files (see
checklist_eval.detection.nist and checklist_eval.detection.nist_package)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from checklist_eval.cli.numbers import CI_LEVELS, number


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "detection",
        help="validate, score and package NIST GenAI discriminator files (pipe-separated)",
        description="Validate a system output against its index, or score it against the reference, "
        "on the conventions of NIST's GenAI text-to-text discriminator evaluation.",
    )
    sub = p.add_subparsers(dest="detection_command", metavar="SUBCOMMAND")

    v = sub.add_parser("validate", help="check a system output against the index; exit 0 valid, 2 invalid")
    v.add_argument("-x", "--index", required=True, help="index file (DatasetID|TaskID|FileID)")
    v.add_argument("-s", "--sysout", required=True, help="system output file")
    v.set_defaults(func=_validate)

    s = sub.add_parser("score", help="score a system output: AUC, pAUC, TPR@FPR, EER, Brier, log score")
    s.add_argument("-r", "--ref", required=True, help="reference file (...|FileID|GeneratorID|IsTarget)")
    s.add_argument("-x", "--index", required=True, help="index file")
    s.add_argument("-s", "--sysout", required=True, help="system output file")
    s.add_argument("--far-stop", type=number("--far-stop", low=0, low_open=True, high=1),
                   default=0.1, help="FPR for pAUC and TPR@FPR (default 0.1)")
    s.add_argument("-t", "--task", help="the plan's task name; only 'detection' (accepted as NIST's scorer takes it)")
    s.add_argument("--plotType", action="append", dest="plot_type", metavar="det|roc",
                   help="NIST scorer spelling of --plot roc/det (e.g. --plotType roc, --plotType '[det, roc]')")
    s.add_argument("--plot", action="append", metavar="roc|det|FILE",
                   help="write a ROC or DET plot (PNG) into --out; repeatable (needs matplotlib). With "
                        "--prevalence-sweep, a FILE (.png) gets the sweep's plot")  # fmt: skip
    s.add_argument("--out", help="directory for scores.txt, scores.json and plots")
    s.add_argument("--bootstrap", type=number("--bootstrap", kind=int, low=0, high=1_000_000),
                   default=1000, help="resamples for the AUC CI (0: none)")
    s.add_argument("--seed", type=number("--seed", kind=int, low=0, high=2**32 - 1),
                   default=0, help="bootstrap seed (default 0)")
    s.add_argument("--json", action="store_true", help="print JSON instead of the table")
    s.add_argument("--ci", action="append", metavar="LEVEL", type=CI_LEVELS,
                   help="log-score interval level(s): 0.90, 0.95, 0.98, 0.99 "
                        "(repeatable or comma list; default 0.95)")  # fmt: skip
    s.add_argument("--prevalence-sweep", action="store_true",
                   help="also the log score at target rates 1-99%% (10 seeded subsets each)")  # fmt: skip
    s.set_defaults(func=_score)

    k = sub.add_parser("package", help="build the .tgz submission package of a system output (plan 5.2.2)")
    k.add_argument("-s", "--sysout", required=True, help="system output CSV")
    k.add_argument("-x", "--index", help="validate against this index first (an invalid output is not packaged)")
    k.add_argument("--out", required=True, metavar="SUBMISSION.tgz", help="package to write (.tgz or .tar.gz)")
    k.set_defaults(func=_package)

    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _validate(args: argparse.Namespace) -> int:
    from checklist_eval.detection.nist import validate_sysout

    result = validate_sysout(args.index, args.sysout)
    for w in result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    for prob in result.problems:
        print(f"error: {prob}")
    if result.omitted:
        print(f"error: ... and {result.omitted} more problem(s) not shown")
    if result.ok:
        print(f"{args.sysout}: valid")
        return 0
    print(f"{args.sysout}: invalid ({result.count} problem(s))")
    return 2


def _score(args: argparse.Namespace) -> int:
    from pathlib import Path

    from checklist_eval.cli.output import dump_json, emit
    from checklist_eval.detection import trojai
    from checklist_eval.detection.nist import DetectionReport, report_table, score_files
    from checklist_eval.detection.plots import plot_det, plot_roc
    from checklist_eval.errors import InputError
    from checklist_eval.fsutil import atomic_write_text

    _check_task(args.task)
    kinds, sweep_plot = _plots(args)
    if kinds and not args.out:
        raise InputError(None, "--plot needs --out DIR to write the PNG into")
    if kinds or sweep_plot:
        from checklist_eval.detection.plots import require_plotting

        require_plotting()
    levels = trojai.parse_ci_levels(args.ci)
    result = score_files(args.ref, args.index, args.sysout, far_stop=args.far_stop,
                         n_bootstrap=args.bootstrap, seed=args.seed)  # fmt: skip
    result.metrics.update(trojai.log_score_intervals(result.y, result.score, levels))
    for w in result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    table = report_table(result)
    payload = DetectionReport(system=result.system, far_stop=args.far_stop, metrics=result.metrics)
    if args.prevalence_sweep:
        sweep = trojai.sweep(result.y, result.score, seed=args.seed)
        payload.prevalence_sweep = sweep
        table += "\n" + trojai.sweep_table(sweep)
        if sweep_plot:
            label = result.system["ModelVersion"] or "system"
            print(f"wrote {trojai.plot_sweep({label: sweep}, sweep_plot)}", file=sys.stderr)
    emit(payload, args.json, lambda: print(table, end=""), indent=2)
    args.plot = kinds
    if args.out:
        out = Path(args.out)
        atomic_write_text(out / "scores.txt", table)
        atomic_write_text(out / "scores.json", dump_json(payload, indent=2) + "\n")
        curves = {result.system["ModelVersion"] or "system": (result.y, result.score)}
        for kind in args.plot or []:
            if kind == "roc":
                path = plot_roc(curves, out / "roc.png", far_stop=args.far_stop)
            else:
                path = plot_det(curves, out / "det.png")
            print(f"wrote {path}", file=sys.stderr)
    return 0


def _plots(args: argparse.Namespace) -> tuple[list[str], str | None]:
    """(roc/det kinds for --out, the sweep plot's file) from the --plot values."""
    from checklist_eval.errors import InputError

    kinds: list[str] = _plot_types(args.plot_type)
    files: list[str] = []
    for value in args.plot or []:
        (kinds if value in ("roc", "det") else files).append(value)
    kinds = list(dict.fromkeys(kinds))
    if files and not args.prevalence_sweep:
        raise InputError(None, f"--plot takes roc or det (a file, here {files[0]!r}, needs --prevalence-sweep)")
    if len(files) > 1:
        raise InputError(None, "--plot: one sweep plot file only")
    return kinds, (files[0] if files else None)


def _check_task(task: str | None) -> None:
    from checklist_eval.errors import InputError

    if task is not None and task.strip().casefold() != "detection":
        raise InputError(None, f"-t/--task: {task!r} is not a task here; the T2T discriminator task is 'detection'")


def _plot_types(values: list[str] | None) -> list[str]:
    """``--plotType det``, ``--plotType roc`` or the plan's ``--plotType [det, roc]`` as plot kinds."""
    import re

    from checklist_eval.errors import InputError

    kinds = []
    for value in values or []:
        for word in (w for w in re.split(r"[\s,\[\]]+", value.casefold()) if w):
            if word not in ("det", "roc"):
                raise InputError(None, f"--plotType: {word!r} is not det or roc")
            kinds.append(word)
    return kinds


def _package(args: argparse.Namespace) -> int:
    from checklist_eval.detection.nist import check_sysout_alone, validate_sysout
    from checklist_eval.detection.nist_package import build_package

    v = validate_sysout(args.index, args.sysout) if args.index else check_sysout_alone(args.sysout)
    for w in v.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not v.ok:
        for prob in v.problems:
            print(f"error: {prob}")
        print(f"{args.sysout}: not packaged ({v.count} problem(s))")
        return 2
    print(f"wrote {build_package(args.sysout, args.out)} (holding {Path(args.sysout).name})")
    return 0
