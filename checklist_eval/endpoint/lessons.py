"""What the response cache remembers about each (endpoint, model): the capabilities learned from its
refusals, each with its evidence, and the first clean answer (``assessors.quirks.EndpointQuirks.remembered``,
kept in the ``capabilities`` table). ``checklist-eval endpoints`` lists them; ``endpoints forget`` clears
them, so the next run asks the endpoint afresh.

The functions take an open SQLite connection to the cache file (the door that checks the file is the
caller's), read only what they show and never the responses themselves.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from checklist_eval.endpoint.identity import endpoint_identity

__all__ = ["EndpointRecord", "forget", "records"]


@dataclass
class EndpointRecord:
    endpoint: str
    model: str
    updated: float
    strategy: str | None = None
    answered: float | None = None  # when the first clean answer came (the first question no longer goes alone)
    lessons: list[dict[str, Any]] = field(default_factory=list)  # {"lesson", "status", "said", "when"}
    verdicts: int = 0  # cached verdicts of this (endpoint, model)

    def to_dict(self) -> dict[str, Any]:
        return {"endpoint": self.endpoint, "model": self.model, "updated": self.updated, "strategy": self.strategy,
                "answered": self.answered, "lessons": self.lessons, "cached_verdicts": self.verdicts}


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() is not None


def _lessons(saved: dict[str, Any]) -> list[dict[str, Any]]:
    """Each lesson with its evidence; a lesson stored before evidence was kept says so."""
    evidence = {e.get("lesson"): e for e in saved.get("evidence") or [] if isinstance(e, dict)}
    out = []
    for lesson in saved.get("learned") or []:
        if isinstance(lesson, str):
            out.append(evidence.get(lesson) or {"lesson": lesson, "said": "(no evidence kept: an older run)"})
    return out


def records(db: sqlite3.Connection) -> list[EndpointRecord]:
    """Every (endpoint, model) the cache knows, by endpoint then model."""
    counts: dict[tuple[str, str], int] = {}
    if _has_table(db, "responses"):
        counts = {(e, m): n for e, m, n in db.execute(
            "SELECT endpoint, model, COUNT(*) FROM responses GROUP BY endpoint, model")}
    rows = db.execute("SELECT endpoint, model, updated, quirks_json FROM capabilities ORDER BY endpoint, model") \
        if _has_table(db, "capabilities") else []
    out: dict[tuple[str, str], EndpointRecord] = {}
    for endpoint, model, updated, blob in rows:
        try:
            saved = json.loads(blob)
        except ValueError:
            saved = {}
        saved = saved if isinstance(saved, dict) else {}
        answered = saved.get("answered")
        out[(endpoint, model)] = EndpointRecord(
            endpoint, model, float(updated), strategy=saved.get("strategy") if isinstance(saved.get("strategy"), str)
            else None, answered=float(answered) if isinstance(answered, (int, float)) else None,
            lessons=_lessons(saved), verdicts=counts.get((endpoint, model), 0))
    for (endpoint, model), n in counts.items():  # verdicts of an endpoint whose lessons were never kept
        out.setdefault((endpoint, model), EndpointRecord(endpoint, model, 0.0, verdicts=n))
    return [out[k] for k in sorted(out)]


def forget(db: sqlite3.Connection, base_url: str, model: str | None = None) -> int:
    """Clear what was learned about ``base_url`` (every model, or ``model``); the cached verdicts stay (they are
    answers, not lessons). The number of (endpoint, model) entries cleared."""
    if not _has_table(db, "capabilities"):
        return 0
    endpoint = endpoint_identity(base_url)
    if model is None:
        cur = db.execute("DELETE FROM capabilities WHERE endpoint=?", (endpoint,))
    else:
        cur = db.execute("DELETE FROM capabilities WHERE endpoint=? AND model=?", (endpoint, model))
    db.commit()
    return cur.rowcount
