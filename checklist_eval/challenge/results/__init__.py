"""A batch results folder (``batch --out RESULTS``), owned here: nothing outside this package reads or
writes its files by name.

    folder.py       ResultsFolder: the one reader (what opening checks, scores with the appeals applied,
                    the leaderboard, what an appeal rewrites, --new-settings' move aside)
    layout.py       the file names
    lock.py         the run's lock, a folder that cannot be written
    settings.py     run_settings.json and the check a rerun passes
    ledger.py       records.csv / records.jsonl: read, grown by a batch, written
    appeals.py      overrides files, and the decisions kept in overrides.jsonl
    outputs.py      result.json and a submission's outputs
    leaderboard.py  leaderboard rows, ranking, failures.jsonl

Import the modules themselves (this file imports nothing, so that importing one of them never runs
the others).
"""
