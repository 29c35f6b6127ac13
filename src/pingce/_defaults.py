"""Defaults shared by the command line (which shows them in its help before it imports anything
heavy) and :class:`pingce.options.RunOptions`: one home for each."""

from __future__ import annotations

__all__ = ["BOOTSTRAP_METHODS", "DEFAULT_SIMILARITY"]

DEFAULT_SIMILARITY = "lexical"
"""``--similarity`` of ``pingce run``, ``pingce compare`` and ``pingce calibrate``: offline, fast,
a pair's score depends on the pair alone."""

BOOTSTRAP_METHODS = ("multinomial", "poisson")
"""``--bootstrap-method`` of ``pingce run`` and ``pingce compare``, the default first
(:data:`pingce.stats.BootstrapMethod`)."""
