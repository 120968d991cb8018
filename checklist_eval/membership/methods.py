"""The names of the membership scores, apart from the numpy code that computes them
(``contamination``): every CLI command registers its flags at start-up, and ``contamination --methods``
lists these, so naming them must not load numpy for a command that never scores a text."""

METHODS = ("slope", "slope_ngram", "slope_mean", "slope_z", "min_k", "min_k_pp")
