"""A Codabench competition bundle (format version 2) for a checklist challenge.

Bundle layout (every path relative to ``competition.yaml``, as Codabench resolves them):

    competition.yaml                  version 2; pages, tasks, phases, one leaderboard ranked by S
    logo.png                          the required competition image
    pages/*.md                        for participants (``codabench_pages``)
    scoring_program/metadata.yaml     the command the worker runs
    scoring_program/score.py          installs the wheel beside it on first use, then runs
                                      ``checklist_eval.challenge.codabench_worker.worker_main``
    scoring_program/checklist_eval-*.whl   this package, built from the running code
    {dev,final}_phase/reference_data/config.json   the assessor of the phase (and ``api_key``: a capped key)
    sample_submission/                a real G/A/T triplet, each phase's starting kit
    ORGANIZER.md, Dockerfile          for the organizer: how it runs; an optional prebuilt image

The worker runs a stock ``python:3.11-slim`` by default: nothing to build. It mounts the scoring program
at ``/app/program``, the task's reference data at ``/app/input/ref``, the participant's unzipped upload
at ``/app/input/res``, and collects ``/app/output/scores.json`` (keys = the leaderboard's column keys)
and ``/app/output/detailed_results.html``.

An LLM phase needs a key inside the container, whose environment the worker does not set. Either the
bundle carries a key that is capped (a proxy's virtual key with a budget; a key shaped like a
provider's own is refused unless the organizer says it is capped), or the competition runs on the
organizer's own queue and the key is a file on the worker hosts (their ``HOST_DIRECTORY/data`` is
mounted read-only at ``/app/data``). Before the zip is written every file in it, the wheel's included,
is searched for provider-shaped keys: only the declared capped key may be there.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from checklist_eval.challenge.codabench_options import DEFAULT_IMAGE, PHASES, WORKER_KEY_PATH, BundleOptions
from checklist_eval.errors import InputError

__all__ = ["DEFAULT_IMAGE", "PHASES", "BundleOptions", "SCORE_KEYS", "WORKER_KEY_PATH", "build_bundle",
           "check_capped_key", "to_yaml"]

SCORE_KEYS = ("S", "C_G", "C_A", "C_T", "R")  # leaderboard order: index 0 (S) ranks
SCORE_TITLES = {"S": "S (score)", "C_G": "C_G (genuine)", "C_A": "C_A (adversarial)",
                "C_T": "C_T (truth)", "R": "R (agreement)"}
KEY_FILE = "api_key"  # beside config.json in the reference data, for a key the bundle carries
# The endpoint's whole URL when it carries credentials or a query (``https://u:p@host/v1?token=...``):
# config.json, the pages and ORGANIZER.md show it without them.
ENDPOINT_FILE = "endpoint_url"
PRIVATE_FILES = (KEY_FILE, ENDPOINT_FILE)  # the organizer's key files: the only members a secret may be in
MAX_KEY_BYTES = 4096
SAMPLE_FOLDER = "sample_submission"


# --- the credential ----------------------------------------------------------------------------------


def read_key_file(path: Path) -> str:
    """The one key in ``path`` (a line; surrounding whitespace ignored)."""
    from checklist_eval.reading.sources import read_regular

    try:
        text = read_regular(path, MAX_KEY_BYTES, "key file").decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, "is not a text file holding one key") from None
    except OSError as err:
        raise InputError(path, f"cannot be read ({err.strerror or err})") from None
    key = text.strip()
    if not key or any(c.isspace() for c in key):
        raise InputError(path, "must hold exactly one key on one line")
    return key


def check_capped_key(key: str, path: Path, *, capped: bool) -> None:
    """Refuse a key shaped like a provider's own unless its owner says it is capped."""
    from checklist_eval.redact import provider_key_kind

    kind = provider_key_kind(key)
    if kind and not capped:
        raise InputError(path, f"holds a key shaped like a provider's own ({kind}); the bundle is handed to a "
                               "platform, so give a capped key (e.g. a LiteLLM virtual key with max_budget) "
                               "and say so with --key-is-capped")


def phase_config(options: BundleOptions, phase: str) -> dict[str, Any]:
    if not options.model:
        return {"phase": phase, "assessor": "heuristic"}
    config: dict[str, Any] = {"phase": phase, "assessor": "llm", "model": options.model,
                              "base_url": options.base_url, "credential": options.credential}
    if options.credential == "bundle":
        config["api_key_file"] = KEY_FILE
    elif options.credential == "worker":
        config["api_key_file"] = options.worker_key_path
        config["api_key_env"] = options.api_key_env
    if options.endpoint_url:
        config["base_url_file"] = ENDPOINT_FILE
    if options.spend_cap_usd is not None:
        config["spend_cap_usd"] = options.spend_cap_usd
    return config


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



