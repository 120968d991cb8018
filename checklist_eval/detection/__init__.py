"""Detection scoring: NIST GenAI discriminator files and packages, TrojAI's log score, and the
metrics (ROC, AUC, pAUC, DET, EER, Brier, bootstrap intervals) they share."""
