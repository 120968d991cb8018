"""Opening what a user hands us: a file, a project folder, a .zip or tar archive, or the members of a
submission archive, as a :class:`FileTree` of text files read in memory.

This layer knows files, not LaTeX: which file of a tree a document starts from is decided by the
caller (:func:`pick_root` takes the caller's choice), and reading the files as LaTeX is
:mod:`checklist_eval.reading.latex`'s part.

Archives are hostile until proven safe. They are read in memory, member by member, never extracted;
any member that could escape a folder (absolute path, ``..``, a link, a device) rejects the whole
archive, and the size limits below are enforced while reading, so a lying header or a compression bomb
stops at the limit instead of filling memory.
"""

from __future__ import annotations

import codecs
import io
import os
import posixpath
import re
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO

from checklist_eval.errors import InputError, UnsafeArchiveError
from checklist_eval.models import ParseWarning, WarningKind
from checklist_eval.reading.filekind import kind_by_content, kind_by_name, not_a_paper

# Limits for archives (and for single files, which have the member limit). Stated in the README.
MAX_MEMBER_BYTES = 50 * 1024 * 1024
MAX_TOTAL_BYTES = 200 * 1024 * 1024
MAX_MEMBERS = 5000
# Uncompressed/compressed size above which a member counts as a compression bomb; only checked for
# members big enough to matter, since a tiny file of repeated characters legitimately compresses well.
MAX_COMPRESSION_RATIO = 200
RATIO_CHECK_MIN_BYTES = 1024 * 1024
_READ_CHUNK = 1024 * 1024
# Parsing holds about 20 times the LaTeX it reads; real papers are far below this (a long main.tex
# is under 1 MB), so it only stops inputs built to exhaust memory.
MAX_TEX_BYTES = 8 * 1024 * 1024  # one .tex file
# A tar's pax or GNU long-name header holds a path and a few attributes: tarfile reads it whole before
# the member it describes, so it is capped before it is read. Headers per member are counted too (a
# chain of pax headers is read recursively).
MAX_TAR_HEADER_BYTES = 1024 * 1024
MAX_TAR_HEADERS = 4 * MAX_MEMBERS

# Files worth reading out of a project: sources \input can name. Images and nested archives are left
# alone (a nested archive is never opened).
TEXT_SUFFIXES = (".tex", ".ltx", ".sty", ".cls", ".bbl", ".txt", ".def", ".cfg", ".tikz")

_PDF_MAGIC = b"%PDF-"
_ZIP_MAGIC = b"PK\x03\x04"
_EMPTY_ZIP_MAGIC = b"PK\x05\x06"
_GZIP_MAGIC = b"\x1f\x8b"


# --- what kind of input ---------------------------------------------------------------------------


def input_kind(path: str | Path) -> str:
    """``"pdf"``, ``"zip"``, ``"tar"``, ``"folder"`` or ``"tex"``, from the content (magic bytes)
    rather than the name, so a PDF called paper.tex is still read as a PDF. What ``filekind`` knows is
    not a paper (a Word document, an image...) is refused in its words. Anything but a folder or
    a regular file (a FIFO, a device, a socket) is refused before it is opened."""
    path = Path(path)
    if path.is_dir():
        return "folder"
    head = read_regular(path, 512, "file", whole=False)
    if not head:
        raise InputError(path, "empty file")
    if head.startswith(_PDF_MAGIC):
        return "pdf"
    other = kind_by_name(path.name) or kind_by_content(head)  # a .docx is a zip, but not of a LaTeX project
    if other:
        raise InputError(path, not_a_paper(other))
    if head.startswith((_ZIP_MAGIC, _EMPTY_ZIP_MAGIC)):
        return "zip"
    if head.startswith(_GZIP_MAGIC) or head[257:262] == b"ustar" or _looks_like_tar(path):
        return "tar"
    if path.suffix.lower() == ".pdf":
        raise InputError(path, "named .pdf but is not a PDF file")
    if path.suffix.lower() == ".zip":
        raise InputError(path, "named .zip but is not a zip archive")
    return "tex"


