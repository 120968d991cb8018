"""The NIST GenAI submission package (evaluation plan, section 5.2.2): a gzipped tar holding the system
output CSV, as ``tar zcvf SUBMISSION.tgz SYSOUT.csv`` makes it.

Reading one never extracts anything: the archive must hold exactly one regular ``.csv`` member (no
links, devices or folders in the way, no path outside the archive), at most :data:`MAX_MEMBER_BYTES`
large, and it is streamed out of the archive as it is checked, never held in memory whole.
"""

from __future__ import annotations

import io
import tarfile
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO

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
    """(member name, bytes) of the one CSV in a submission package (in memory: small packages only;
    validation and scoring stream the member with ``open_member``)."""
    with _opened(path) as (tar, member), _extracted(path, tar, member) as fh:
        return member.name, fh.read(MAX_MEMBER_BYTES + 1)


def member_name(path: str | Path) -> str:
    """The name of the one CSV in a submission package (nothing is decompressed past the headers)."""
    with _opened(path) as (_, member):
        return member.name


@contextmanager
def open_member(path: str | Path) -> Iterator[io.TextIOBase]:
    """The package's CSV as UTF-8 text, streamed out of the archive (never held in memory whole)."""
    try:
        with _opened(path) as (tar, member), _extracted(path, tar, member) as fh, \
                io.TextIOWrapper(fh, encoding="utf-8-sig", newline="") as text:
            yield text
    except (tarfile.TarError, EOFError, zlib.error) as err:
        raise InputError(path, f"not a readable .tgz package ({type(err).__name__})") from None


@contextmanager
def _opened(path: str | Path) -> Iterator[tuple[tarfile.TarFile, tarfile.TarInfo]]:
    p = Path(path)
    if not p.is_file():
        raise InputError(p, "file not found")
    try:
        tar = tarfile.open(p, mode="r:*")
    except (tarfile.TarError, EOFError, OSError) as err:
        raise InputError(p, f"not a readable .tgz package ({type(err).__name__})") from None
    with tar:
        try:
            members = []
            for k, m in enumerate(tar):
                if k >= MAX_MEMBERS:
                    raise InputError(p, f"more than {MAX_MEMBERS} archive members")
                members.append(m)
        except (tarfile.TarError, EOFError, OSError, zlib.error) as err:
            raise InputError(p, f"not a readable .tgz package ({type(err).__name__})") from None
        yield tar, _the_csv(p, members)


@contextmanager
def _extracted(path: str | Path, tar: tarfile.TarFile, member: tarfile.TarInfo) -> Iterator[IO[bytes]]:
    fh = tar.extractfile(member)
    if fh is None:
        raise InputError(path, f"{member.name} cannot be read")
    with fh:
        yield fh


def _the_csv(p: Path, members: list[tarfile.TarInfo]) -> tarfile.TarInfo:
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
    if m.size > MAX_MEMBER_BYTES:  # the member's own size: tarfile reads no more than it declares
        raise InputError(p, f"{m.name} is larger than {MAX_MEMBER_BYTES >> 20} MiB")
    return m
