"""The former name of :mod:`pingce.history` (the run history), kept so that code written against
it (``from pingce.store import record_run``) keeps working. New code imports
:mod:`pingce.history`."""

from . import history
from .history import *  # noqa: F403

__all__ = history.__all__