def read_regular(path: Path, limit: int, what: str, *, whole: bool = True) -> bytes:
    """The bytes of a regular file, at most ``limit`` of them: larger files are refused (``whole``)
    or cut (a sniff). The type is checked before opening (a FIFO would block, /dev/zero never ends)
    and again on the open descriptor, which is opened non-blocking in case it changed in between."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(path, "no such file or folder") from None
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror or err}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(path, "not a regular file (a device, FIFO or socket); not read")
    if whole and st.st_size > limit:
        raise InputError(path, f"{what} larger than {limit // 2**20} MB")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror or err}") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(path, "not a regular file (a device, FIFO or socket); not read")
        data = fh.read(limit + 1 if whole else limit)
    if len(data) > limit:  # it grew after the stat
        raise InputError(path, f"{what} larger than {limit // 2**20} MB")
    return data


def _looks_like_tar(path: Path) -> bool:
    name = path.name.lower()
    if not name.endswith((".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tgz", ".tar.gz")):
        return False
    try:
        return tarfile.is_tarfile(path)
    except OSError:
        return False


# --- decoding -------------------------------------------------------------------------------------


def decode_tex(data: bytes, name: str, warnings: list[ParseWarning]) -> str:
    """Bytes of a .tex file to text: UTF-8 (BOM ok), else latin-1 with a warning; CRLF folded."""
    if len(data) > MAX_TEX_BYTES:
        raise InputError(name, f"LaTeX file larger than {MAX_TEX_BYTES // 2**20} MB")
    if not data.strip():
        raise InputError(name, "empty file")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        # A Windows editor's "Unicode": TeX engines would not read it, but its text is clear.
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            raise InputError(name, "UTF-16 file that is not valid UTF-16") from None
        warnings.append(ParseWarning(kind=WarningKind.ENCODING, location=name,
                                     message=f"{name}: UTF-16 encoded (TeX expects UTF-8); decoded as UTF-16"))
        return text.replace("\r\n", "\n").replace("\r", "\n")
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        raise InputError(name, "UTF-32 encoded: unsupported encoding (save the file as UTF-8)")
    if b"\x00" in data:
        raise InputError(name, "binary file (contains NUL bytes), not LaTeX source")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
        warnings.append(ParseWarning(kind=WarningKind.ENCODING, location=name,
                                     message=f"{name}: not valid UTF-8; decoded as latin-1"))
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --- file trees: a name -> text view over a folder, an archive or a lone file -----------------------


class FileTree:
    """The text files of one input, addressed by normalised relative POSIX paths and read in memory.
    Each file is read and decoded once, however often the reader asks for it."""

    def __init__(self, label: str, names: list[str], reader: Callable[[str], bytes | None],
                 contains: Callable[[str], bool] | None = None):
        self.label = label
        self.names = names
        self._reader = reader
        self._text: dict[str, str] = {}
        self._known = set(names)
        self._contains = contains  # files beyond ``names`` found on demand (a lone file's folder)
        self.warnings: list[ParseWarning] = []  # decoding warnings, one per file, whoever read it first

    def exists(self, name: str) -> bool:
        return name in self._known or (self._contains is not None and self._contains(name))

    def seed(self, name: str, text: str) -> None:
        """A file already read and decoded by the caller."""
        self._text[name] = text

    def data(self, name: str) -> bytes | None:
        """A file's bytes as stored (what TeX reads), or None when it cannot be read."""
        return self._reader(name)

    def text(self, name: str) -> str:
        if name not in self._text:
            data = self._reader(name)
            if data is None:
                raise InputError(f"{self.label}/{name}", "cannot read file")
            self._text[name] = decode_tex(data, f"{self.label}/{name}", self.warnings)
        return self._text[name]


def _folder_tree(folder: Path) -> FileTree:
    root = folder.resolve()
    names = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            # A link could point anywhere on the disk; only files really inside the folder are read.
            try:
                path.resolve().relative_to(root)
            except ValueError:
                continue
        if path.suffix.lower() in TEXT_SUFFIXES and path.is_file():  # is_file: regular files only
            names.append(path.relative_to(root).as_posix())
        if len(names) > MAX_MEMBERS:
            raise InputError(folder, f"more than {MAX_MEMBERS} source files")

    def read(name: str) -> bytes | None:
        path = (root / name).resolve()
        try:
            path.relative_to(root)
        except ValueError:
            return None
        return read_regular(path, MAX_TEX_BYTES, "LaTeX file")

    return FileTree(str(folder), names, read)


def is_absolute(name: str) -> bool:
    """A POSIX, UNC or Windows drive path: never relative to the project, whatever the platform."""
    return name.startswith(("/", "\\")) or re.match(r"^[a-zA-Z]:", name) is not None


