"""``checklist-eval attack PAPER --out DIR``: plant dishonest answers into a genuine paper and write
the GAT submission (genuine_, adversarial_, truth_adversarial_) with a plants.json beside it."""

from __future__ import annotations

import argparse

from checklist_eval.cli.numbers import number


def register(subparsers: argparse._SubParsersAction) -> None:
    from checklist_eval.adversary.attack import STRATEGIES
    from checklist_eval.cli.flags import add_assessor_args, add_limit_args

    p = subparsers.add_parser(
        "attack",
        help="write a GAT submission with planted dishonest answers from a genuine LaTeX paper",
        description="From a genuine paper (LaTeX folder, archive or .tex) write a ready submission folder: "
        "genuine_<name>.tex and truth_adversarial_<name>.tex with the paper's honest answers, "
        "adversarial_<name>.tex with planted ones, and plants.json naming each plant. Strategies: "
        + "; ".join(f"{s.name}: {s.description}" for s in STRATEGIES.values()),
    )
    p.add_argument("paper", help="the genuine paper: LaTeX project folder, .zip/.tar.gz or .tex")
    p.add_argument("--out", required=True, metavar="DIR", help="submission folder to write")
    p.add_argument("--plants", type=number("--plants", kind=int, low=0, high=10_000),
                   default=4, metavar="N", help="answers to plant (default 4)")
    p.add_argument("--seed", type=number("--seed", kind=int, low=0),
                   default=0, help="random seed choosing questions and strategy order")
    p.add_argument("--strategies", nargs="+", metavar="NAME", choices=list(STRATEGIES),
                   help="strategies to use (default: all)")  # fmt: skip
    p.add_argument("--checklist", help="checklist version (default: detected)")
    p.add_argument("--json", action="store_true", help="print plants.json")
    p.add_argument("--rounds", type=number("--rounds", kind=int, low=0), default=0, metavar="N",
                   help="rounds of rewriting the plants the assessor caught: with --against heuristic (at most "
                   "20) each caught plant takes its strategy's next phrasing; with --assessor llm (at most 5) "
                   "the model rewrites it against its own review")  # fmt: skip
    p.add_argument("--against", choices=["heuristic"],
                   help="white-box adversary: attack the offline assessor, whose rules are open")
    p.add_argument("--reword", action="store_true",
                   help="reword every planted justification (synonyms, clause order), not only pick a phrasing")
    p.add_argument("--without-body", action="store_true",
                   help="with --against: judge A as a checklist file alone (no paper body) in the rounds")
    add_assessor_args(p)
    add_limit_args(p)
    p.set_defaults(func=run)


def _check_out(out, name: str) -> None:
    """Refuse a folder that already holds another paper's role files: the submission would be invalid."""
    from pathlib import Path

    from checklist_eval.challenge.submissions import role_of
    from checklist_eval.errors import InputError

    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(folder, "--out exists and is not a folder")
    ours = {f"genuine_{name}.tex", f"adversarial_{name}.tex", f"truth_adversarial_{name}.tex"}
    others = [p.name for p in folder.iterdir() if role_of(p.name) and p.name not in ours] if folder.is_dir() else []
    if others:
        raise InputError(folder, f"already holds another submission's paper ({others[0]}): choose an empty --out")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from checklist_eval.adversary.attack import _safe_name, attack
    from checklist_eval.cli.flags import parse_limits
    from checklist_eval.cli.output import emit
    from checklist_eval.errors import InputError

    if args.plants < 1:
        raise InputError(None, f"--plants must be at least 1, got {args.plants}")
    if args.rounds and args.assessor != "llm" and not args.against:
        raise InputError(None, "--rounds rewrites the plants an assessor caught: give --against heuristic, or "
                         "--assessor llm and --model")
    limit = 20 if args.against else 5
    if not 0 <= args.rounds <= limit:
        raise InputError(None, f"--rounds must be between 0 and {limit}, got {args.rounds}")
    _check_out(args.out, _safe_name(Path(args.paper)))
    result = attack(args.paper, args.out, n_plants=args.plants, seed=args.seed,
                    strategies=args.strategies, checklist=args.checklist, reword=args.reword,
                    limits=parse_limits(args))  # fmt: skip
    if args.rounds and args.against:
        from checklist_eval.adversary.attack_whitebox import whitebox_rounds
        from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor

        result = whitebox_rounds(result, args.out, HeuristicAssessor(), args.rounds,
                                 strip_body=args.without_body, reword=args.reword)
    elif args.rounds:
        result = _llm_rounds(args, result)
    return emit(result, args.json, lambda: _print_result(args, result), indent=2, ensure_ascii=False)


def _print_result(args: argparse.Namespace, result) -> None:
    print(f"{len(result.plants)} plant(s) in {args.out}/{result.files['A']} ({result.checklist}):")
    for p in result.plants:
        print(f"  {p.question_id:>4}  {p.original_answer:>3} -> {p.planted_answer:<3}  {p.strategy}")
    for r in result.llm_rounds:
        print(f"  LLM round {r['round']}: assessor caught {len(r['caught'])} plant(s) {' '.join(r['caught'])}")
    for r in result.rounds:
        print(f"  white-box round {r['round']} against {r['against']}: caught {len(r['caught'])} plant(s) "
              f"{' '.join(r['caught'])}")
    for d in result.dropped:
        print(f"  dropped {d}")
    if not result.plants:
        print("  no question of this paper fits the chosen strategies")


def _llm_rounds(args: argparse.Namespace, result):
    import asyncio

    from checklist_eval.adversary.attack_llm import rewrite_rounds
    from checklist_eval.cli.flags import assessor_from_args, parse_limits

    async def go():
        assessor = assessor_from_args(args)
        try:
            return await rewrite_rounds(result, args.out, assessor, args.rounds, parse_limits(args))
        finally:
            await assessor.aclose()

    return asyncio.run(go())
