"""A Codabench competition bundle (format version 2) for a checklist challenge, and the scoring
program's body that runs inside the compute worker.

Bundle layout (every path relative to ``competition.yaml``, as Codabench resolves them):

    competition.yaml              version 2; pages, tasks, phases, one leaderboard ranked by S
    logo.png                      the required competition image
    pages/{overview,evaluation,submission,terms}.md   from the README's rules
    scoring_program/metadata.yaml command the worker runs
    scoring_program/score.py      a thin wrapper over ``checklist_eval.challenge.codabench.worker_main``
    dev_phase/reference_data/config.json, final_phase/reference_data/config.json   assessor per phase
    Dockerfile                    the worker image (this package and its dependencies)

The worker mounts the scoring program at ``/app/program``, the task's reference data at
``/app/input/ref``, the participant's unzipped upload at ``/app/input/res``, and collects
``/app/output/scores.json`` (keys = the leaderboard's column keys) and
``/app/output/detailed_results.html``. No key is ever written into the bundle: an LLM phase reads it
from the worker's environment (the variable named in config.json) and fails with one line without it.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

__all__ = ["BundleOptions", "SCORE_KEYS", "build_bundle", "to_yaml", "worker_main"]

SCORE_KEYS = ("S", "C_G", "C_A", "C_T", "R")  # leaderboard order: index 0 (S) ranks
SCORE_TITLES = {"S": "S (score)", "C_G": "C_G (genuine)", "C_A": "C_A (adversarial)",
                "C_T": "C_T (truth)", "R": "R (agreement)"}
DEFAULT_IMAGE = "checklist-eval/codabench-worker:latest"
PHASES = {"dev": ("Development", "dev_phase", "Score your submission on the development rules; the "
                                             "leaderboard shows the latest score."),
          "final": ("Final", "final_phase", "Held-out final phase: the scored submission counts for the "
                                           "final ranking.")}


@dataclass
class BundleOptions:
    title: str = "NeurIPS checklist assistant challenge"
    phases: tuple[str, ...] = ("dev", "final")
    max_submissions_per_day: int = 1  # the NIST rule: one scored submission per day
    docker_image: str = DEFAULT_IMAGE
    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"


# --- a small YAML writer (the bundle is data we build: dicts, lists, strings, numbers) --------------


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def to_yaml(value: Any, indent: int = 0) -> str:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return pad + "{}\n"
        out = []
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{k}:\n{to_yaml(v, indent + 2)}")
            else:
                empty = "{}" if isinstance(v, dict) else "[]"
                out.append(f"{pad}{k}: {_scalar(v) if not isinstance(v, (dict, list)) else empty}\n")
        return "".join(out)
    if isinstance(value, list):
        out = []
        for v in value:
            if isinstance(v, dict) and v:
                body = to_yaml(v, indent + 2)
                out.append(f"{pad}- {body[indent + 2:]}")
            else:
                out.append(f"{pad}- {_scalar(v)}\n")
        return "".join(out)
    return pad + _scalar(value) + "\n"


# --- pages -----------------------------------------------------------------------------------------


def readme_text() -> str:
    """The project README: the source tree's, else the installed package's long description."""
    local = Path(__file__).resolve().parents[2] / "README.md"
    if local.is_file():
        return local.read_text("utf-8")
    try:
        from importlib.metadata import metadata

        return metadata("checklist-eval").get_payload() or ""  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - pages then say where the rules are
        return ""


def readme_section(text: str, heading: str) -> str:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("## ") and line[3:].strip().lower() == heading.lower():
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("## ")), len(lines))
            return "\n".join(lines[i + 1:end]).strip()
    return ""


def pages(options: BundleOptions) -> dict[str, str]:
    readme = readme_text()
    intro = readme.split("\n## ", 1)[0].split("\n", 1)[-1].strip()
    scoring = readme_section(readme, "Scoring") or "See the checklist-eval README, section Scoring."
    judge = (f"the LLM assessor (model `{options.model}`)" if options.model
             else "the offline heuristic assessor")
    return {
        "overview": f"# {options.title}\n\n{intro}\n",
        "evaluation": (f"# Evaluation\n\nEvery answer of every submitted paper is judged by {judge}; the "
                       f"leaderboard ranks by S.\n\n{scoring}\n"),
        "submission": ("# Submission format\n\nUpload one zip holding the G paper (`genuine_*`) and, for the "
                       "full task, the A (`adversarial_*`) and T (`truth_adversarial_*`) papers: each a "
                       "`.tex` file, a LaTeX project folder, or a PDF. G alone scores C_A = C_T = 0.\n"),
        "terms": (f"# Terms\n\n- At most {options.max_submissions_per_day} scored submission(s) per day "
                  "and phase.\n- Submissions are scored automatically; organizers may rescore with "
                  "overrides after review.\n- Do not submit papers you have no right to share.\n"),
    }


# --- the bundle ------------------------------------------------------------------------------------


def _logo_png(size: int = 64) -> bytes:
    """A plain square PNG (Codabench requires an image); written here to need no image library."""
    raw = b"".join(b"\x00" + bytes((40, 90, 160)) * size for _ in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def phase_config(options: BundleOptions, phase: str) -> dict[str, Any]:
    if options.model:
        return {"phase": phase, "assessor": "llm", "model": options.model, "base_url": options.base_url,
                "api_key_env": options.api_key_env}
    return {"phase": phase, "assessor": "heuristic"}


def competition(options: BundleOptions, today: datetime | None = None) -> dict[str, Any]:
    today = (today or datetime.now(timezone.utc)).replace(hour=0, minute=0, second=0, microsecond=0)
    tasks = [_task(i, key) for i, key in enumerate(options.phases)]
    phases = [_phase(options, i, key, today) for i, key in enumerate(options.phases)]
    # R is agreement the adversarial paper should NOT reach (S grows with 1 - R): smaller is better.
    columns = [{"title": SCORE_TITLES[k], "key": k, "index": i, "sorting": "asc" if k == "R" else "desc",
                "precision": 4} for i, k in enumerate(SCORE_KEYS)]
    return {
        "version": 2,
        "title": options.title,
        "description": "Assess NeurIPS paper checklists: G/A/T submissions scored by checklist-eval.",
        "image": "logo.png",
        "registration_auto_approve": True,
        "docker_image": options.docker_image,
        "enable_detailed_results": True,
        "show_detailed_results_in_submission_panel": True,
        "terms": "pages/terms.md",
        "pages": [{"title": t, "file": f"pages/{f}.md"} for t, f in
                  (("Overview", "overview"), ("Evaluation", "evaluation"), ("Submission", "submission"),
                   ("Terms", "terms"))],
        "tasks": tasks,
        "solutions": [],
        "phases": phases,
        "leaderboards": [{"index": 0, "title": "Results", "key": "main", "submission_rule": "Force_Last",
                          "columns": columns}],
    }



def _task(i: int, key: str) -> dict[str, Any]:
    name, folder, description = PHASES[key]
    return {"index": i, "name": f"{name} task", "description": description,
            "scoring_program": "scoring_program", "reference_data": f"{folder}/reference_data"}


def _phase(options: BundleOptions, i: int, key: str, today: datetime) -> dict[str, Any]:
    """Phase ``i`` of the bundle: phases follow each other every 30 days from today; the last never ends."""
    name, _, description = PHASES[key]
    start = today + timedelta(days=30 * i)
    phase: dict[str, Any] = {
        "index": i, "name": name, "description": description,
        "start": start.strftime("%Y-%m-%d %H:%M:%S"),
        "max_submissions_per_day": options.max_submissions_per_day,
        "max_submissions": max(options.max_submissions_per_day, 100 if key == "dev" else 5),
        "execution_time_limit": 3600 if options.model else 600,
        "accepts_only_result_submissions": True,
        "tasks": [i],
    }
    if i < len(options.phases) - 1:
        phase["end"] = (today + timedelta(days=30 * (i + 1) - 1)).strftime("%Y-%m-%d 23:59:59")
    return phase

SCORE_PY = '''#!/usr/bin/env python3
"""Codabench scoring program written by `checklist-eval codabench export`: the worker runs
`python3 /app/program/score.py /app/input /app/output`; everything else is checklist-eval's."""
import sys

