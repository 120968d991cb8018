"""``checklist-eval detection validate|score``: NIST GenAI discriminator files (see checklist_eval.detection)."""

from __future__ import annotations

import argparse
import json
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "detection",
        help="validate and score NIST GenAI discriminator files (pipe-separated)",
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
    s.add_argument("--far-stop", type=float, default=0.1, help="FPR for pAUC and TPR@FPR (default 0.1)")
    s.add_argument("--plot", choices=("roc", "det"), action="append",
                   help="write a ROC or DET plot (PNG) into --out; repeatable (needs matplotlib)")  # fmt: skip
    s.add_argument("--out", help="directory for scores.txt, scores.json and plots")
    s.add_argument("--bootstrap", type=int, default=1000, help="resamples for the AUC CI (0: none)")
    s.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    s.add_argument("--json", action="store_true", help="print JSON instead of the table")
    s.set_defaults(func=_score)

    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _validate(args: argparse.Namespace) -> int:
    from checklist_eval.detection import validate_sysout

    result = validate_sysout(args.index, args.sysout)
    for w in result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    for prob in result.problems:
        print(f"error: {prob}")
    if result.ok:
        print(f"{args.sysout}: valid")
        return 0
    print(f"{args.sysout}: invalid ({len(result.problems)} problem(s))")
    return 2


def _score(args: argparse.Namespace) -> int:
    from pathlib import Path

    from checklist_eval.detection import plot_det, plot_roc, report_table, score_files
    from checklist_eval.errors import InputError
    from checklist_eval.evaluation import jsonable
    from checklist_eval.fsutil import atomic_write_text

    if args.plot and not args.out:
        raise InputError(None, "--plot needs --out DIR to write the PNG into")
    result = score_files(args.ref, args.index, args.sysout, far_stop=args.far_stop,
                         n_bootstrap=args.bootstrap, seed=args.seed)  # fmt: skip
    for w in result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    table = report_table(result)
    payload = {"system": result.system, "far_stop": args.far_stop, "metrics": jsonable(result.metrics)}
    print(json.dumps(payload, indent=2) if args.json else table, end="\n" if args.json else "")
    if args.out:
        out = Path(args.out)
        atomic_write_text(out / "scores.txt", table)
        atomic_write_text(out / "scores.json", json.dumps(payload, indent=2) + "\n")
        curves = {result.system["ModelVersion"] or "system": (result.y, result.score)}
        for kind in args.plot or []:
            if kind == "roc":
                path = plot_roc(curves, out / "roc.png", far_stop=args.far_stop)
            else:
                path = plot_det(curves, out / "det.png")
            print(f"wrote {path}", file=sys.stderr)
    return 0
