"""Reading: paper sources (folders, archives, lone files) -> a parsed Paper with its checklist.

``sources`` opens what the author handed in, ``latex``/``pdf`` read it, ``checklists`` holds the
questions as data and assembles the answers, ``parsing`` is the one entry (``load_paper``) and
``isolation`` runs it in a worker process with a time and memory budget.
Imports only the shared types above it; never an assessor or a challenge module.
"""