from checklist_eval.challenge.codabench import worker_main

if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
'''

DOCKERFILE = '''# The compute-worker image for this competition (competition.yaml: docker_image).
# Build it from a checkout of checklist-eval and push it where the workers can pull it:
#   docker build -f Dockerfile -t {image} /path/to/checklist-eval && docker push {image}
# No key is baked in: an LLM phase reads {key_env} from the worker's environment.
FROM python:3.11-slim
COPY . /opt/checklist-eval
RUN pip install --no-cache-dir /opt/checklist-eval && rm -rf /opt/checklist-eval \\
    && python3 -c "import checklist_eval.challenge.codabench"
'''


def build_bundle(out: Path, options: BundleOptions) -> list[str]:
    """Write the bundle zip (atomically); the names of its members."""
    from checklist_eval.fsutil import atomic_write_bytes

    members: dict[str, bytes] = {
        "competition.yaml": to_yaml(competition(options)).encode("utf-8"),
        "logo.png": _logo_png(),
        "scoring_program/metadata.yaml": to_yaml(
            {"command": "python3 /app/program/score.py /app/input /app/output"}).encode("utf-8"),
        "scoring_program/score.py": SCORE_PY.encode("utf-8"),
        "Dockerfile": DOCKERFILE.format(image=options.docker_image, key_env=options.api_key_env).encode("utf-8"),
    }
    for name, text in pages(options).items():
        members[f"pages/{name}.md"] = text.encode("utf-8")
    for key in options.phases:
        folder = PHASES[key][1]
        members[f"{folder}/reference_data/config.json"] = json.dumps(phase_config(options, key), indent=1).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".py") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    atomic_write_bytes(out, buf.getvalue())
    return list(members)


# --- inside the compute worker ---------------------------------------------------------------------


def _submission_path(res: Path) -> Path:
    """The upload as the worker unpacked it: the folder itself, or the one zip inside it."""
    children = [p for p in res.iterdir() if not p.name.startswith((".", "__MACOSX"))]
    if len(children) == 1 and children[0].suffix.lower() == ".zip":
        return children[0]
    return res


def worker_main(argv: list[str]) -> int:
    """Score ``INPUT/res`` with the phase's ``INPUT/ref/config.json``; write ``OUTPUT/scores.json`` and
    ``OUTPUT/detailed_results.html``. Exit 0, or 1 with one line on stderr."""
    import asyncio
    import sys

    from checklist_eval.assessors import make_assessor
    from checklist_eval.challenge.batch import score_path
    from checklist_eval.challenge.report import write_submission_report
    from checklist_eval.errors import AssessorError, InputError
    from checklist_eval.fsutil import loads_json

    input_dir = Path(argv[0] if argv else "/app/input")
    output_dir = Path(argv[1] if len(argv) > 1 else "/app/output")
    try:
        config = loads_json((input_dir / "ref" / "config.json").read_text("utf-8"))
    except (OSError, ValueError):
        config = {"assessor": "heuristic"}

    async def score():
        if config.get("assessor") == "llm":
            assessor = make_assessor("llm", model=config["model"], base_url=config.get("base_url"),
                                     api_key_env=config.get("api_key_env") or "OPENAI_API_KEY", no_cache=True)
        else:
            assessor = make_assessor("heuristic")
        try:
            return await score_path(_submission_path(input_dir / "res"), assessor)
        finally:
            await assessor.aclose()

    try:
        result = asyncio.run(score())
    except (InputError, AssessorError, OSError) as err:
        print(f"checklist-eval scoring: {err}", file=sys.stderr)
        return 1
    output_dir.mkdir(parents=True, exist_ok=True)
    scores = {k: float(getattr(result.score, k)) for k in SCORE_KEYS}
    (output_dir / "scores.json").write_text(json.dumps(scores), "utf-8")
    write_submission_report(output_dir / "detailed_results.html", result.score, result.records, usage=result.usage)
    print(json.dumps({"case": result.score.case, **scores}))
    return 0
