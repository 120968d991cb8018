"""The scoring program's body, run inside a Codabench compute worker (see ``codabench`` for the bundle).

``INPUT/ref/config.json`` says which assessor the phase uses and where its key is; ``INPUT/res`` is the
participant's unzipped upload. Papers are parsed in an isolated worker process under a time and memory
budget (``reading.isolation``), so a hostile paper fails its submission with one line instead of taking
the container down. Output: ``OUTPUT/scores.json`` (the leaderboard's column keys) and
``OUTPUT/detailed_results.html`` titled with the genuine paper's title. Exit 0, or 1 with one line on
stderr (what the participant sees).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from checklist_eval.challenge.codabench import KEY_FILE, SCORE_KEYS, read_key_file
from checklist_eval.errors import AssessorError, InputError
from checklist_eval.fsutil import loads_json

__all__ = ["worker_main"]

KEY_ENV = "CHECKLIST_EVAL_CODABENCH_KEY"  # set for the assessor's construction only, then removed


def _read_config(ref: Path) -> dict[str, Any]:
    """The phase's settings, every key and value checked (``codabench_config``)."""
    from checklist_eval.challenge.codabench_config import check_phase_config

    try:
        config = loads_json((ref / "config.json").read_text("utf-8"))
    except FileNotFoundError:
        return {"assessor": "heuristic"}
    except (OSError, ValueError) as err:
        raise InputError(ref / "config.json", f"is not a readable phase configuration ({err})") from None
    return check_phase_config(config, ref / "config.json")


def _phase_key(config: dict[str, Any], ref: Path) -> str | None:
    """The key of an LLM phase: from the reference data (a capped key), from a file the organizer put
    on the worker host (seen at /app/data), else from the variable named in the config."""
    credential = config.get("credential")
    if credential == "bundle":
        return read_key_file(ref / config.get("api_key_file", KEY_FILE))
    if credential == "worker":
        path = Path(config["api_key_file"])
        if path.is_file():
            return read_key_file(path)
        env = config.get("api_key_env") or "OPENAI_API_KEY"
        key = os.environ.get(env, "").strip()
        if not key:
            raise AssessorError(f"no API key: the organizer's worker must hold it in {path} (the host's "
                                f"HOST_DIRECTORY/data) or in the environment variable {env}")
        return key
    return None


def _assessor(config: dict[str, Any], ref: Path):
    from checklist_eval.assessors import make_assessor

    if config.get("assessor") != "llm":
        return make_assessor("heuristic")
    key = _phase_key(config, ref)
    # The endpoint's whole URL (credentials, query) is a private file beside the key when it has them.
    base_url = read_key_file(ref / config["base_url_file"]) if config.get("base_url_file") else config.get("base_url")
    options = {"model": config["model"], "base_url": base_url, "no_cache": True,
               "api_key_env": config.get("api_key_env") or "OPENAI_API_KEY"}
    if key is None:
        return make_assessor("llm", **options)
    # The assessor reads its key from the environment once, when built; the key stays there no longer,
    # so the parse workers started afterwards never hold it.
    os.environ[KEY_ENV] = key
    try:
        return make_assessor("llm", **{**options, "api_key_env": KEY_ENV})
    finally:
        os.environ.pop(KEY_ENV, None)


def _submission_path(res: Path) -> Path:
    """The upload as the worker unpacked it: the folder itself, or the one zip inside it."""
    children = [p for p in res.iterdir() if not p.name.startswith((".", "__MACOSX"))]
    if len(children) == 1 and children[0].suffix.lower() == ".zip":
        return children[0]
    return res


def _paper_loader(config: dict[str, Any]):
    """Where papers are parsed: the one place to change when parsing gets another door."""
    from checklist_eval.reading.isolation import (
        DEFAULT_PARSE_MEMORY_MB,
        DEFAULT_PARSE_TIMEOUT_S,
        ParseLimits,
        ParserPool,
    )

    limits = ParseLimits(timeout_s=float(config.get("parse_timeout_s", DEFAULT_PARSE_TIMEOUT_S)),
                         memory_mb=int(config.get("parse_memory_mb", DEFAULT_PARSE_MEMORY_MB)))
    return ParserPool(1, limits)


async def _score(input_dir: Path, config: dict[str, Any]):
    import asyncio

    from checklist_eval.challenge.batch import assess_loaded, source_fingerprint
    from checklist_eval.challenge.submissions import load_submission, open_submission

    path = _submission_path(input_dir / "res")
    assessor = _assessor(config, input_dir / "ref")
    try:
        with _paper_loader(config) as loader:
            loaded = await asyncio.to_thread(load_submission, open_submission(path), loader=loader)
        result = await assess_loaded(loaded, assessor, source=str(path), fingerprint=source_fingerprint(path))
    finally:
        await assessor.aclose()
    genuine = loaded.papers["G"]
    return result, genuine.title or Path(genuine.source.split("!")[-1]).stem


def worker_main(argv: list[str]) -> int:
    """Score ``INPUT/res`` with the phase's ``INPUT/ref/config.json``; write ``OUTPUT/scores.json`` and
    ``OUTPUT/detailed_results.html``. Exit 0, or 1 with one line on stderr."""
    import asyncio

    from checklist_eval.challenge.report import write_submission_report
    from checklist_eval.fsutil import atomic_write_text
    from checklist_eval.redact import one_line, redact_keylike

    input_dir = Path(argv[0] if argv else "/app/input")
    output_dir = Path(argv[1] if len(argv) > 1 else "/app/output")
    try:
        config = _read_config(input_dir / "ref")
        result, title = asyncio.run(_score(input_dir, config))
    except (InputError, AssessorError, OSError) as err:
        # one line, controls shown inert: the message may quote a participant's file names
        print(f"checklist-eval scoring: {one_line(redact_keylike(str(err)))}", file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001 - the participant sees one line, never a traceback
        print(f"checklist-eval scoring: internal error ({type(err).__name__}): {one_line(redact_keylike(str(err)))}",
              file=sys.stderr)
        return 1
    output_dir.mkdir(parents=True, exist_ok=True)
    scores = {k: float(getattr(result.score, k)) for k in SCORE_KEYS}
    write_submission_report(output_dir / "detailed_results.html", result.score, result.records, usage=result.usage,
                            title=title)
    atomic_write_text(output_dir / "scores.json", json.dumps(scores))
    print(json.dumps({"case": result.score.case, "title": title, **scores}))
    return 0
