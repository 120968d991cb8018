"""A wheel of this package, built from the code that is running, for the Codabench bundle to carry.

The compute worker starts a stock ``python:3.x-slim`` image, so the scoring program installs the
project from this wheel (its dependencies come from PyPI, named in the wheel's metadata). Building it
here, from the imported package and its installed metadata, needs no build backend, no source checkout
and no network, and works the same from an editable install as from a wheel install. The files are
those hatchling puts in the project's wheel: every file under ``checklist_eval/`` but bytecode.
The zip is deterministic (fixed dates, sorted names): one version of the code gives one wheel.
"""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from importlib import metadata
from pathlib import Path

__all__ = ["DIST_NAME", "build_wheel", "wheel_name"]

DIST_NAME = "checklist-eval"
_PACKAGE = Path(__file__).resolve().parents[1]
_FIXED_DATE = (2024, 1, 1, 0, 0, 0)
_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = {".pyc", ".pyo"}

WHEEL_FILE = ("Wheel-Version: 1.0\nGenerator: checklist-eval codabench export\nRoot-Is-Purelib: true\n"
              "Tag: py3-none-any\n")


def _version() -> str:
    return metadata.version(DIST_NAME)


def wheel_name() -> str:
    """``checklist_eval-<version>-py3-none-any.whl`` (PEP 427 names: dashes in the project name become _)."""
    return f"{DIST_NAME.replace('-', '_')}-{_version()}-py3-none-any.whl"


def _package_files() -> list[tuple[str, bytes]]:
    files = []
    for path in sorted(_PACKAGE.rglob("*")):
        rel = path.relative_to(_PACKAGE.parent)
        if not path.is_file() or path.suffix in _SKIP_SUFFIXES or _SKIP_DIRS & set(rel.parts):
            continue
        files.append((rel.as_posix(), path.read_bytes()))
    return files


def _metadata_text() -> str:
    """The installed METADATA (name, version, Requires-Dist with extras, README) as the wheel's own."""
    dist = metadata.distribution(DIST_NAME)
    text = dist.read_text("METADATA")
    if not text:
        raise RuntimeError(f"{DIST_NAME} is installed without its METADATA; reinstall it")
    return text


def _entry_points_text() -> str:
    dist = metadata.distribution(DIST_NAME)
    return dist.read_text("entry_points.txt") or ""


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel() -> tuple[str, bytes]:
    """The wheel's file name and bytes."""
    info = f"{DIST_NAME.replace('-', '_')}-{_version()}.dist-info"
    members = _package_files()
    members.append((f"{info}/METADATA", _metadata_text().encode("utf-8")))
    members.append((f"{info}/WHEEL", WHEEL_FILE.encode()))
    entry_points = _entry_points_text()
    if entry_points:
        members.append((f"{info}/entry_points.txt", entry_points.encode("utf-8")))
    record = "\n".join([_record_line(n, d) for n, d in members] + [f"{info}/RECORD,,"]) + "\n"
    members.append((f"{info}/RECORD", record.encode()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zinfo = zipfile.ZipInfo(name, date_time=_FIXED_DATE)
            zinfo.external_attr = 0o644 << 16
            zinfo.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zinfo, data)
    return wheel_name(), buf.getvalue()
