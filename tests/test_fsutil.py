"""Atomic writes: complete or absent, and readable like any file the user writes."""

from __future__ import annotations

import stat

from checklist_eval.fsutil import atomic_write_text, remove_stale_temps


def test_atomic_write_replaces_whole_file_with_umask_permissions(tmp_path):
    target = atomic_write_text(tmp_path / "sub" / "leaderboard.csv", "rank,S\n1,0.5\n")
    atomic_write_text(target, "rank,S\n1,0.25\n")
    plain = tmp_path / "plain.csv"
    plain.write_text("x")  # what an ordinary write gives under this process's umask
    assert target.read_text() == "rank,S\n1,0.25\n"
    assert stat.S_IMODE(target.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode) != 0o600
    assert [p.name for p in target.parent.iterdir()] == ["leaderboard.csv"]  # no temp file left


def test_remove_stale_temps_keeps_final_files(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / ".result.json.x1.tmp").write_text("{")
    (tmp_path / "a" / "result.json").write_text("{}")
    assert remove_stale_temps(tmp_path) == 1
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["result.json"]
