"""Challenge submissions: a folder or .zip holding papers named by role.

    genuine_*            G, the genuine paper with an honest checklist (always required)
    adversarial_*        A, a copy with planted errors and a misleading checklist
    truth_adversarial_*  T, A's paper with honest answers

Each paper is a ``.tex`` file, a LaTeX project folder, a ``.zip``/``.tar.gz``/``.tgz`` project or a
``.pdf``. Cases: ``G`` (G alone), ``GT`` (G and T; A is then T's paper carrying G's checklist, as the
2024 challenge did) and ``GAT``. A without T, T without G or two papers of one role are invalid.

A .zip submission is read with the safe archive reader of :mod:`checklist_eval.reading.sources`, in memory;
each paper is parsed from its members' bytes, never extracted to disk.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Protocol

from checklist_eval.challenge.results.layout import SUBMISSIONS_DIR, ResultsLayout
from checklist_eval.errors import InputError
from checklist_eval.models import Case, Paper, Role
from checklist_eval.reading.filekind import is_paper_name, kind_by_name, name_problem, not_a_paper

# Checked with startswith on the lower-cased name. "truth_adversarial_x" does not start with
# "adversarial_", but the order still puts the longest prefix first so that a future "contains"
# match cannot silently turn T into A.
ROLE_PREFIXES: tuple[tuple[str, Role], ...] = (
    ("truth_adversarial_", "T"),
    ("adversarial_", "A"),
    ("genuine_", "G"),
)
ROLE_WORDS = {"G": "genuine", "A": "adversarial", "T": "truth-adversarial"}
_IGNORED = re.compile(r"^(\.|__MACOSX$|Thumbs\.db$|desktop\.ini$)", re.I)


def role_of(name: str) -> Role | None:
    """The role a file or folder name claims, from its prefix; None for any other name."""
    low = name.lower()
    for prefix, role in ROLE_PREFIXES:
        if low.startswith(prefix) and len(low) > len(prefix):
            return role
    return None


MAX_ID_CHARS = 64  # a results folder's name, with room for the temp names written inside it


def submission_id_of(path: Path) -> str:
    """Folder name, or archive name without its suffix; made safe for a results folder name. A longer
    name keeps its first characters and gets a digest of the whole name: two 255-character names
    (the longest a file system allows, too long for the temp files beside their results) that differ
    only in case or at the end get two ids, both short enough to write."""
    name = given_name_of(path)
    # accents come off their letters ("Équipe Zoé" -> "Equipe_Zoe"), not the letters off the name
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", _without_accents(name)).strip("._") or "submission"
    if len(safe) <= MAX_ID_CHARS:
        return safe
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"{safe[: MAX_ID_CHARS - len(digest) - 1].rstrip('._-')}-{digest}"


def given_name_of(path: Path) -> str:
    """The submission's name as its team gave it (any Unicode): the folder's name, or the archive's
    without its suffix. Shown beside the safe id, which files and URLs use."""
    name = path.name
    for suffix in sorted(UPLOAD_SUFFIXES, key=len, reverse=True):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _without_accents(name: str) -> str:
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))


def given_name(source: str, sid: str) -> str:
    """The name as given of submission ``sid``, read from a path under it (a record's or a failure's
    source); "" when no part of the path is that submission's (a source written by another tool)."""
    for part in reversed(Path(source).parts):
        safe = submission_id_of(Path(part))
        if sid == safe or sid.startswith(safe + "-"):
            return given_name_of(Path(part))
    return ""


@dataclass
class PaperEntry:
    role: Role
    name: str  # entry name inside the submission, e.g. "genuine_paper" or "genuine_paper.tex"
    is_dir: bool
    path: Path | None = None  # on disk (folder submissions)
    members: dict[str, bytes] | None = None  # archive submissions: relative path -> content


@dataclass
class Submission:
    """A submission whose naming and role counts are valid (papers not parsed yet)."""

    id: str
    path: Path
    entries: dict[Role, PaperEntry]
    warnings: list[str] = field(default_factory=list)

    @property
    def case(self) -> Case:
        roles = set(self.entries)
        return "GAT" if "A" in roles else ("GT" if "T" in roles else "G")


@dataclass
class LoadedSubmission:
    """Parsed papers of a submission, one per role of its case (GT: A is derived from G and T)."""

    id: str
    case: Case
    papers: dict[Role, Paper]
    warnings: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------ discovery


def _strip_wrapper(names: list[str], is_dir: Callable[[str], bool]) -> str:
    """A zip often wraps everything in one folder ("team42/genuine_x.tex"): look inside it."""
    visible = [n for n in names if not _IGNORED.match(n)]
    if len(visible) == 1 and is_dir(visible[0]) and role_of(visible[0]) is None:
        return visible[0]
    return ""