# --- the bundle ------------------------------------------------------------------------------------


def _logo_png(size: int = 64) -> bytes:
    """A plain square PNG (Codabench requires an image); written here to need no image library."""
    raw = b"".join(b"\x00" + bytes((40, 90, 160)) * size for _ in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def competition(options: BundleOptions, today: datetime | None = None) -> dict[str, Any]:
    """competition.yaml: only keys Codabench's v2 unpacker (and its serializers) read."""
    from checklist_eval.challenge.codabench_pages import PAGE_TITLES

    today = (today or datetime.now(timezone.utc)).replace(hour=0, minute=0, second=0, microsecond=0)
    tasks = [_task(i, key) for i, key in enumerate(options.phases)]
    phases = [_phase(options, i, key, today) for i, key in enumerate(options.phases)]
    # R is agreement the adversarial paper should NOT reach (S grows with 1 - R): smaller is better.
    columns = [{"title": SCORE_TITLES[k], "key": k, "index": i, "sorting": "asc" if k == "R" else "desc",
                "precision": 4} for i, k in enumerate(SCORE_KEYS)]
    comp: dict[str, Any] = {
        "version": 2,
        "title": options.title,
        "description": "Assess NeurIPS paper checklists: submit a genuine paper, or a genuine, adversarial "
                       "and truth-adversarial triplet, and try to fool the assessor.",
        "image": "logo.png",
        "registration_auto_approve": True,
        "docker_image": options.docker_image,
        "enable_detailed_results": True,
        "show_detailed_results_in_submission_panel": True,
        "terms": "pages/terms.md",
        "pages": [{"title": title, "file": f"pages/{name}.md"} for name, title in PAGE_TITLES.items()],
        "tasks": tasks,
        "solutions": [],
        "phases": phases,
        "leaderboards": [{"title": "Results", "key": "main", "primary_index": 0, "submission_rule": "Force_Last",
                          "columns": columns}],
    }
    if options.queue:
        comp["queue"] = options.queue
    return comp


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
        "execution_time_limit": 3600 if options.model else 900,
        "starting_kit": SAMPLE_FOLDER,
        "tasks": [i],
    }
    if i < len(options.phases) - 1:
        phase["end"] = (today + timedelta(days=30 * (i + 1) - 1)).strftime("%Y-%m-%d 23:59:59")
    return phase


SCORE_PY = '''#!/usr/bin/env python3
"""Codabench scoring program written by `checklist-eval codabench export`.

The compute worker runs `python3 /app/program/score.py /app/input /app/output` in a stock Python image.
The first run in a container installs checklist-eval from the wheel beside this file (its dependencies
from PyPI); then the submission in /app/input/res is scored with the phase's /app/input/ref/config.json.
"""
import importlib
import subprocess
import sys
from pathlib import Path

WHEEL = {wheel!r}
VERSION = {version!r}


def installed_version():
    from importlib import metadata

    try:
        return metadata.version("checklist-eval")
    except metadata.PackageNotFoundError:
        return None


def install():
    if installed_version() == VERSION:
        return
    wheel = Path(__file__).resolve().parent / WHEEL
    # --no-compile: pip would compile every file of pandas and numpy first (about half the install time);
    # Python compiles the few modules scoring imports when it imports them.
    run = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                          "--no-input", "--no-compile", str(wheel)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["pip failed"])[-1]
        sys.exit(f"checklist-eval scoring: could not install {{WHEEL}}: {{last}}")
    importlib.invalidate_caches()


def main():
    install()
    from checklist_eval.challenge.codabench_worker import worker_main

    return worker_main(sys.argv[1:])


if __name__ == "__main__":  # the parse workers' fork server imports this file: nothing runs at import
    sys.exit(main())
'''

DOCKERFILE = '''# Optional: an image with checklist-eval already installed, so submissions skip the install step.
# From the unpacked bundle folder:
#   docker build -t {image} . && docker push {image}
# then export again with --docker-image {image}. No key is baked in.
FROM python:3.11-slim
COPY scoring_program/{wheel} /tmp/
RUN pip install --no-cache-dir /tmp/{wheel} && rm /tmp/{wheel} \\
    && python3 -c "import checklist_eval.challenge.codabench_worker"
'''


