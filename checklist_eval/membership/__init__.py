"""Membership inference: has the assessor's model memorised a paper? The perplexity-slope method
(``slope``), Min-K%/Min-K%++, and the endpoints' token log-probabilities that feed them."""
