"""logbook: an append-only, hash-chained, signed logbook for LLM benchmark runs."""

__version__ = "0.1.0"
