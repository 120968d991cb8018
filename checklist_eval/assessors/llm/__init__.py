"""The model judge (``assessor.LLMAssessor``) over any OpenAI-compatible endpoint (``checklist_eval.endpoint``):
the verdict it asks for and how a reply is read (``verdict``), the prompt files and messages (``prompts``,
``messages``, the heuristic's findings as ``facts``), fitting a paper to the window (``fitting``), spending and
the call log (``spending``), one question's requests (``asking``), a dry run's plan (``dryrun``) and a provider
batch's answers replayed (``batch_replay``). Nothing is imported here, so ``--help`` stays fast."""
