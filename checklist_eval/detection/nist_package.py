"""The NIST GenAI submission package (evaluation plan, section 5.2.2): a gzipped tar holding the system
output CSV, as ``tar zcvf SUBMISSION.tgz SYSOUT.csv`` makes it.

Reading one never extracts anything: the archive must hold exactly one regular ``.csv`` member (no
links, devices or folders in the way, no path outside the archive), at most :data:`MAX_MEMBER_BYTES`
large, and it is read into memory.
"""

from __future__ import annotations

import io
import tarfile
import time
from pathlib import Path, PurePosixPath

from checklist_eval.errors import InputError

MAX_MEMBER_BYTES = 256 << 20
MAX_MEMBERS = 64
PACKAGE_SUFFIXES = (".tgz", ".tar.gz")


def is_package(path: str | Path) -> bool:
    return str(path).lower().endswith(PACKAGE_SUFFIXES)


def build_package(sysout: str | Path, out: str | Path) -> Path:
    """Write ``out`` (.tgz or .tar.gz) holding ``sysout`` under its own file name, atomically."""
    from checklist_eval.fsutil import atomic_write_bytes

    src, dest = Path(sysout), Path(out)
    if not is_package(dest):
        raise InputError(dest, "the package name must end in .tgz or .tar.gz")
    if not src.is_file():
        raise InputError(src, "file not found")
    data = src.read_bytes()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo(src.name)
        info.size = len(data)
        info.mtime = int(time.time())
        info.mode = 0o644
        tar.addfile(info, io.BytesIO(data))
    return atomic_write_bytes(dest, buf.getvalue())


def read_package(path: str | Path) -> tuple[str, bytes]:
    """(member name, bytes) of the one CSV in a submission package."""
    p = Path(path)
    if not p.is_file():
        raise InputError(p, "file not found")
    try:
        with tarfile.open(p, mode="r:*") as tar:
            members = []
            for k, m in enumerate(tar):
                if k >= MAX_MEMBERS:
                    raise InputError(p, f"more than {MAX_MEMBERS} archive members")
                members.append(m)
            return _the_csv(p, tar, members)
    except (tarfile.TarError, EOFError, OSError) as err:
        raise InputError(p, f"not a readable .tgz package ({type(err).__name__})") from None


def _the_csv(p: Path, tar: tarfile.TarFile, members: list[tarfile.TarInfo]) -> tuple[str, bytes]:
    files = [m for m in members if not m.isdir()]
    odd = [m.name for m in files if not m.isreg()]
    if odd:
        raise InputError(p, f"package member {odd[0]!r} is a link or special file; it must hold the CSV only")
    csvs = [m for m in files if m.name.lower().endswith(".csv")]
    if len(files) != 1 or len(csvs) != 1:
        names = ", ".join(m.name for m in files[:5]) or "nothing"
        raise InputError(p, f"a package holds exactly one system output .csv, found: {names}")
    m = csvs[0]
    name = PurePosixPath(m.name)
    if name.is_absolute() or ".." in name.parts:
        raise InputError(p, f"package member {m.name!r} points outside the archive")
    if m.size > MAX_MEMBER_BYTES:
        raise InputError(p, f"{m.name} is larger than {MAX_MEMBER_BYTES >> 20} MiB")
    fh = tar.extractfile(m)
    if fh is None:
        raise InputError(p, f"{m.name} cannot be read")
    data = fh.read(MAX_MEMBER_BYTES + 1)
    if len(data) > MAX_MEMBER_BYTES:
        raise InputError(p, f"{m.name} is larger than {MAX_MEMBER_BYTES >> 20} MiB")
    return m.name, data
