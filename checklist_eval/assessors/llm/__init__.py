"""The model judge (``assessor.LLMAssessor``) over any OpenAI-compatible endpoint (``checklist_eval.endpoint``):
the verdict it asks for and how a reply is read (``verdict``), what the reply is bound by (``grammar``), the
probability reported with it (``confidence``) and its grading by its quotes (``grading``); the prompt files and
messages (``prompts``, ``messages``, the heuristic's findings as ``facts``). The objects the assessor holds:
a paper fitted to the window (``fitting``), a question's request (``requests``), spending and identical requests
in flight (``spending``), the engine asked what it is (``engine``); one question's requests and re-asks
(``asking``). A dry run's plan (``dryrun``) and a provider batch's answers replayed (``batch_replay``).
Nothing is imported here, so ``--help`` stays fast."""
