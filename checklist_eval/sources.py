"""Opening what a user hands us: a .tex file, a project folder, a .zip or tar archive, or a PDF.

The LaTeX side ends in one string: the root file's live text with every ``\\input``, ``\\include`` and
``\\subfile`` inlined (dead code removed first, so a commented-out ``% \\input{checklist}`` stays out).

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from checklist_eval.errors import InputError, UnsafeArchiveError
from checklist_eval.latex import find_region, strip_dead
from checklist_eval.models import ParseWarning, WarningKind

# Limits for archives (and for single files, which have the member limit). Stated in the README.
MAX_MEMBER_BYTES = 50 * 1024 * 1024
MAX_TOTAL_BYTES = 200 * 1024 * 1024
MAX_MEMBERS = 5000
# Uncompressed/compressed size above which a member counts as a compression bomb; only checked for
# members big enough to matter, since a tiny file of repeated characters legitimately compresses well.
MAX_COMPRESSION_RATIO = 200
RATIO_CHECK_MIN_BYTES = 1024 * 1024
MAX_INPUT_DEPTH = 32
_READ_CHUNK = 1024 * 1024
# Parsing holds about 20 times the LaTeX it reads; real papers are far below these (a long main.tex
# is under 1 MB), so they only stop inputs built to exhaust memory.
MAX_TEX_BYTES = 8 * 1024 * 1024  # one .tex file
MAX_SOURCE_CHARS = 16 * 1024 * 1024  # the whole document once every \input is resolved
MAX_LISTED_ROOTS = 10  # candidates named when a folder holds several papers

# Files worth reading out of a project: sources \input can name. Images and nested archives are left
# alone (a nested archive is never opened).
TEXT_SUFFIXES = (".tex", ".ltx", ".sty", ".cls", ".bbl", ".txt", ".def", ".cfg", ".tikz")

_PDF_MAGIC = b"%PDF-"
_ZIP_MAGIC = b"PK\x03\x04"
_EMPTY_ZIP_MAGIC = b"PK\x05\x06"
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass
class LatexSource:
    """A LaTeX document flattened into one live string."""

    source: str  # what the user named, for messages and Paper.source
    root: str  # the root file inside the project ("main.tex")
    text: str  # live LaTeX: dead code removed, inputs inlined
    warnings: list[ParseWarning] = field(default_factory=list)

    @property
    def is_fragment(self) -> bool:
        """True for a standalone snippet (a checklist.tex on its own) rather than a whole document."""
        return "\\begin{document}" not in self.text


# --- what kind of input ---------------------------------------------------------------------------


def input_kind(path: str | Path) -> str:
    """``"pdf"``, ``"zip"``, ``"tar"``, ``"folder"`` or ``"tex"``, from the content (magic bytes)
    rather than the name, so a PDF called paper.tex is still read as a PDF. Anything but a folder or
    a regular file (a FIFO, a device, a socket) is refused before it is opened."""
    path = Path(path)
    if path.is_dir():
        return "folder"
    head = read_regular(path, 512, "file", whole=False)
    if not head:
        raise InputError(path, "empty file")
    if head.startswith(_PDF_MAGIC):
        return "pdf"
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


_ENDINPUT = re.compile(r"\\endinput(?![a-zA-Z@])")
_LATEX_HINT = re.compile(r"\\[a-zA-Z]{2,}")


def _require_latex(text: str, name: str) -> None:
    if not _LATEX_HINT.search(text):
        raise InputError(name, "not LaTeX (no LaTeX commands) and not a PDF")


# --- projects: a name -> bytes view over a folder or an archive -----------------------------------


class _Project:
    """Files of a LaTeX project addressed by normalised relative POSIX paths. Each file is decoded and
    stripped of dead code once, however often root detection and \\input resolution ask for it."""

    def __init__(self, label: str, names: list[str], reader: Callable[[str], bytes | None]):
        self.label = label
        self.names = names
        self._reader = reader
        self._raw: dict[str, str] = {}
        self._live: dict[str, str] = {}
        self._known = set(names)
        self.warnings: list[ParseWarning] = []  # decoding warnings, one per file, whoever read it first

    def exists(self, name: str) -> bool:
        return name in self._known

    def seed(self, name: str, text: str) -> None:
        """A file already read and decoded by the caller."""
        self._raw[name] = text

    def text(self, name: str) -> str:
        if name not in self._raw:
            data = self._reader(name)
            if data is None:
                raise InputError(f"{self.label}/{name}", "cannot read file")
            self._raw[name] = decode_tex(data, f"{self.label}/{name}", self.warnings)
        return self._raw[name]

    def live(self, name: str) -> str:
        """The file without comments, \\iffalse blocks and comment environments, and nothing after
        an ``\\endinput`` (TeX finishes that line and stops reading the file)."""
        if name not in self._live:
            live = strip_dead(self.text(name))
            end = _ENDINPUT.search(live)
            if end is not None:
                line_end = live.find("\n", end.end())
                live = live[: end.start()] + (live[end.end() : line_end] if line_end >= 0 else live[end.end() :])
            self._live[name] = live
        return self._live[name]


def _folder_project(folder: Path) -> _Project:
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

    return _Project(str(folder), names, read)


def _is_absolute(name: str) -> bool:
    """A POSIX, UNC or Windows drive path: never relative to the project, whatever the platform."""
    return name.startswith(("/", "\\")) or re.match(r"^[a-zA-Z]:", name) is not None


def _safe_member_name(archive: Path, name: str) -> str:
    """The member's normalised path, or UnsafeArchiveError when it could land outside the folder."""
    if not name or "\x00" in name:
        raise UnsafeArchiveError(archive, "archive member with an empty or invalid name")
    if _is_absolute(name):
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
    """Two members of one name (only one could be read, and which one is the tool's guess) or a file
    where the archive also has a folder of that name."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise UnsafeArchiveError(path, f"archive has two members named {name!r}")
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
    try:
        zf = zipfile.ZipFile(io.BytesIO(data) if data is not None else path)
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        if _is_tar(path, data):
            raise InputError(path, "named .zip but is a tar archive; name it .tar or .tar.gz") from None
        raise InputError(path, f"unreadable zip archive: {err}") from None
    if len(infos) > MAX_MEMBERS:
        raise UnsafeArchiveError(path, f"archive has more than {MAX_MEMBERS} members")
    files: dict[str, bytes] = {}
    declared_total = 0
    read_total = 0
    names = [_safe_member_name(path, info.filename) for info in infos]
    _refuse_duplicates(path, [n for n, i in zip(names, infos, strict=True) if not i.is_dir()],
                       {n for n, i in zip(names, infos, strict=True) if i.is_dir()})
    with zf:
        for info in infos:
            name = _safe_member_name(path, info.filename)
            mode = info.external_attr >> 16
            # writestr() leaves the file-type bits at 0, so only a positively identified link or
            # device is refused.
            if stat.S_ISLNK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode):
                raise UnsafeArchiveError(path, f"archive member {info.filename!r} is a link or device")
            if info.is_dir():
                continue
            declared_total += info.file_size
            _check_declared_size(path, name, info.file_size, info.compress_size, declared_total)
            if not keep(name):
                continue
            try:
                with zf.open(info) as stream:
                    # Headers can lie: the read itself is capped too.
                    limit = min(MAX_MEMBER_BYTES, MAX_TOTAL_BYTES - read_total)
                    data = _read_capped(stream, limit, path, name)
            except (zipfile.BadZipFile, RuntimeError, OSError, EOFError, NotImplementedError, zlib.error) as err:
                raise InputError(path, f"unreadable zip member {name!r}: {err}") from None
            read_total += len(data)
            files[name] = data
    return files


def _check_declared_size(path: Path, name: str, size: int, compressed: int, total: int) -> None:
    if size > MAX_MEMBER_BYTES:
        raise UnsafeArchiveError(path, f"archive member {name!r} is larger than {MAX_MEMBER_BYTES // 2**20} MB")
    if total > MAX_TOTAL_BYTES:
        raise UnsafeArchiveError(path, f"archive unpacks to more than {MAX_TOTAL_BYTES // 2**20} MB")
    if size >= RATIO_CHECK_MIN_BYTES and size > MAX_COMPRESSION_RATIO * max(compressed, 1):
        raise UnsafeArchiveError(path, f"archive member {name!r} has a compression ratio typical of a zip bomb")


def _zip_project(path: Path, data: bytes | None = None) -> _Project:
    files = read_zip_members(path, keep=lambda name: name.lower().endswith(TEXT_SUFFIXES), data=data)
    return _Project(str(path), sorted(files), files.get)


def _tar_project(path: Path, data: bytes | None = None) -> _Project:
    files: dict[str, bytes] = {}
    total = 0
    count = 0
    names: list[str] = []
    dirs: set[str] = set()
    try:
        # Streaming mode: one pass over the decompressed data; a skipped member is still counted.
        with tarfile.open(path if data is None else None, mode="r|*",
                          fileobj=io.BytesIO(data) if data is not None else None) as tf:
            for member in tf:
                count += 1
                if count > MAX_MEMBERS:
                    raise UnsafeArchiveError(path, f"archive has more than {MAX_MEMBERS} members")
                name = _safe_member_name(path, member.name)
                if member.issym() or member.islnk():
                    raise UnsafeArchiveError(path, f"archive member {member.name!r} is a link")
                if member.isdev() or member.isfifo():
                    raise UnsafeArchiveError(path, f"archive member {member.name!r} is a device")
                if member.isdir():
                    dirs.add(name)
                if not member.isfile():
                    continue
                names.append(name)
                total += member.size
                # The ratio check needs the compressed size, known only for the whole stream (below).
                _check_declared_size(path, name, member.size, member.size, total)
                if not name.lower().endswith(TEXT_SUFFIXES):
                    continue
                stream = tf.extractfile(member)
                if stream is not None:
                    files[name] = _read_capped(stream, MAX_MEMBER_BYTES, path, name)
    except tarfile.TarError as err:
        raise InputError(path, f"unreadable tar archive: {err}") from None
    except (OSError, EOFError, zlib.error) as err:
        raise InputError(path, f"unreadable archive (truncated or corrupt): {err}") from None
    _refuse_duplicates(path, names, dirs)
    compressed = len(data) if data is not None else path.stat().st_size
    if total >= RATIO_CHECK_MIN_BYTES and total > MAX_COMPRESSION_RATIO * max(compressed, 1):
        raise UnsafeArchiveError(path, "archive has a compression ratio typical of a decompression bomb")
    return _Project(str(path), sorted(files), files.get)


# --- root file and \input resolution --------------------------------------------------------------

# Bounded repeats: an unclosed "[" in each of many \\documentclass lines must not rescan the file.
_DOCCLASS = re.compile(r"\\documentclass\s*(?:\[[^\]]{0,4000}\])?\s*\{([^}]{0,500})\}")
_BEGIN_DOC = "\\begin{document}"
_END_DOC = "\\end{document}"
_INPUT = re.compile(
    r"\\(?P<cmd>input|include|subfile|import|subimport|subfileinclude)\*?(?![a-zA-Z@])\s*"
    r"(?:\{(?P<dir>[^{}]*)\}\s*\{(?P<file2>[^{}]*)\}|\{(?P<file>[^{}]*)\}|(?P<bare>[^\s{}\\%]+))"
)


def _candidates(name: str, base_dirs: list[str]) -> list[str]:
    """Project paths an \\input argument may refer to, nearest first, never outside the project."""
    out = []
    for base in base_dirs:
        joined = posixpath.normpath(posixpath.join(base, name)) if base else posixpath.normpath(name)
        if joined.startswith("../") or joined == ".." or joined.startswith("/"):
            continue
        out.append(joined)
        if not joined.lower().endswith(".tex"):
            out.append(joined + ".tex")
    return out


class _Flattener:
    def __init__(self, project: _Project, root: str, warnings: list[ParseWarning]):
        self.project = project
        self.root_dir = posixpath.dirname(root)
        self.warnings = warnings
        self.label = f"{project.label}/{root}"
        self.inlined = 0  # characters pulled in by \input so far: a file included 1000 times counts 1000 times

    def flatten(self, name: str, stack: tuple[str, ...] = ()) -> str:
        text = self.project.live(name)
        if stack and _BEGIN_DOC in text and _DOCCLASS.search(text):
            # A \subfile'd file is a document of its own; only its body belongs to the parent.
            start = text.index(_BEGIN_DOC) + len(_BEGIN_DOC)
            end = text.find(_END_DOC, start)
            text = text[start : end if end >= 0 else len(text)]
        elif _END_DOC in text:
            text = text[: text.index(_END_DOC) + len(_END_DOC)]
        stack = stack + (name,)
        return _INPUT.sub(lambda m: self._inline(m, name, stack), text)

    def _skip(self, current: str, message: str) -> None:
        self.warnings.append(ParseWarning(kind=WarningKind.INPUT_SKIPPED, message=message, location=current))

    def _inline(self, match: re.Match, current: str, stack: tuple[str, ...]) -> str:
        cmd = match["cmd"]
        target = (match["file"] or match["file2"] or match["bare"] or "").strip()
        if not target:
            return match.group(0)
        if cmd in ("import", "subimport"):
            directory = (match["dir"] or "").strip()
            base = posixpath.dirname(current) if cmd == "subimport" else self.root_dir
            target = posixpath.join(base, directory, target)
            bases = [""]
        else:
            bases = [self.root_dir, posixpath.dirname(current)]
        if _is_absolute(target):
            self._skip(current, f"{current}: \\{cmd}{{{target}}} points outside the project; skipped")
            return ""
        found = next((c for c in _candidates(target, bases) if self.project.exists(c)), None)
        if found is None:
            if any(posixpath.normpath(posixpath.join(b, target)).startswith("..") for b in bases):
                self._skip(current, f"{current}: \\{cmd}{{{target}}} points outside the project; skipped")
            elif not target.lower().endswith((".bbl", ".sty", ".cls", ".pdf", ".png", ".pgf")):
                self._skip(current, f"{current}: \\{cmd}{{{target}}}: file not found; skipped")
            return ""
        if found in stack:
            self._skip(current, f"{current}: \\{cmd}{{{target}}} includes itself (cycle); skipped")
            return ""
        if len(stack) >= MAX_INPUT_DEPTH:
            self._skip(current, f"{current}: inputs nested deeper than {MAX_INPUT_DEPTH}; skipped")
            return ""
        body = self.flatten(found, stack)
        self.inlined += len(body)
        if self.inlined > MAX_SOURCE_CHARS:
            raise InputError(self.label, f"document larger than {MAX_SOURCE_CHARS // 2**20} MB once its "
                             "\\input files are resolved")
        return f"\n{body}\n" if cmd in ("include", "subfile") else body


def _is_root(live: str) -> bool:
    return bool(_DOCCLASS.search(live)) and _BEGIN_DOC in live


def _has_checklist(live: str) -> bool:
    # The parser's own notion of a live checklist, so root choice and parsing can never disagree.
    return find_region(live) is not None


def _choose_root(project: _Project, warnings: list[ParseWarning]) -> str:
    tex_names = [n for n in project.names if n.lower().endswith((".tex", ".ltx"))]
    if not tex_names:
        raise InputError(project.label, "no .tex file found")
    roots = [n for n in tex_names if _is_root(project.live(n))]
    if len(roots) == 1:
        return roots[0]
    if roots:
        # Several documents (main.tex and an old draft, a paper and its supplement): prefer the one
        # whose live content really pulls the checklist in, then the conventional name, then depth.
        # Several documents that each carry a live checklist are several papers: guessing one would
        # silently judge the wrong paper, so the user names it.
        checked = {n: _has_checklist(_Flattener(project, n, []).flatten(n)) for n in roots}
        _refuse_several_papers(project.label, [n for n in roots if checked[n]])

        def rank(name: str) -> tuple[int, int, int, str]:
            return (
                0 if checked[name] else 1,
                0 if posixpath.basename(name).lower() == "main.tex" else 1,
                name.count("/"),
                name,
            )

        return min(roots, key=rank)
    if len(tex_names) == 1:
        return tex_names[0]
    with_checklist = [n for n in tex_names if _has_checklist(project.live(n))]
    if with_checklist:
        chosen = min(with_checklist, key=lambda n: (n.count("/"), n))
        warnings.append(ParseWarning(
            kind=WarningKind.ROOT_CHOICE, location=chosen,
            message=f"{project.label}: no root file (\\documentclass + \\begin{{document}}); reading {chosen}"))
        return chosen
    raise InputError(project.label, "no root file (\\documentclass + \\begin{document}) found")


def _refuse_several_papers(label: str, candidates: list[str]) -> None:
    if len(candidates) < 2:
        return
    shown = sorted(candidates)[:MAX_LISTED_ROOTS]
    more = f" and {len(candidates) - len(shown)} more" if len(candidates) > len(shown) else ""
    raise InputError(label, f"holds {len(candidates)} papers with a checklist ({', '.join(shown)}{more}): "
                            "name one with --root FILE, or keep one paper per folder")


def _named_root(project: _Project, root: str) -> str:
    name = root.replace("\\", "/").removeprefix("./")
    if name not in project.names:
        raise InputError(project.label, f"--root {root}: no such .tex file in this project")
    return name


def _load_project(project: _Project, source: str, root: str | None = None) -> LatexSource:
    warnings: list[ParseWarning] = []
    root = _named_root(project, root) if root else _choose_root(project, warnings)
    text = _Flattener(project, root, warnings).flatten(root)
    _require_latex(text, f"{project.label}/{root}")
    return LatexSource(source=source, root=root, text=text, warnings=project.warnings + warnings)


def load_tex_file(path: Path) -> LatexSource:
    """A single .tex file (document or fragment); inputs resolve against its folder's files."""
    warnings: list[ParseWarning] = []
    data = read_regular(path, MAX_TEX_BYTES, "LaTeX file")
    text = decode_tex(data, str(path), warnings)
    _require_latex(text, str(path))
    folder = path.resolve().parent
    name = path.name

    def sibling(rel: str) -> Path | None:
        """The file ``rel`` names, if it really lies inside the folder (a link may point anywhere)."""
        target = (folder / rel).resolve()
        try:
            target.relative_to(folder)
        except ValueError:
            return None
        return target if target.is_file() else None

    def read(rel: str) -> bytes | None:  # never asked for the file itself: it is seeded below
        target = sibling(rel)
        return None if target is None else read_regular(target, MAX_TEX_BYTES, "LaTeX file")

    class _Lazy(_Project):
        # A lone file's siblings are only looked at when an \input names them, so pointing the tool
        # at a .tex in a big folder does not read the whole folder.
        def exists(self, rel: str) -> bool:
            return rel == name or sibling(rel) is not None

    project = _Lazy(str(path.parent), [name], read)
    project.seed(name, text)
    flat = _Flattener(project, name, warnings).flatten(name)
    return LatexSource(source=str(path), root=name, text=flat, warnings=warnings + project.warnings)


