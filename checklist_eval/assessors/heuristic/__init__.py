"""The offline judge (``assessor.HeuristicAssessor``): its rules (``rules``, ``contradictions``, reading a
justification with negation scope in ``negation``) and the evidence state it reports (``state``), over what
``assessors.evidence`` reads of the paper."""