def _classify(entries: list[tuple[str, bool]], where: Path) -> tuple[dict[Role, list[str]], list[str], list[str]]:
    """Sort top-level (name, is_dir) entries into roles; return (roles, errors, warnings)."""
    roles: dict[Role, list[str]] = {}
    errors: list[str] = []
    warnings: list[str] = []
    for name, is_dir in sorted(entries):
        if _IGNORED.match(name):
            continue
        role = role_of(name)
        if role is None:
            if is_dir or is_paper_name(name):
                errors.append(
                    f"{name!r} is not named genuine_*, adversarial_* or truth_adversarial_*"
                )
            else:
                warnings.append(f"ignored {name!r} (not a paper)")
            continue
        if not is_dir and (problem := name_problem(name)):
            errors.append(f"{name!r}: {problem}")
            continue
        roles.setdefault(role, []).append(name)
    for role, names in roles.items():
        if len(names) > 1:
            errors.append(f"more than one {ROLE_WORDS[role]} paper: {', '.join(names)}")
    if "G" not in roles:
        errors.append("no genuine_* paper (every submission needs G)")
    if "A" in roles and "T" not in roles:
        errors.append("adversarial_* paper without truth_adversarial_* (A needs its T)")
    return roles, errors, warnings


def _raise_if(errors: list[str], path: Path) -> None:
    if errors:
        raise InputError(path, "; ".join(errors))


def _is_results_folder(folder: Path) -> bool:
    """A folder this tool wrote results into (``score SUB --out SUB/results``, the README's own
    example): on the next run it is not a paper of the submission."""
    return folder.is_dir() and any((folder / name).is_file() for name in RESULT_MARKERS)


RESULT_MARKERS = ("result.json", "records.csv", "records.jsonl", "summary.json", "results.sqlite")


def _children(base: Path) -> list[tuple[str, bool]]:
    return [(c.name, c.is_dir()) for c in base.iterdir() if role_of(c.name) or not _is_results_folder(c)]


def _open_folder(path: Path) -> Submission:
    base = path
    children = _children(base)
    wrapper = _strip_wrapper([n for n, _ in children], lambda n: (base / n).is_dir())
    if wrapper:
        base = base / wrapper
        children = _children(base)
    roles, errors, warnings = _classify(children, path)
    _raise_if(errors, path)
    entries = {
        role: PaperEntry(role=role, name=names[0], is_dir=(base / names[0]).is_dir(), path=base / names[0])
        for role, names in roles.items()
    }
    return Submission(id=submission_id_of(path), path=path, entries=entries, warnings=warnings)


def _open_zip(path: Path) -> Submission:
    from checklist_eval.reading.sources import read_zip_members

    # Every member, not only LaTeX text: a submission also carries PDFs and nested project archives.
    members = read_zip_members(path)
    parts = {name: PurePosixPath(name).parts for name in members}
    top_dirs = {p[0] for p in parts.values() if len(p) > 1}
    tops = sorted({p[0] for p in parts.values()})
    wrapper = _strip_wrapper(tops, lambda n: n in top_dirs)
    if wrapper:
        parts = {n: p[1:] for n, p in parts.items() if p[0] == wrapper and len(p) > 1}
    top_entries = sorted({(p[0], len(p) > 1) for p in parts.values() if p})
    roles, errors, warnings = _classify(top_entries, path)
    _raise_if(errors, path)
    entries: dict[Role, PaperEntry] = {}
    for role, names in roles.items():
        name = names[0]
        is_dir = (name, True) in top_entries
        sub = {
            "/".join(p[1:]) if is_dir else p[0]: members[n]
            for n, p in parts.items()
            if p and p[0] == name and (len(p) > 1) == is_dir
        }
        entries[role] = PaperEntry(role=role, name=name, is_dir=is_dir, members=sub)
    return Submission(id=submission_id_of(path), path=path, entries=entries, warnings=warnings)


def open_submission(path: str | Path) -> Submission:
    """Check a submission's naming and role counts (papers are not parsed); InputError when invalid."""
    path = Path(path)
    if path.is_dir():
        return _open_folder(path)
    if path.is_file() and path.name.lower().endswith(".zip"):
        return _open_zip(path)
    if not path.exists():
        raise InputError(path, "submission not found")
    if path.is_file() and path.name.lower().endswith(UPLOAD_SUFFIXES):
        raise InputError(path, "a submission upload must be a .zip file (or a folder); this archive format is "
                               "not accepted: re-upload it as .zip")
    if kind_by_name(path.name):  # a Word document given where a paper or a submission was expected
        raise InputError(path, not_a_paper(kind_by_name(path.name) or ""))
    raise InputError(path, "a submission is a folder or a .zip file of genuine_/adversarial_/truth_adversarial_ papers")


UPLOAD_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar", ".gz", ".rar", ".7z", ".bz2", ".xz", ".tar.zst")