def _sample_submission() -> dict[str, bytes]:
    from importlib import resources

    folder = resources.files("checklist_eval.challenge").joinpath(SAMPLE_FOLDER)
    return {f"{SAMPLE_FOLDER}/{p.name}": p.read_bytes() for p in sorted(folder.iterdir(), key=lambda p: p.name)
            if p.name.endswith(".tex")}


def bundle_members(options: BundleOptions) -> dict[str, bytes]:
    """Every file of the bundle, by its path in the zip."""
    from checklist_eval.challenge.codabench_pages import organizer_page, pages
    from checklist_eval.challenge.codabench_wheel import build_wheel

    wheel, wheel_bytes = build_wheel()
    version = wheel.split("-")[1]
    members: dict[str, bytes] = {
        "competition.yaml": to_yaml(competition(options)).encode("utf-8"),
        "logo.png": _logo_png(),
        "scoring_program/metadata.yaml": to_yaml(
            {"command": "python3 /app/program/score.py /app/input /app/output"}).encode("utf-8"),
        "scoring_program/score.py": SCORE_PY.format(wheel=wheel, version=version).encode("utf-8"),
        f"scoring_program/{wheel}": wheel_bytes,
    }
    for name, text in pages(options).items():
        members[f"pages/{name}.md"] = text.encode("utf-8")
    for key in options.phases:
        folder = f"{PHASES[key][1]}/reference_data"
        members[f"{folder}/config.json"] = json.dumps(phase_config(options, key), indent=1).encode()
        if options.credential == "bundle" and options.api_key:
            members[f"{folder}/{KEY_FILE}"] = (options.api_key + "\n").encode()
        if options.endpoint_url:
            members[f"{folder}/{ENDPOINT_FILE}"] = (options.endpoint_url + "\n").encode()
    members.update(_sample_submission())
    members["ORGANIZER.md"] = organizer_page(options, wheel=wheel, credential=options.credential).encode("utf-8")
    members["Dockerfile"] = DOCKERFILE.format(image=options.docker_image if options.docker_image != DEFAULT_IMAGE
                                              else "YOUR_REGISTRY/checklist-eval-worker", wheel=wheel).encode()
    return members


def _texts(name: str, data: bytes) -> list[tuple[str, str]]:
    """(where, text) of a member, and of every file inside it when it is a zip (the wheel)."""
    if name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return [(f"{name}!{n}", zf.read(n).decode("latin-1")) for n in zf.namelist()]
    return [(name, data.decode("latin-1"))]


def assert_no_provider_key(members: dict[str, bytes], allowed: str | None) -> None:
    """Refuse to ship a bundle in which anything but ``allowed`` is shaped like a provider's key."""
    from checklist_eval.redact import find_provider_keys

    for name, data in members.items():
        for where, text in _texts(name, data):
            if [k for k in find_provider_keys(text) if k != allowed]:
                raise InputError(where, "holds a string shaped like a provider's API key; the bundle is not written")


def _private(name: str) -> bool:
    return name.endswith(tuple(f"/reference_data/{f}" for f in PRIVATE_FILES))


def assert_secrets_kept_private(members: dict[str, bytes], options: BundleOptions) -> None:
    """Refuse to ship a bundle whose public files (every member but the organizer's key files, the
    wheel's files included) hold the declared key or a credential of the endpoint's URL, e.g. pasted
    into --title. The message names the file, never the secret."""
    from checklist_eval.redact import url_credentials

    secrets = [("the key of --api-key-file", options.api_key)]
    secrets += [("a credential of --base-url", x) for x in url_credentials(options.endpoint_url)]
    for name, data in members.items():
        if _private(name):
            continue
        for where, text in _texts(name, data):
            said = next((what for what, secret in secrets if secret and secret in text), None)
            if said:
                raise InputError(where, f"would hold {said} (a file every co-organizer, and for pages every "
                                        "participant, reads); the bundle is not written")


def build_bundle(out: Path, options: BundleOptions) -> list[str]:
    """Write the bundle zip (atomically); the names of its members."""
    from checklist_eval.fsutil import atomic_write_bytes

    members = bundle_members(options)
    assert_secrets_kept_private(members, options)
    assert_no_provider_key(members, options.api_key)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".py") else 0o600 if _private(name) else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    atomic_write_bytes(out, buf.getvalue())
    return list(members)
