"""A LaTeX project's files, written into the parse worker's temporary folder for TeX to compile.

TeX compiles a copy, never the user's folder: a document may ``\\openout`` files, and its auxiliary
files must not land beside the author's sources. What is copied is bounded like everything a
participant hands in (the archive limits of :mod:`checklist_eval.reading.sources`), links that leave
the folder are not followed, and dot files (``.git``) are left out.

The copy's digest (every file's path and bytes, and which file is the root) keys the compile cache.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from checklist_eval.errors import InputError
from checklist_eval.reading import sources

MAX_FILES = sources.MAX_MEMBERS
MAX_BYTES = sources.MAX_TOTAL_BYTES
MAX_FILE_BYTES = sources.MAX_MEMBER_BYTES


class TooLarge(Exception):
    """The project is over the copy's bounds: TeX is not run on it (the source reader reads it)."""


class Files:
    """A project as relative POSIX paths -> bytes, read once, within the bounds."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.total = 0

    def add(self, name: str, data: bytes) -> None:
        if len(self.data) >= MAX_FILES:
            raise TooLarge(f"more than {MAX_FILES} files")
        self.total += len(data)
        if self.total > MAX_BYTES:
            raise TooLarge(f"more than {MAX_BYTES // 2**20} MB of files")
        self.data[name] = data

    def text(self, name: str) -> str:
        return self.data.get(name, b"").decode("utf-8", "replace")

    def digest(self, root: str, *extra: str) -> str:
        h = hashlib.sha256()
        for part in (root, *extra):
            h.update(part.encode() + b"\0")
        for name in sorted(self.data):
            h.update(name.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(self.data[name]).digest())
        return h.hexdigest()

    def write(self, folder: Path) -> None:
        for name, data in self.data.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def _walk(folder: Path) -> Iterator[tuple[str, Path]]:
    """Regular files under ``folder`` (relative name, path), links out of it and dot files left out."""
    root = folder.resolve()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            if fn.startswith("."):
                continue
            path = Path(dirpath) / fn
            try:
                real = path.resolve()
                real.relative_to(root)
            except (ValueError, OSError):
                continue
            if real.is_file():
                yield path.relative_to(root).as_posix(), real


def from_folder(folder: Path) -> Files:
    files = Files()
    for name, path in _walk(folder):
        if path.stat().st_size > MAX_FILE_BYTES:
            continue  # a data file no document inputs whole; TeX reports it missing if one does
        try:
            files.add(name, sources.read_regular(path, MAX_FILE_BYTES, "file"))
        except InputError:
            continue
    return files


def from_path(path: Path) -> Files:
    """The files TeX needs to compile ``path`` (a .tex file: its folder's files; a folder; a .zip: all
    members; a tar: its text members, figures stood in for by graphicx's draft mode)."""
    kind = sources.input_kind(path)
    if kind == "tex":
        return from_folder(path.resolve().parent)
    if kind == "folder":
        return from_folder(path)
    files = Files()
    if kind == "zip":
        for name, data in sources.read_zip_members(path).items():
            files.add(name, data)
        return files
    tree = sources.open_tree(path, kind)
    for name in tree.names:
        files.add(name, tree.data(name) or b"")
    return files


def from_members(name: str, is_dir: bool, members: dict[str, bytes]) -> Files:
    """A paper held in memory (an entry of a submission archive)."""
    files = Files()
    if is_dir or not name.lower().endswith((".zip", ".tar", ".tgz", ".tar.gz")):
        for member, data in members.items():
            files.add(member, data)
        return files
    tree = sources.tree_from_members(name, name, False, members)
    for member in tree.names:
        files.add(member, tree.data(member) or b"")
    return files