def find_submissions(root: str | Path) -> list[Path]:
    """Submissions under a batch ROOT: its sub-folders and uploads (.zip files, and archives of other
    formats, which fail with a reason), sorted by name."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(root, "batch root is not a folder")
    # An upload in another archive format is listed too: opening it fails with one line, so the batch
    # reports it among the failures instead of skipping it without a word.
    found = [
        p
        for p in sorted(root.iterdir())
        if not _IGNORED.match(p.name) and (p.is_dir() or (p.is_file() and p.name.lower().endswith(UPLOAD_SUFFIXES)))
        and not is_results_folder(p)
    ]
    direct = [p.name for p in root.iterdir() if role_of(p.name)]
    if direct:
        raise InputError(
            root,
            f"holds papers directly ({', '.join(sorted(direct)[:3])}): it is one submission; "
            "use `checklist-eval score` or put it in a sub-folder",
        )
    if not found:
        raise InputError(root, "no submissions (sub-folders or .zip files) found")
    return found


def is_results_folder(path: Path) -> bool:
    """A folder this tool wrote as ``--out``: known by its database (or, written before the database,
    by its ledger beside its submissions' folder). A folder holding papers is a submission, whatever
    else it holds (a stray run_settings.json does not hide one)."""
    if not path.is_dir():
        return False
    try:
        if any(role_of(child.name) for child in path.iterdir()):
            return False
    except OSError:
        return False
    layout = ResultsLayout(path)
    return layout.db.is_file() or (layout.records_file() is not None and (path / SUBMISSIONS_DIR).is_dir())


def results_folders_in(root: str | Path) -> list[Path]:
    """The results folders kept in a batch ROOT (``--out`` inside it): skipped, not submissions."""
    root = Path(root)
    return [p for p in sorted(root.iterdir()) if not _IGNORED.match(p.name) and is_results_folder(p)]


# ------------------------------------------------------------------------------------------- loading


class PaperLoader(Protocol):
    """Parses a paper from disk or from memory: in this process, or in an isolated worker."""

    def load_paper(self, path: Path) -> Paper: ...

    def load_entry(self, label: str, name: str, is_dir: bool, members: dict[str, bytes]) -> Paper: ...


def _check_inside(entry: PaperEntry, sub: Submission) -> None:
    """A paper that is a link out of the submission is refused unread."""
    assert entry.path is not None
    try:
        entry.path.resolve().relative_to(sub.path.resolve())
    except ValueError:
        raise InputError(f"{sub.path}/{entry.name}", "is a link to outside the submission; not read") from None


def _load_entry(entry: PaperEntry, sub: Submission, loader: PaperLoader) -> Paper:
    if entry.members is not None:
        # Archive submissions are parsed from memory, never extracted.
        return loader.load_entry(f"{sub.path}!{entry.name}", entry.name, entry.is_dir, entry.members)
    _check_inside(entry, sub)
    assert entry.path is not None  # an entry has members (archive) or a path (folder)
    return loader.load_paper(entry.path)


GT_SOURCE_JOIN = " (with the checklist of "


def gt_adversarial_source(t_source: str, g_source: str) -> str:
    """The source recorded for a GT submission's A: T's paper, named with G's checklist."""
    return f"{t_source}{GT_SOURCE_JOIN}{g_source})"


def gt_adversarial(g: Paper, t: Paper) -> Paper:
    """Case GT: A is T's paper (body, sections, anchors) carrying G's checklist answers.

    A was never parsed on its own, so it has no parser warnings: T's (and G's) are reported once,
    under T (and G), rather than a second time under A.
    """
    return t.model_copy(
        update={
            "checklist": g.checklist.model_copy(deep=True),
            "source": gt_adversarial_source(t.source, g.source),
            "warnings": [],
        }
    )


def load_submission(sub: Submission | str | Path, *, submission_id: str | None = None,
                    loader: PaperLoader | None = None) -> LoadedSubmission:
    """Parse every paper of a valid submission; InputError names the paper that fails.

    ``submission_id`` overrides the id taken from the submission's name (a batch disambiguates
    "team1/" and "team1.zip" this way). ``loader`` parses each paper: a pool of isolated workers
    (the CLI passes its own, with the user's limits); without one, a worker under the default limits,
    so every caller (the Codabench scoring program too) parses through the same door.
    """
    if not isinstance(sub, Submission):
        sub = open_submission(sub)
    if loader is None:
        from checklist_eval.reading.isolation import ParserPool

        with ParserPool(1) as pool:
            return load_submission(sub, submission_id=submission_id, loader=pool)
    papers: dict[Role, Paper] = {role: _load_entry(e, sub, loader) for role, e in sorted(sub.entries.items())}
    warnings = list(sub.warnings)
    if sub.case == "GT":
        papers["A"] = gt_adversarial(papers["G"], papers["T"])
    if "A" in papers and papers["A"].checklist.id != papers["T"].checklist.id:
        what = "G (whose checklist A carries)" if sub.case == "GT" else "A"
        raise InputError(
            sub.path,
            f"{what} uses checklist {papers['A'].checklist.id} but T uses {papers['T'].checklist.id}; "
            "A and T must share a checklist version",
        )
    if papers["G"].checklist.id != papers.get("T", papers["G"]).checklist.id:
        warnings.append(
            f"G uses checklist {papers['G'].checklist.id}, T uses {papers['T'].checklist.id}"
        )
    return LoadedSubmission(id=submission_id or sub.id, case=sub.case, papers=papers, warnings=warnings)
