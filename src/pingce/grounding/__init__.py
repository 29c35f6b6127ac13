"""Grounding checks of cited evidence: is a cited clause in its source text, are its legal
details unchanged, does a cited law article exist (used by :mod:`pingce.metrics.evidence`)."""
