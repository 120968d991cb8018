"""The adversary: planted errors and misleading checklists (``attack``), and the assessor measured
as a detector of them (``evaluation``, ``attack_eval``)."""