def load_latex(path: str | Path, root: str | None = None) -> LatexSource:
    """Any LaTeX input (file, folder, zip, tar) as one flattened live string. ``root`` names the main
    .tex file of a project (a folder or archive holding several papers must name one)."""
    path = Path(path)
    kind = input_kind(path)
    if kind == "pdf":
        raise InputError(path, "is a PDF, not LaTeX source")
    if kind == "folder":
        return _load_project(_folder_project(path), str(path), root)
    if kind == "zip":
        return _load_project(_zip_project(path), str(path), root)
    if kind == "tar":
        return _load_project(_tar_project(path), str(path), root)
    return load_tex_file(path)


def latex_from_members(label: str, name: str, is_dir: bool, members: dict[str, bytes]) -> LatexSource:
    """A LaTeX paper held in memory: a folder of members, one .tex member, or a nested .zip/.tar
    member (opened from its bytes, like any project archive)."""
    if is_dir:
        texts = {n: d for n, d in members.items() if n.lower().endswith(TEXT_SUFFIXES)}
        return _load_project(_Project(label, sorted(texts), texts.get), label)
    data = members[name]
    low = name.lower()
    if data.startswith((_ZIP_MAGIC, _EMPTY_ZIP_MAGIC)) or low.endswith(".zip"):
        return _load_project(_zip_project(Path(label), data), label)
    if data.startswith(_GZIP_MAGIC) or data[257:262] == b"ustar" or low.endswith((".tar.gz", ".tgz")):
        return _load_project(_tar_project(Path(label), data), label)
    project = _Project(label, [name], {name: data}.get)
    _require_latex(project.text(name), label)
    return _load_project(project, label)
