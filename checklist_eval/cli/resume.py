"""A ``batch`` run against a results folder that already holds records: which path it takes and
whether its settings may go on (see ``checklist_eval.challenge.results.settings``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from checklist_eval.challenge.results.settings import NEW_SETTINGS_FLAG, RunSettings, check_resume


def add_resume_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(NEW_SETTINGS_FLAG, action="store_true",
                        help="the results folder was scored with other settings (model, endpoint, --via, "
                             "temperature, seed, prompt version, reasoning effort): score the submissions "
                             "made with them again, with these (new requests, paid for). Without it such a "
                             "rerun is refused")  # fmt: skip


def current_settings(args: argparse.Namespace) -> RunSettings:
    """The settings the flags ask for, defaults resolved (``args.via`` settled already)."""
    from checklist_eval.cli.flags import assessor_config
    from checklist_eval.endpoint.cache import endpoint_identity

    if args.assessor != "llm":
        return RunSettings(assessor=args.assessor, via=args.via, tex=getattr(args, "tex", None) or "auto")
    config = assessor_config(args)
    return RunSettings(assessor="llm", model=config.model, endpoint=endpoint_identity(config.resolved_base_url),
                       prompt_version=config.prompt_version, via=args.via, temperature=config.temperature,
                       seed=config.seed, reasoning_effort=config.reasoning_effort,
                       tex=getattr(args, "tex", None) or "auto")


def settle_run(args: argparse.Namespace, out: Path) -> tuple[RunSettings, RunSettings | None]:
    """(the run's settings, the folder's recorded ones). A run that does not say ``--via`` goes on by
    the folder's recorded path; different settings are refused unless ``--new-settings``."""
    from checklist_eval.challenge.results.folder import ResultsFolder

    folder = ResultsFolder(out)
    recorded = folder.settings()  # run_settings.json, else what each result.json says
    if args.via is None:
        args.via = recorded.via if recorded is not None else "online"
    current = current_settings(args)
    if check_resume(folder.settings_file, current, recorded, new_settings=bool(getattr(args, "new_settings", False))):
        import sys

        from checklist_eval.redact import one_line

        print(one_line(f"{out}: the new settings open a new run; the runs made with the earlier ones stay in "
                       f"{folder.layout.db.name} (the leaderboard shows them until the new run completes) until "
                       "checklist-eval prune"), file=sys.stderr)
    return current, recorded


def drains_batch_jobs(current: RunSettings, recorded: RunSettings | None) -> bool:
    """An online run resuming a batch-api folder (``--new-settings``): the jobs already submitted are
    waited for and their answers used; only what they do not answer is asked online."""
    was_batch_api = recorded is not None and recorded.via == "batch-api"
    return was_batch_api and current.via == "online" and current.assessor == "llm"