def _safe_member_name(archive: Path, name: str) -> str:
    """The member's normalised path, or UnsafeArchiveError when it could land outside the folder."""
    if not name or "\x00" in name:
        raise UnsafeArchiveError(archive, "archive member with an empty or invalid name")
    if is_absolute(name):
        raise UnsafeArchiveError(archive, f"archive member has an absolute path: {name!r}")
    parts = re.split(r"[\\/]+", name)
    if ".." in parts:
        raise UnsafeArchiveError(archive, f"archive member escapes the folder: {name!r}")
    return posixpath.normpath("/".join(p for p in parts if p not in ("", "."))) or "."


def _read_capped(stream: IO[bytes], limit: int, archive: Path, name: str) -> bytes:
    """Read at most ``limit`` bytes; one byte more means the member is too big (headers can lie).
    Chunked into one buffer: a single large read() of a zip member concatenates its pieces and
    can hold several copies of the data at once."""
    data = bytearray()
    while chunk := stream.read(min(_READ_CHUNK, limit + 1 - len(data))):
        data += chunk
        if len(data) > limit:
            raise UnsafeArchiveError(archive, f"archive member {name!r} is larger than {limit // 2**20} MB")
    return bytes(data)


def _is_tar(path: Path, data: bytes | None) -> bool:
    try:
        if data is not None:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r|*") as tf:
                return tf.next() is not None
        return tarfile.is_tarfile(path)
    except (tarfile.TarError, OSError, EOFError, zlib.error):
        return False


def _refuse_duplicates(path: Path, names: list[str], dirs: set[str]) -> None:
    """Two members of one name (only one could be read, and which one is the tool's guess), two whose
    names differ only in case (one file on macOS and Windows, so which one a LaTeX run reads depends on
    the author's disk) or a file where the archive also has a folder of that name."""
    seen: set[str] = set()
    folded: dict[str, str] = {}
    for name in names:
        if name in seen:
            raise UnsafeArchiveError(path, f"archive has duplicate members named {name!r}")
        other = folded.setdefault(name.casefold(), name)
        if other != name:
            raise UnsafeArchiveError(path, f"archive has duplicate members whose names differ only in case: "
                                           f"{other!r} and {name!r}")
        seen.add(name)
    for name in names:
        parents = posixpath.dirname(name)
        while parents:
            if parents in seen:
                raise UnsafeArchiveError(path, f"archive has a file and a folder both named {parents!r}")
            parents = posixpath.dirname(parents)
    clash = seen & dirs
    if clash:
        raise UnsafeArchiveError(path, f"archive has a file and a folder both named {sorted(clash)[0]!r}")


def read_zip_members(path: Path, keep: Callable[[str], bool] = lambda name: True,
                     data: bytes | None = None) -> dict[str, bytes]:
    """The regular files of a zip whose normalised names pass ``keep``, read in memory (never
    extracted to disk) under the member, total and compression-ratio limits. Every member's name and
    type is checked, kept or not, so an archive with one hostile member is rejected whole."""
    zf, infos = _open_zip(path, data)
    files: dict[str, bytes] = {}
    declared_total = 0
    read_total = 0
    names = [_safe_member_name(path, info.filename) for info in infos]
    _refuse_duplicates(path, [n for n, i in zip(names, infos, strict=True) if not i.is_dir()],
                       {n for n, i in zip(names, infos, strict=True) if i.is_dir()})
    with zf:
        for info in infos:
            name = _safe_member_name(path, info.filename)
            _refuse_zip_link_or_device(path, info)
            if info.is_dir():
                continue
            declared_total += info.file_size
            _check_declared_size(path, name, info.file_size, info.compress_size, declared_total)
            if not keep(name):
                continue
            # Headers can lie: the read itself is capped too.
            files[name] = _read_zip_member(zf, info, path, name, min(MAX_MEMBER_BYTES, MAX_TOTAL_BYTES - read_total))
            read_total += len(files[name])
    return files


def _open_zip(path: Path, data: bytes | None) -> tuple[zipfile.ZipFile, list[zipfile.ZipInfo]]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data) if data is not None else path)
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        if _is_tar(path, data):
            raise InputError(path, "named .zip but is a tar archive; name it .tar or .tar.gz") from None
        raise InputError(path, f"unreadable zip archive: {err}") from None
    if len(infos) > MAX_MEMBERS:
        raise UnsafeArchiveError(path, f"archive has more than {MAX_MEMBERS} members")
    return zf, infos


