"""The last doors of issue 31 (item 6), each reproduced as a user meets it, through the CLI as typed:
numeric flags (e), the Codabench bundle's credentials (a), the phase config (b), ``serve``'s Host check
(c) and the terminal sanitiser on printed model and paper text (d). Door f is tests/test_pointer_index.py.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from checklist_eval.cli import build_parser, main


def cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "checklist_eval", *map(str, args)], capture_output=True, text=True,
                          timeout=300, **kwargs)


def one_line(proc: subprocess.CompletedProcess, code: int, *words: str) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code and len(lines) == 1, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and all(w in lines[0] for w in words), lines
    return lines[0]


# ------------------------------------------------------------------------------------- e: number flags


def test_detection_score_ci_nan_is_one_line_exit_2_not_an_internal_error():
    # before: "internal error: ValueError: cannot convert float NaN to integer", exit 1
    one_line(cli("detection", "score", "-r", "ref.csv", "-x", "index.csv", "-s", "sys.csv", "--ci", "nan"), 2,
             "--ci nan", "finite")
    one_line(cli("detection", "score", "-r", "ref.csv", "-x", "index.csv", "-s", "sys.csv", "--ci", "0.95,inf"), 2,
             "--ci 0.95,inf", "finite")


def _numeric_flags(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command words, flag, kind) of every numeric flag of every command, as the parser declares it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _numeric_flags(sub, (*path, name))
        elif action.option_strings and action.type is not None:
            name = getattr(action.type, "__qualname__", "")
            if action.type in (float, int) or name.startswith(("number.", "number_list.")):
                yield path, action.option_strings[-1], action.type


FLAGS = list(_numeric_flags(build_parser()))


def test_every_numeric_flag_is_declared_through_the_validating_type():
    assert len(FLAGS) > 40
    assert not [(p, f) for p, f, kind in FLAGS if kind in (float, int)]


@pytest.mark.parametrize(("path", "flag", "kind"), FLAGS, ids=lambda x: " ".join(x) if isinstance(x, tuple) else
                         x if isinstance(x, str) else "")
def test_every_numeric_flag_refuses_a_value_that_is_not_finite(path, flag, kind, capsys):
    # before: mock-server --latency nan / --fault-rate nan, serve's int flags and --ci reached the command
    value = "9" * 400 if kind.__name__ == "int" else "nan"  # an int flag reads "nan" as argparse does: no int
    try:
        code = main([*path, flag, value])
    except SystemExit as stop:
        code = stop.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "Traceback" not in "\n".join(err) and flag in err[-1], err
    assert err[-1].startswith(("checklist-eval: error:", f"checklist-eval {' '.join(path)}: error:")), err
