"""The challenge: submissions (G/A/T), scores (C, R, S), records, batches, reports, exports, Codabench.

Built on reading (papers) and assessors (verdicts); never imported by either.
"""
