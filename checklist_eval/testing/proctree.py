"""Resident memory of a process and all its descendants, read from Linux's /proc: what a drill or a
benchmark measures of a CLI run that starts parse workers (the child's own peak misses them)."""

from __future__ import annotations

import os

PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (every thread's list: a child is filed under the thread that forked it)."""
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out += [int(c) for c in fh.read().split()]
        except OSError:
            continue
    return out


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * PAGE_KB
    except (OSError, IndexError, ValueError):
        return 0  # the process ended between listing and reading


def descendants(root: int) -> list[int]:
    """``root`` and every process below it, as listed now."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += _children(pid)
    return found


def tree_rss_kb(root: int) -> tuple[int, int]:
    """(resident kB summed over ``root`` and all its descendants, number of processes)."""
    pids = descendants(root)
    return sum(_rss_kb(pid) for pid in pids), len(pids)