def _refuse_zip_link_or_device(path: Path, info: zipfile.ZipInfo) -> None:
    mode = info.external_attr >> 16
    # writestr() leaves the file-type bits at 0, so only a positively identified link or device is refused.
    if stat.S_ISLNK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode):
        raise UnsafeArchiveError(path, f"archive member {info.filename!r} is a link or device")


def _read_zip_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, name: str, limit: int) -> bytes:
    try:
        with zf.open(info) as stream:
            return _read_capped(stream, limit, path, name)
    except (zipfile.BadZipFile, RuntimeError, OSError, EOFError, NotImplementedError, zlib.error) as err:
        raise InputError(path, f"unreadable zip member {name!r}: {err}") from None


def _check_declared_size(path: Path, name: str, size: int, compressed: int, total: int) -> None:
    if size > MAX_MEMBER_BYTES:
        raise UnsafeArchiveError(path, f"archive member {name!r} is larger than {MAX_MEMBER_BYTES // 2**20} MB")
    if total > MAX_TOTAL_BYTES:
        raise UnsafeArchiveError(path, f"archive unpacks to more than {MAX_TOTAL_BYTES // 2**20} MB")
    if size >= RATIO_CHECK_MIN_BYTES and size > MAX_COMPRESSION_RATIO * max(compressed, 1):
        raise UnsafeArchiveError(path, f"archive member {name!r} has a compression ratio typical of a zip bomb")


def _zip_tree(path: Path, data: bytes | None = None) -> FileTree:
    files = read_zip_members(path, keep=lambda name: name.lower().endswith(TEXT_SUFFIXES), data=data)
    return FileTree(str(path), sorted(files), files.get)


class _OversizeHeader(Exception):
    """A tar header over the caps, seen before tarfile reads it (tarfile lets it through unchanged)."""


class _CappedTarInfo(tarfile.TarInfo):
    """tarfile's header reader, refusing a pax or GNU long-name header larger than
    MAX_TAR_HEADER_BYTES (tarfile would read it whole, before any member limit applies) and a stream of
    more than MAX_TAR_HEADERS headers."""

    def _proc_member(self, tarfile):
        count = getattr(tarfile, "_headers_seen", 0) + 1
        tarfile._headers_seen = count
        if count > MAX_TAR_HEADERS:
            raise _OversizeHeader(f"archive has more than {MAX_TAR_HEADERS} headers")
        if self.type in _LONG_HEADER_TYPES and self.size > MAX_TAR_HEADER_BYTES:
            raise _OversizeHeader(f"archive has an extended (pax or long-name) header of {self.size} bytes "
                                  f"(more than {MAX_TAR_HEADER_BYTES // 2**20} MB)")
        return super()._proc_member(tarfile)


_LONG_HEADER_TYPES = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
                      tarfile.GNUTYPE_LONGLINK)


def _open_tar_stream(path: Path, data: bytes | None) -> tarfile.TarFile:
    try:
        return tarfile.open(path if data is None else None, mode="r|*", tarinfo=_CappedTarInfo,
                            fileobj=io.BytesIO(data) if data is not None else None)
    except TypeError:  # a gzip header cut short: tarfile calls ord() on the missing byte
        raise InputError(path, "unreadable archive (truncated or corrupt): gzip header cut short") from None


def _tar_tree(path: Path, data: bytes | None = None) -> FileTree:
    files: dict[str, bytes] = {}
    total = 0
    names: list[str] = []
    dirs: set[str] = set()
    try:
        # Streaming mode: one pass over the decompressed data; a skipped member is still counted.
        with _open_tar_stream(path, data) as tf:
            for count, member in enumerate(tf, start=1):
                name = _checked_tar_member(path, member, count)
                if member.isdir():
                    dirs.add(name)
                if not member.isfile():
                    continue
                names.append(name)
                total += member.size
                # The ratio check needs the compressed size, known only for the whole stream (below).
                _check_declared_size(path, name, member.size, member.size, total)
                stream = tf.extractfile(member) if name.lower().endswith(TEXT_SUFFIXES) else None
                if stream is not None:
                    files[name] = _read_capped(stream, MAX_MEMBER_BYTES, path, name)
    except _OversizeHeader as err:
        raise UnsafeArchiveError(path, str(err)) from None
    except tarfile.TarError as err:
        raise InputError(path, f"unreadable tar archive (truncated or corrupt): {err}") from None
    except (OSError, EOFError, zlib.error) as err:
        raise InputError(path, f"unreadable archive (truncated or corrupt): {err}") from None
    _refuse_duplicates(path, names, dirs)
    compressed = len(data) if data is not None else path.stat().st_size
    if total >= RATIO_CHECK_MIN_BYTES and total > MAX_COMPRESSION_RATIO * max(compressed, 1):
        raise UnsafeArchiveError(path, "archive has a compression ratio typical of a decompression bomb")
    return FileTree(str(path), sorted(files), files.get)


