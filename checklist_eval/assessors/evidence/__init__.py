"""What a paper shows, below both judges: the body's facts and numbered places (``body``), its passages ranked
against a question (``relevance``, BM25; ``passages``, ``addressing``), a paper over the context cut per
question (``excerpts``), quotes found or not (``quotes``), what a question is about (``topics``) and the
signs that a paper steers its assessor (``manipulation``, ``normalise``)."""
