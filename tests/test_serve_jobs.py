"""The author's page runs an offline check off the server's event loop: the heuristic's rules are CPU work
(seconds for a long paper), and while they run the server must keep answering pages, uploads and progress
polls (issue 43, item 7). Asserted on where the work runs, not on how fast: no verdict here races the clock."""

from __future__ import annotations

import asyncio
import shutil
import threading
from pathlib import Path

from checklist_eval.assessors.heuristic.assessor import HeuristicAssessor
from checklist_eval.web.jobs import Checker, ServeSettings

PAPER = Path(__file__).resolve().parents[1] / "fixtures" / "submissions" / "team-alpha" / "genuine_sga.tex"


def test_an_offline_check_is_judged_and_rendered_off_the_event_loop(tmp_path, monkeypatch):
    threads: set[int] = set()
    judge = HeuristicAssessor.assess_item

    async def recording(self, paper, item):  # our own assessor, watched: which thread judges each answer
        threads.add(threading.get_ident())
        return await judge(self, paper, item)

    monkeypatch.setattr(HeuristicAssessor, "assess_item", recording)

    async def upload_and_wait():
        checker = Checker(ServeSettings(jobs=1, queue=1))
        try:
            folder = checker.new_folder()
            shutil.copy(PAPER, folder / PAPER.name)
            job = checker.submit(folder, [PAPER.name], "heuristic")
            while not job.finished:
                await asyncio.sleep(0.05)  # the loop is free: this poll is what a progress page does
            return job, threading.get_ident()
        finally:
            checker.close()

    job, loop_thread = asyncio.run(upload_and_wait())
    assert job.status == "done", job.error
    assert job.html and "<!DOCTYPE html>" in job.html and job.document is not None
    assert len(job.states) == 16 and set(job.states.values()) <= {"supported", "unverified", "contradicted"}
    assert threads and loop_thread not in threads