def _checked_tar_member(path: Path, member: tarfile.TarInfo, count: int) -> str:
    """The normalised name of the ``count``-th member, or UnsafeArchiveError for one too many, a
    name that escapes the folder, a link or a device."""
    if count > MAX_MEMBERS:
        raise UnsafeArchiveError(path, f"archive has more than {MAX_MEMBERS} members")
    name = _safe_member_name(path, member.name)
    if member.issym() or member.islnk():
        raise UnsafeArchiveError(path, f"archive member {member.name!r} is a link")
    if member.isdev() or member.isfifo():
        raise UnsafeArchiveError(path, f"archive member {member.name!r} is a device")
    return name


# --- opening an input as a tree, and its root ---------------------------------------------------


def open_tree(path: Path, kind: str) -> FileTree:
    """A folder, zip or tar (``kind`` from :func:`input_kind`) as a tree of its text files."""
    if kind == "folder":
        return _folder_tree(path)
    if kind == "zip":
        return _zip_tree(path)
    if kind == "tar":
        return _tar_tree(path)
    raise InputError(path, f"not a folder or an archive ({kind})")


def open_file_tree(path: Path) -> FileTree:
    """A lone file, read and decoded now, in a tree with its folder's files: those are only looked at
    when the reader asks for one, so pointing the tool at a file in a big folder does not read the
    folder. A file the folder holds through a link to elsewhere is not there."""
    warnings: list[ParseWarning] = []
    text = decode_tex(read_regular(path, MAX_TEX_BYTES, "LaTeX file"), str(path), warnings)
    folder = path.resolve().parent
    name = path.name

    def sibling(rel: str) -> Path | None:
        # A name the system refuses (longer than a file name may be) is a file that is not there.
        try:
            target = (folder / rel).resolve()
            target.relative_to(folder)
            return target if target.is_file() else None
        except (ValueError, OSError):
            return None

    def read(rel: str) -> bytes | None:  # never asked for the file itself: it is seeded below
        target = sibling(rel)
        return None if target is None else read_regular(target, MAX_TEX_BYTES, "LaTeX file")

    tree = FileTree(str(path.parent), [name], read, contains=lambda rel: rel == name or sibling(rel) is not None)
    tree.seed(name, text)
    tree.warnings.extend(warnings)
    return tree


def tree_from_members(label: str, name: str, is_dir: bool, members: dict[str, bytes]) -> FileTree:
    """A paper held in memory (an entry of a submission archive): a folder of members, one member,
    or a nested .zip/.tar member (opened from its bytes, like any archive)."""
    if is_dir:
        texts = {n: d for n, d in members.items() if n.lower().endswith(TEXT_SUFFIXES)}
        return FileTree(label, sorted(texts), texts.get)
    data = members[name]
    low = name.lower()
    if data.startswith((_ZIP_MAGIC, _EMPTY_ZIP_MAGIC)) or low.endswith(".zip"):
        return _zip_tree(Path(label), data)
    if data.startswith(_GZIP_MAGIC) or data[257:262] == b"ustar" or low.endswith((".tar.gz", ".tgz")):
        return _tar_tree(Path(label), data)
    return FileTree(label, [name], {name: data}.get)


def pick_root(tree: FileTree, root: str | None, choose: Callable[[FileTree], str]) -> str:
    """The file of ``tree`` a document starts from: the one the user named (``--root``), else the
    caller's ``choose``, which knows what a document's first file looks like."""
    if not root:
        return choose(tree)
    name = root.replace("\\", "/").removeprefix("./")
    if name not in tree.names:
        raise InputError(tree.label, f"--root {root}: no such .tex file in this project")
    return name
