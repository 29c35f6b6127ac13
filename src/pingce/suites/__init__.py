"""Suites: YAML files that bind record fields to metrics; the built-in ones live here."""

from .build import BuiltSuite, builtin_suites, load_suite
from .spec import SuiteSpec

__all__ = ["BuiltSuite", "SuiteSpec", "builtin_suites", "load_suite"]
