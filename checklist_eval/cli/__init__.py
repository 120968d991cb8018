"""The ``checklist-eval`` command. Each subcommand lives in its own module of this package and exposes
``register(subparsers)``, which adds its parser and sets ``func(args) -> int`` as the default.

Command modules import their heavy dependencies (pandas, openai, pypdfium2) inside ``func`` so that
``checklist-eval --help`` and the light commands start fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from checklist_eval.errors import EXIT_BUDGET, AssessorError, BudgetExceeded, ChecklistEvalError, UsageError
from checklist_eval.reading.forkserver import start_early
from checklist_eval.redact import TerminalStream, one_line, raw_stream, redact, redact_keylike

# Order here is the order in ``--help``: each command's name and the module that registers it.
COMMANDS = {
    "parse": "parse",
    "check": "check",
    "validate": "validate",
    "score": "score",
    "batch": "batch",
    "rescore": "rescore",
    "leaderboard": "leaderboard",
    "prune": "prune",
    "detection": "detection",
    "assessor-eval": "assessor_eval",
    "attack": "attack",
    "contamination": "contamination",
    "contamination-eval": "contamination",
    "mock-server": "mock_server",
    "batch-status": "batch_status",
    "ingest": "ingest",
    "codabench": "codabench",
    "logs": "logs",
    "endpoints": "endpoints",
    "serve": "serve",
}
COMMAND_MODULES = list(dict.fromkeys(COMMANDS.values()))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or only ``command``'s when it names one: a command then does not import and
    register the sixteen others (about 0.1 s of CPU each time it starts, and the suite starts thousands)."""
    from checklist_eval import __version__
    from checklist_eval.cli.numbers import guard_numeric_flags

    parser = argparse.ArgumentParser(
        prog="checklist-eval",
        description="Parse paper checklists, assess each answer, score checklist-challenge submissions.",
    )
    parser.add_argument("--version", action="version", version=f"checklist-eval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = [COMMANDS[command]] if command in COMMANDS else COMMAND_MODULES
    for name in modules:
        importlib.import_module(f"checklist_eval.cli.{name}").register(sub)
    guard_numeric_flags(parser)
    return parser


def subparser_of(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    """The parser of ``command`` (the top-level parser when there is none)."""
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict) and command in choices:  # a subparsers action maps names to parsers
            return choices[command]
    return parser


def main(argv: list[str] | None = None) -> int:
    """The command: every plain print goes to a ``TerminalStream`` (stdout and stderr), and every error
    line through ``one_line``. Stdout too when it is a pipe or a file: ``logs | less -R`` and ``cat``
    of a saved output reach a terminal all the same, and what is printed holds model and paper text.
    A JSON document keeps its meaning (a control becomes its JSON escape)."""
    saved = sys.stdout, sys.stderr
    sys.stderr = TerminalStream(raw_stream(sys.stderr))
    sys.stdout = TerminalStream(raw_stream(sys.stdout))
    try:
        return _run(argv)
    finally:
        sys.stdout, sys.stderr = saved


def _command_typed(argv: list[str] | None) -> str | None:
    words = sys.argv[1:] if argv is None else argv
    return next((w for w in words if not w.startswith("-")), None)


def _run(argv: list[str] | None) -> int:
    command = _command_typed(argv)
    parser = build_parser(command)
    start_early(command)  # after the parser: a fork server forked from here has our models loaded already
    try:
        args, extras = parser.parse_known_args(argv)
    except UsageError as err:  # a numeric flag out of range or not finite (cli.numbers)
        print(f"checklist-eval: error: {one_line(str(err))}", file=sys.stderr)
        return 2
    if extras:
        # argparse reports a subcommand's unknown flag against the top-level usage; the user needs
        # the usage of the command they typed.
        subparser_of(parser, getattr(args, "command", None)).error(f"unrecognized arguments: {' '.join(extras)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except BudgetExceeded as err:
        print(f"checklist-eval: {one_line(str(err))}", file=sys.stderr)
        return EXIT_BUDGET
    except ChecklistEvalError as err:
        # An assessor's error may quote an endpoint: key-shaped text goes too. A file name stays whole.
        text = redact_keylike(str(err)) if isinstance(err, AssessorError) else redact(str(err))
        print(f"checklist-eval: error: {one_line(text)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("checklist-eval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as err:  # a bug of ours (one line unless the user asks for the traceback) ...
        from checklist_eval.challenge.results.lock import environment_error

        refused = environment_error(err)  # ... or a write the environment refused (disk full, read-only)
        if refused is not None:
            print(f"checklist-eval: error: {one_line(redact(str(refused)))}", file=sys.stderr)
            return 2
        if os.environ.get("CHECKLIST_EVAL_DEBUG"):
            raise
        print(
            f"checklist-eval: internal error: {type(err).__name__}: {one_line(redact_keylike(str(err)))} "
            "(set CHECKLIST_EVAL_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1
